"""Rows of a SQLite table as JSON, and put back exactly: what ctxtool keeps of the rows it
changes or removes in OpenCode's database (the backup of a write, the rows vacuum takes out).

A row is ``{column: value}`` with every column ``SELECT *`` gives, so columns a newer OpenCode
adds are kept too. Values are JSON's own (text, integers, reals, NULL); a BLOB, which OpenCode's
tables do not hold, is ``{"base64": ...}``. Putting rows back checks every table and column name
against the database (a row set is a file on disk: its names never reach SQL unchecked) and
writes each row as it was, all columns, in the caller's transaction.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ctxtool.errors import StoreError

if TYPE_CHECKING:
    import sqlite3

Row = dict[str, Any]


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({_quote(table)})")]


def select(conn: sqlite3.Connection, table: str, where: str, args: Iterable[Any]) -> list[Row]:
    """The rows of ``table`` matching ``where`` (SQL written by ctxtool), as JSON-ready dicts."""
    cursor = conn.execute(f"SELECT * FROM {_quote(table)} WHERE {where}", tuple(args))
    names = [d[0] for d in cursor.description]
    return [{name: _to_json(value) for name, value in zip(names, row)} for row in cursor]


def put_back(conn: sqlite3.Connection, table: str, row: Mapping[str, Any], source: str) -> bool:
    """Write ``row`` into ``table`` as it was: the row with its ``id`` updated in every column,
    or inserted when there is none. True when the row was there."""
    known = set(columns(conn, table))
    if not known:
        raise StoreError(f"the database has no table {table!r}", source=source)
    unknown = [name for name in row if name not in known]
    if unknown or "id" not in row:
        raise StoreError(f"a saved {table} row names columns the database lacks: "
                         f"{', '.join(unknown) or 'id'}", source=source)
    names = list(row)
    values = [_from_json(row[name], source) for name in names]
    quoted = [_quote(name) for name in names]
    exists = conn.execute(f"SELECT 1 FROM {_quote(table)} WHERE id = ?",
                          (row["id"],)).fetchone() is not None
    if exists:
        conn.execute(f"UPDATE {_quote(table)} SET {', '.join(f'{q} = ?' for q in quoted)} "
                     "WHERE id = ?", (*values, row["id"]))
    else:
        conn.execute(f"INSERT INTO {_quote(table)} ({', '.join(quoted)}) "
                     f"VALUES ({', '.join('?' * len(names))})", values)
    return exists


def delete(conn: sqlite3.Connection, table: str, ident: str) -> bool:
    """Remove the row ``ident`` of ``table`` (a row ctxtool added); True when it was there."""
    if not columns(conn, table):
        raise StoreError(f"the database has no table {table!r}")
    return conn.execute(f"DELETE FROM {_quote(table)} WHERE id = ?", (ident,)).rowcount > 0


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _to_json(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"base64": base64.b64encode(value).decode("ascii")}
    return value


def _from_json(value: Any, source: str) -> Any:
    if isinstance(value, dict) and set(value) == {"base64"}:
        return base64.b64decode(value["base64"])
    if value is None or isinstance(value, (str, int, float)):
        return value
    raise StoreError(f"a saved row holds a value no SQLite column takes: {str(value)[:60]}",
                     source=source)


__all__ = ["Row", "columns", "delete", "put_back", "select"]
