"""Cleanup's reading of real transcripts: the fast paths agree with the plain one."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ctxtool.clock import parse_timestamp
from ctxtool.formats.jsonl import iter_entries
from ctxtool.storage.retention import line_facts, reference_keys, session_activity
from tests.conftest import corpus_params


def _plain_newest(path: Path) -> object:
    """The newest top-level timestamp, the slow obvious way."""
    newest = None
    for line in path.read_bytes().splitlines():
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            stamp = parse_timestamp(entry.get("timestamp"))
            if stamp is None and isinstance(entry.get("snapshot"), dict):
                stamp = parse_timestamp(entry["snapshot"].get("timestamp"))
            if stamp is not None and (newest is None or stamp > newest):
                newest = stamp
    return newest


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params())
def test_activity_on_real_transcripts(path: Path) -> None:
    with path.open("rb") as stream:
        parsed = session_activity(iter_entries(stream, str(path), on_invalid="keep"))
    assert parsed.newest == _plain_newest(path)  # the string shortcut never changes the answer
    with path.open("rb") as stream:
        scanned = line_facts(stream)
    assert scanned.references == parsed.references == reference_keys(path.read_bytes())
    assert parsed.slugs <= scanned.slugs  # the raw scan may also see nested slugs, never fewer
    assert parsed.session_id == scanned.session_id or parsed.session_id is None
