"""The tool-result store: where content goes before a transform takes it out of a transcript.

Layout (the same as Claude Code's own, so its Read tool and ``restore`` both find the files)::

    <root>/<session>/tool-results/<tool_use_id>.txt     a string, its exact UTF-8 bytes
    <root>/<session>/tool-results/<tool_use_id>.json    a block list, JSON indented by 2
    <root>/<session>/ctxtool-lines/<sha256>.jsonl       original line bytes (see save_line)
    <root>/<session>/transcripts/<name>.jsonl           a whole original (see save_transcript)

``<root>`` is chosen by :func:`resolve_store`; ``<session>`` is the entry's session id, or
``default``. Ids come from untrusted input, so both names pass through
:func:`ctxtool.storage.paths.safe_name` and can never leave their folder.

Below ``<root>`` no symlink is ever followed, writing or reading: every folder is opened with
``O_NOFOLLOW`` relative to the one above (:func:`ctxtool.storage.safe_fs.open_folder`), so a
``<session>`` or ``tool-results`` folder that is a link to elsewhere is refused, not written
through or read from. ``<root>`` itself may be reached through links: the user chose it.

Writes are atomic and never overwrite: content is written to a file (0600) with no name yet
(``O_TMPFILE`` on Linux; elsewhere a temp file in the target folder) and hard-linked to its name
once complete, which fails if the name exists (:func:`ctxtool.storage.safe_fs.create_exclusive`).
An existing file with the same bytes is reused; one with different bytes keeps its name and the
new content gets ``<id>-<sha256 prefix>.<ext>`` instead (with a notice). New folders are created
0700. Every file exists when :meth:`ToolResultStore.save` returns its path (a thread writing
them meanwhile was tried and was slower on two cores: docs/internals.md).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from pathlib import Path
from typing import Any, TypeVar

import orjson

from ctxtool.errors import StoreError
from ctxtool.formats.jsonl import dumps_json, loads_json
from ctxtool.formats.registry import adapter_for
from ctxtool.storage import durable, marker
from ctxtool.storage.paths import claude_config_dir, claude_project_dir, safe_name
from ctxtool.storage.atomic import sweep_stale
from ctxtool.storage.safe_fs import (TEMP_PREFIX, Folder, create_exclusive, open_folder,
                                     open_regular)

# the kinds of folder of a session (cleanup --store sweeps what has these names: marker.KINDS)
# TRANSCRIPTS: whole originals (summarize); VACUUM: what vacuum took out, and its recipes
TOOL_RESULTS, LINES, TRANSCRIPTS, VACUUM = marker.KINDS
DEFAULT_ROOT = "ctxtool-store"
DEFAULT_SESSION = "default"
STORE_ENV = "CTXTOOL_STORE"
SUFFIXES = (".txt", ".json")
PEEK_LIMIT = 1000  # entries looked at to find the session id and cwd before choosing a store
OPEN_FOLDERS = 8  # folders a store keeps open between writes (one per session and kind)

Notice = Callable[[str], None]
E = TypeVar("E", bound=dict[str, Any])  # an entry type, passed through unchanged


def _ignore(_: str) -> None:
    pass


def content_suffix(content: str | list[Any]) -> str:
    """The file suffix a content is stored with: ``.txt`` for a string, ``.json`` for a block
    list."""
    if isinstance(content, str):
        return ".txt"
    if isinstance(content, list):
        return ".json"
    raise TypeError(f"cannot store tool result content of type {type(content).__name__}")


def encode_content(content: str | list[Any]) -> tuple[bytes, str]:
    """The bytes and suffix (:func:`content_suffix`) a content is stored as; a block list is
    indented by 2, like Claude Code's ``JSON.stringify(content, null, 2)``."""
    suffix = content_suffix(content)  # raises TypeError for anything else
    if isinstance(content, str):
        return content.encode("utf-8"), suffix
    return dumps_json(content, indent=True), suffix


