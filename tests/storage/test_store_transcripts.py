"""ToolResultStore.save_transcript: where summarize keeps a whole original message list."""

from __future__ import annotations

import stat
from pathlib import Path

from ctxtool.storage.store import ToolResultStore


def test_saved_once_reused_and_never_overwritten(tmp_path: Path) -> None:
    store = ToolResultStore(tmp_path)
    path = Path(store.save_transcript(b'{"role":"user"}\n', name="transcript-abc", session_id=None))
    assert path == tmp_path / "default" / "transcripts" / "transcript-abc.jsonl"
    assert path.read_bytes() == b'{"role":"user"}\n' and stat.S_IMODE(path.stat().st_mode) == 0o600
    again = store.save_transcript(b'{"role":"user"}\n', name="transcript-abc", session_id=None)
    assert again == str(path) and store.files_written == 1 and store.files_reused == 1
    other = Path(store.save_transcript(b"other\n", name="transcript-abc", session_id=None))
    assert other != path and other.read_bytes() == b"other\n" and path.read_bytes() == b'{"role":"user"}\n'


def test_names_from_input_cannot_leave_the_store(tmp_path: Path) -> None:
    store = ToolResultStore(tmp_path / "store")
    path = Path(store.save_transcript(b"x\n", name="../../escape", session_id="../s"))
    assert path.resolve().is_relative_to((tmp_path / "store").resolve())
