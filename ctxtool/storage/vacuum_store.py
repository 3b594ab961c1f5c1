"""Where ``vacuum`` keeps what it takes out: ``<store>/<session>/ctxtool-vacuum/``.

* ``<sha256>.bin``: removed bytes under their SHA-256 - the same bytes, however many lines or
  runs give them, are one file (a :class:`ctxtool.formats.vacuum.BlobKeeper`);
* ``recipe-<sha256 of the vacuumed file>.json``: how ``restore`` rebuilds the original
  (:mod:`ctxtool.core.vacuuming.recipe`).

The store is the one ``persist`` would use for the session (:func:`ctxtool.storage.store.
resolve_store`): for a Claude Code session in its projects folder, the session's own folder
beside its transcript; else ``ctxtool-store`` beside the file, or ``--store``. Every file is on
disk (storage/durable.py) before the vacuumed file replaces the original.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson

from ctxtool.errors import StoreError
from ctxtool.storage.store import VACUUM, ToolResultStore

_DIGEST = re.compile(r"[0-9a-f]{64}")
RECIPE_PREFIX = "recipe-"


class VacuumStore:
    """One session's vacuum folder in a store."""

    def __init__(self, store: ToolResultStore, session_id: str | None) -> None:
        self.store = store
        self.session_id = session_id

    @property
    def folder(self) -> str:
        return str(self.store.session_dir(self.session_id) / VACUUM)

    def keep(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        self.store.save_named(data, kind=VACUUM, name=f"{digest}.bin",
                              session_id=self.session_id)
        return digest

    def load(self, digest: str) -> bytes | None:
        if not _DIGEST.fullmatch(digest):
            raise StoreError(f"not a SHA-256 digest: {digest[:80]!r}", source=self.folder)
        data = self.store.read_named(kind=VACUUM, name=f"{digest}.bin",
                                     session_id=self.session_id)
        if data is not None and hashlib.sha256(data).hexdigest() != digest:
            raise StoreError(f"stored piece {digest[:16]}... is damaged", source=self.folder)
        return data

    def save_recipe(self, recipe: dict[str, Any]) -> str:
        name = f"{RECIPE_PREFIX}{recipe['vacuumed']['sha256']}.json"
        return self.store.save_named(orjson.dumps(recipe) + b"\n", kind=VACUUM, name=name,
                                     session_id=self.session_id)

    def recipes(self) -> list[dict[str, Any]]:
        """Every recipe kept for the session, parsed (files that are not JSON objects left
        out; the caller checks the rest)."""
        found = []
        for name in self.store.names(kind=VACUUM, session_id=self.session_id):
            if not name.startswith(RECIPE_PREFIX):
                continue
            data = self.store.read_named(kind=VACUUM, name=name, session_id=self.session_id)
            try:
                recipe = orjson.loads(data) if data is not None else None
            except orjson.JSONDecodeError:
                continue
            if isinstance(recipe, dict):
                found.append(recipe)
        return found