class ToolResultStore:
    """A :class:`ctxtool.types.ResultStore` rooted at one folder (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str], *, notice: Notice = _ignore,
                 durable: bool = True, relocate: bool = False,
                 sessions: Iterable[str] = ()) -> None:
        self.root = Path(os.path.abspath(os.path.expanduser(os.fspath(root))))
        # load(): the session folders it may read besides the stores (a transcript's own
        # <dir>/<stem>/, where Claude Code keeps its side files; see readable)
        self.sessions = {os.path.join(os.path.realpath(os.path.dirname(folder)),
                                      os.path.basename(folder)) for folder in sessions}
        # load(): other roots it may read (the agent's own folder for a session's outputs,
        # where persist saves by default: see also_read)
        self.other_roots: set[str] = set()
        self.notice = notice
        # on disk before the next replacement of a transcript (storage/durable.py: one batch)
        self.durable = durable
        # load(): when a named file is missing, also look for <root>/<session>/tool-results/<name>
        # (a store that was moved or copied to another machine)
        self.relocate = relocate
        self._claimed = False  # checked for the store mark (first write)
        self._look_first = True  # see _create_or_match
        # The folders written to, kept open between writes: a store-heavy run saves thousands
        # of files into one folder, and opening it from the root each time (a stat, two
        # mkdirs, three opens and closes) cost as much as writing the file. Held as fds, a
        # folder swapped for a link later changes nothing (see safe_fs.Folder).
        self._folders: dict[tuple[str, str], Folder] = {}
        self._idents: dict[tuple[str, str], tuple[int, int] | None] = {}
        self._close_folders = weakref.finalize(self, _close_all, self._folders)
        self.files_written = 0
        self.files_reused = 0
        self.bytes_written = 0

    def session_dir(self, session_id: str | None) -> Path:
        return self.root / safe_name(session_id, fallback=DEFAULT_SESSION)

    @staticmethod
    def _parts(session_id: str | None, kind: str) -> tuple[str, str]:
        return safe_name(session_id, fallback=DEFAULT_SESSION), kind

    # --- ResultStore protocol ---------------------------------------------------------------

    def save(self, content: str | list[Any], *, tool_use_id: str, session_id: str | None) -> str:
        """Store ``content``; return the absolute path of the file that holds it.
        Raises StoreError when it cannot be written."""
        data, suffix = encode_content(content)
        stem = safe_name(tool_use_id, fallback="result")
        return self._put(self._parts(session_id, TOOL_RESULTS), stem, suffix, data,
                         what=f"tool result {stem}")

    def path_for(self, content: str | list[Any], *, tool_use_id: str,
                 session_id: str | None) -> str:
        """The path :meth:`save` gives ``content`` unless another content holds the name (then
        it saves under the content-addressed alternate); nothing is written."""
        stem = safe_name(tool_use_id, fallback="result")
        return os.path.join(self.root, *self._parts(session_id, TOOL_RESULTS),
                            stem + content_suffix(content))

    def load(self, path: str) -> str | list[Any] | None:
        """The content saved at ``path`` (None if there is no such file).

        Only files that look like stored tool results are read - a ``.txt`` or ``.json`` file in
        a ``tool-results`` folder, not a symlink, reached without following a link from the
        folder above its session folder, in a store or a session's own folder
        (:meth:`readable`) - because the path comes from the transcript, and a crafted
        transcript must not make ``restore`` copy ``~/.ssh/id_rsa`` into it.
        Raises StoreError for a refused, unreadable or undecodable file.
        """
        target = Path(path)
        if not target.is_absolute() or target.suffix not in SUFFIXES \
                or target.parent.name != TOOL_RESULTS or "\x00" in path:
            raise StoreError("not a stored tool result (an absolute path to a .txt or .json "
                             "file in a tool-results folder is expected)", source=path)
        readable = self.readable(target)
        data = _read_file(target) if readable else None
        if data is None and self.relocate:
            data = _read_file(self.relocated(target))
            target = self.relocated(target) if data is not None else target
        if data is None and not readable and os.path.lexists(target):
            raise StoreError("not read: outside the stores and the session's own folder (restore "
                             "reads only from a store ctxtool made, --store/$CTXTOOL_STORE, "
                             "./ctxtool-store, Claude Code's projects folder, or FILE's own "
                             "folder, FILE.jsonl -> FILE/)", source=path)
        if data is None:
            return None
        try:
            if target.suffix == ".txt":
                return data.decode("utf-8")
            content = loads_json(data)
        except (UnicodeDecodeError, orjson.JSONDecodeError) as exc:
            raise StoreError(f"stored tool result is damaged: {exc}", source=path) from exc
        if not isinstance(content, list):
            raise StoreError("stored tool result is not a block list", source=path)
        return content

    def readable(self, target: Path) -> bool:
        """Whether ``target`` (``<root>/<session>/tool-results/<name>``) is in a store:
        this one, one ctxtool made (its mark), a Claude Code project folder (under
        ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``, ``projects/``), or one of :attr:`sessions`.
        A ``..`` anywhere is refused: ctxtool never writes one."""
        if ".." in target.parts:
            return False
        # the root resolved (the user may reach it through links), the session folder not:
        # one that is a link is refused by the read itself, saying so
        root = os.path.realpath(target.parent.parent.parent)
        session = os.path.join(root, target.parent.parent.name)
        if session in self.sessions or root == os.path.realpath(self.root) \
                or root in self.other_roots:
            return True
        projects = os.path.realpath(claude_config_dir(os.environ) / "projects")
        return os.path.dirname(root) == projects or marker.is_marked(root)

    def also_read(self, root: Path) -> None:
        """Let :meth:`load` read the stored results under ``root`` too (a store of the same
        layout that persist chose by itself for the transcript: the agent's own folder)."""
        self.other_roots.add(os.path.realpath(root))

    # --- exact original lines -----------------------------------------------------------------

    def save_line(self, raw: bytes, *, canonical: bytes, session_id: str | None) -> str:
        """Keep the exact bytes of a line whose compact re-serialization (``canonical``) differs
        from them (other spacing or escapes, no final newline, a BOM), so ``restore`` can give
        the original bytes back. The file is named by the hash of ``canonical``."""
        return self._put(self._parts(session_id, LINES), line_key(canonical), ".jsonl", raw,
                         what="original line", alternate=False)

    def load_line(self, canonical: bytes, *, near: str) -> bytes | None:
        """The bytes :meth:`save_line` kept for ``canonical`` beside the tool result ``near``."""
        name = f"{line_key(canonical)}.jsonl"
        folders = [Path(near).parent.parent]
        if self.relocate:
            folders.append(self.relocated(Path(near)).parent.parent)
        for folder in folders:
            with contextlib.suppress(StoreError):
                data = _read_file(folder / LINES / name)
                if data is not None:
                    return data
        return None

    def relocated(self, path: Path) -> Path:
        """Where a file saved as ``.../<session>/tool-results/<name>`` is in this store."""
        session = safe_name(path.parent.parent.name, fallback=DEFAULT_SESSION)
        name = f"{safe_name(path.stem, fallback='result')}{path.suffix}"
        return self.root / session / TOOL_RESULTS / name

    # --- whole transcripts (summarize) ---------------------------------------------------------

    def save_transcript(self, data: bytes, *, name: str, session_id: str | None) -> str:
        """Keep a whole original transcript (``summarize`` of a message list saves the list it
        replaces): ``<root>/<session>/transcripts/<name>.jsonl``; returns the absolute path."""
        return self._put(self._parts(session_id, TRANSCRIPTS),
                         safe_name(name, fallback="transcript"), ".jsonl", data,
                         what="original transcript")

    # --- vacuum (storage/vacuum_store.py) -------------------------------------------------------

    def save_named(self, data: bytes, *, kind: str, name: str, session_id: str | None) -> str:
        """Keep ``data`` as ``<root>/<session>/<kind>/<name>`` (``name`` as ctxtool makes it:
        a digest and a suffix); the same bytes there already are reused. The absolute path."""
        stem, suffix = os.path.splitext(name)
        return self._put(self._parts(session_id, kind), stem, suffix, data, what=name,
                         alternate=False)

    def read_named(self, *, kind: str, name: str, session_id: str | None) -> bytes | None:
        """The bytes :meth:`save_named` kept (None: there are none)."""
        return _read_file(self.session_dir(session_id) / kind / name)

    def names(self, *, kind: str, session_id: str | None) -> list[str]:
        """The files of ``<root>/<session>/<kind>`` (none when it does not exist)."""
        try:
            with open_folder(str(self.root), self._parts(session_id, kind)) as folder:
                return sorted(os.listdir(folder.fd if folder.fd is not None else folder.path))
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise _store_error("cannot list", exc,
                               self.root.joinpath(*self._parts(session_id, kind))) from exc

    # --- writing ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the folders kept open between writes (also done when the store is dropped)."""
        self._close_folders()
        self._close_folders = weakref.finalize(self, _close_all, self._folders)

    def _folder(self, parts: tuple[str, str], *, again: bool = False) -> Folder:
        """The open folder ``<root>/<session>/<kind>``, created if missing. ``again``: open it
        anew (the one held was removed meanwhile, by a cleanup or a user)."""
        folder = self._folders.get(parts)
        if folder is not None and not again and _still_at(folder, self._idents[parts]):
            return folder
        if folder is not None:
            folder.close()
            del self._folders[parts]
        if len(self._folders) >= OPEN_FOLDERS:
            _close_all(self._folders)
        try:
            self._claim()
            _make_dirs(self.root)
            folder = open_folder(str(self.root), parts, create=True)
        except OSError as exc:
            raise _store_error("cannot create the store folder", exc,
                               self.root.joinpath(*parts)) from exc
        sweep_stale(folder.path, prefix=TEMP_PREFIX)  # what a killed run left (older versions)
        self._folders[parts] = folder
        self._idents[parts] = _identity(folder)
        return folder

    def _put(self, parts: tuple[str, str], stem: str, suffix: str, data: bytes, *, what: str,
             alternate: bool = True) -> str:
        """Save ``data`` as ``stem + suffix`` in ``<root>/<session>/<kind>`` (see the module
        docstring); the absolute path of the file that holds it. Paths are strings here, not
        Path objects: on a store-heavy run building them cost more than writing some files."""
        folder = self._folder(parts)
        first = f"{stem}{suffix}"
        try:
            outcome = self._create_or_match(folder, first, data)
        except _FolderGone:  # the folder held open was removed: open (create) it again
            folder = self._folder(parts, again=True)
            outcome = self._create_or_match(folder, first, data)
        # folder.path is <root>/<session>/<kind> as os.path.join made it: what str(Path) gave
        if outcome != "differs":
            return os.path.join(folder.path, first)
        if not alternate:
            self.notice(f"{os.path.join(folder.path, first)} holds other content; kept it")
            return os.path.join(folder.path, first)
        # content-addressed, so a re-run finds (and reuses) it again
        second = f"{stem}-{hashlib.sha256(data).hexdigest()[:12]}{suffix}"
        outcome = self._create_or_match(folder, second, data)
        if outcome == "differs":
            raise StoreError(f"cannot store {what}: {first} and {second} hold other content",
                             source=folder.path)
        if outcome == "created":
            self.notice(f"{os.path.join(folder.path, first)} holds other content; saved {what} "
                        f"as {second}")
        return os.path.join(folder.path, second)

    def _claim(self) -> None:
        """On the first write: a store ctxtool creates (or an empty folder it starts using) gets
        the mark ``cleanup --store`` looks for (see storage/marker.py)."""
        if self._claimed:
            return
        self._claimed = True
        if marker.is_unclaimed(self.root):
            _make_dirs(self.root)
            marker.mark(self.root)

    def _create_or_match(self, folder: Folder, name: str, data: bytes) -> str:
        """"created", "same" (``name`` already holds ``data``) or "differs". Raises
        StoreError (:class:`_FolderGone` when ``folder`` itself was removed).

        The link that names a new file fails if the name exists, so looking first is only a
        saving for names that exist: it is done while names keep turning out taken (a re-run
        over a saved transcript), not while they keep turning out free (a run that saves
        thousands of new files: one failed lookup each). A create that fails without a look
        first is retried with one (a store we may only read can still hold the file)."""
        target = os.path.join(folder.path, name)
        looked = self._look_first
        if looked:
            try:
                same = _holds(folder, name, data)
            except StoreError:  # a symlink, a folder, an unreadable file: not ours to reuse
                return "differs"
            if same is not None:
                self.files_reused += int(same)
                return "same" if same else "differs"
            self._look_first = False
        try:
            created = create_exclusive(folder, name, data)
        except OSError as exc:
            if not looked:
                self._look_first = True
                return self._create_or_match(folder, name, data)
            error = _FolderGone if isinstance(exc, FileNotFoundError) else StoreError
            raise error(f"cannot write: {exc.strerror or exc}", source=target) from exc
        if not created:  # taken (or lost a race): look at what is there
            self._look_first = True
            return self._create_or_match(folder, name, data)
        if self.durable:
            durable.defer(folder.path, name, str(self.root))
        self.files_written += 1
        self.bytes_written += len(data)
        return "created"


class _FolderGone(StoreError):
    """The folder a store held open was removed (its files cannot be created there)."""


def _identity(folder: Folder) -> tuple[int, int] | None:
    if folder.fd is None:
        return None  # no fd-relative calls: every write goes by the checked path anyway
    held = os.fstat(folder.fd)
    return held.st_ino, held.st_dev


def _still_at(folder: Folder, identity: tuple[int, int] | None) -> bool:
    """Whether the folder held open is still the one its path names (not moved, removed or
    replaced since), so the paths the store returns name the files it writes. One lstat."""
    if identity is None:
        return True
    try:
        named = os.stat(folder.path, follow_symlinks=False)
    except OSError:
        return False
    return (named.st_ino, named.st_dev) == identity


def _close_all(folders: dict[tuple[str, str], Folder]) -> None:
    for folder in folders.values():
        folder.close()
    folders.clear()


def line_key(canonical: bytes) -> str:
    return hashlib.sha256(canonical).hexdigest()[:40]


def _store_error(what: str, exc: OSError, path: Path) -> StoreError:
    if exc.errno == errno.ELOOP:
        return StoreError(f"{what}: a folder on the way is a symlink (links inside the store "
                          "are never followed)", source=str(path))
    return StoreError(f"{what}: {exc.strerror or exc}", source=str(path))


def _read_file(target: Path) -> bytes | None:
    """The bytes of the regular file ``target`` (``<root>/<session>/<kind>/<name>``), reached
    from ``<root>`` without following a link; None when it does not exist."""
    session, kind = target.parent.parent.name, target.parent.name
    if session in ("", ".", ".."):
        raise StoreError("not a stored file (no session folder)", source=str(target))
    try:
        folder = open_folder(str(target.parent.parent.parent), (session, kind))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _store_error("cannot read", exc, target) from exc
    with folder:
        fd = _open_in(folder, target.name)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _holds(folder: Folder, name: str, data: bytes) -> bool | None:
    """Whether the file ``name`` in ``folder`` holds exactly ``data``; None when it does not
    exist."""
    fd = _open_in(folder, name)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(handle.fileno()).st_size != len(data):
            return False
        return handle.read() == data


def _open_in(folder: Folder, name: str) -> int | None:
    target = os.path.join(folder.path, name)
    try:
        return open_regular(folder, name)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StoreError("refusing to follow a symlink", source=target) from exc
        if exc.errno == errno.EINVAL:
            raise StoreError("not a regular file", source=target) from exc
        raise StoreError(f"cannot read: {exc.strerror or exc}", source=target) from exc


def _make_dirs(folder: Path) -> None:
    """Create the store root ``folder`` and any missing parents with mode 0700 (os.makedirs
    applies the mode to the last folder only). Existing folders are left as they are."""
    missing: list[Path] = []
    current = folder
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
    if not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(folder))


# --- choosing the store ---------------------------------------------------------------------------

def resolve_store(option: str | None, *, env: Mapping[str, str], fmt: str,
                  session_id: str | None, cwd: str | None, source: str | None = None,
                  notice: Notice = _ignore) -> ToolResultStore:
    """The store for one run, read from ``source`` (a file, or None / ``<stdin>``). ``DIR``
    below is a root: files go to ``DIR/<session>/tool-results/``.

    1. ``--store DIR``;
    2. ``$CTXTOOL_STORE``;
    3. a session of Claude Code's own (a ``sessionId`` and ``cwd``, and the file inside
       ``$CLAUDE_CONFIG_DIR`` (or ``~/.claude``) ``/projects``, or on stdin a session whose file
       is there): the project folder Claude Code itself uses, ``projects/<slug of cwd>``, so
       files land in ``<sessionId>/tool-results/`` beside the session, exactly where Claude
       Code puts its own;
    4. ``ctxtool-store`` beside the file: a copy worked on elsewhere never writes into the
       agent's folders (nor creates a project folder there for a project this machine does
       not have); on stdin, ``./ctxtool-store``. Either way ``ctxtool-store/<session or
       "default">/tool-results/``.
    """
    if option:
        return ToolResultStore(option, notice=notice)
    if env.get(STORE_ENV):
        return ToolResultStore(env[STORE_ENV], notice=notice)
    file = source if source and not source.startswith("<") else None
    if adapter_for(fmt).results_beside_session and session_id and cwd and os.path.isabs(cwd):
        project = claude_project_dir(cwd, env)
        if _inside(file, project.parent) if file else _is_file(project / f"{session_id}.jsonl"):
            store = ToolResultStore(project, notice=notice)
            store._claimed = True  # Claude Code's own project folder: never marked as a store
            return store
    beside = os.path.dirname(file) if file else ""
    return ToolResultStore(os.path.join(beside, DEFAULT_ROOT), notice=notice)


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; False for a name no file can have (a session id from a
    transcript may be 10 KB long)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _inside(path: str, folder: Path) -> bool:
    """Whether the file ``path`` is in ``folder`` or below, links resolved."""
    try:
        return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))
    except (OSError, ValueError):
        return False


def store_for_entries(option: str | None, entries: Iterable[E], *, fmt: str,
                      env: Mapping[str, str], notice: Notice = _ignore,
                      ) -> tuple[ToolResultStore, Iterator[E]]:
    """Choose the store for a stream: looks ahead (at most PEEK_LIMIT entries, buffered) for the
    first entry with a ``sessionId`` and ``cwd``, and returns the store with the full stream.
    Without ``option`` or ``$CTXTOOL_STORE``, a session file in a folder where its agent keeps
    the session's tool outputs (:meth:`~ctxtool.formats.adapter.FormatAdapter.results_folder`:
    Gemini CLI's ``<project>/tool-outputs/session-<id>`` for ``<project>/chats/``) gets that
    folder; else :func:`resolve_store`."""
    iterator = iter(entries)
    seen: list[E] = []
    session_id = cwd = None
    adapter = adapter_for(fmt)
    if not option and not env.get(STORE_ENV) and adapter.results_beside_session:
        for entry in iterator:
            seen.append(entry)
            session_id, cwd = adapter.session_and_cwd(entry)
            # an agent whose lines name no folder (Gemini) is placed by the session alone
            if (session_id and (cwd or not adapter.names_cwd)) or len(seen) >= PEEK_LIMIT:
                break
    source = getattr(seen[0], "source", None) if seen else None  # Entry: its file's name
    # tool results (not vacuum's originals) go where the agent keeps the session's own tool
    # outputs, when it has such a folder (Gemini's <project>/tool-outputs/session-<id>)
    own = adapter.results_folder(source, session_id) \
        if not option and not env.get(STORE_ENV) and source and not source.startswith("<") \
        else None
    store = ToolResultStore(own, notice=notice) if own is not None else resolve_store(
        option, env=env, fmt=fmt, session_id=session_id, cwd=cwd, source=source, notice=notice)
    return store, chain(seen, iterator)
