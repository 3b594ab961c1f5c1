"""The headline pipeline shows the context shrinking, through the real entry point.

``persist | snip | microcompact | estimate`` on a Claude Code transcript whose big tool results
precede the last API call: that call's recorded usage still counts them, so each command must
append a microcompact_boundary with the tokens it saved for ``estimate`` to see the saving.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.clearing_helpers import Session, text_with_tokens
from tests.conftest import run_ctxtool

NOW = "2026-01-02T00:00:00Z"


def transcript() -> tuple[bytes, int]:
    """A session with usage; returns its JSONL and the tokens of its tool results."""
    session = Session().user("please work")
    tokens = 0
    # the first read of /a.py is superseded (snip); it is too small for persist's 1000 chars
    for path, size in (("/a.py", 200), ("/a.py", 200), ("/b.py", 6_000)):
        session.call("Read", {"file_path": path},
                     text_with_tokens(size, f"{path} read {session.calls + 1}"))
        tokens += size
    for size in (9_000, 5_000, 300, 300):
        session.sized_call("Bash", size)
        tokens += size
    session.assistant("all done", usage={"input_tokens": 3, "cache_read_input_tokens": 60_000,
                                         "output_tokens": 20})
    return session.jsonl(), tokens


def ctxtool_ok(*args: str, input: bytes) -> bytes:
    result = run_ctxtool(*args, input=input)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout


def context(data: bytes) -> int:
    return json.loads(ctxtool_ok("estimate", "--json", input=data))["context_tokens"]


def test_the_pipeline_shows_the_context_shrinking(tmp_path: Path) -> None:
    source, result_tokens = transcript()
    store = str(tmp_path / "store")
    persisted = ctxtool_ok("persist", "--max-chars", "1000", "--store", store, "--now", NOW,
                           input=source)
    snipped = ctxtool_ok("snip", "--store", store, "--now", NOW, input=persisted)
    compacted = ctxtool_ok("microcompact", "--force", "--store", store, "--now", NOW,
                           input=snipped)
    before, after = context(source), context(compacted)
    assert context(persisted) < before - 15_000  # persist alone already shows its saving

    boundaries = [json.loads(line) for line in compacted.splitlines()
                  if b'"microcompact_boundary"' in line]
    saved = sum(b["microcompactMetadata"]["tokensSaved"] for b in boundaries)
    # persist's (no ids) and snip's; microcompact --force finds the compactable results, all
    # placeholders by now, well under its 40,000-token target: nothing left for it to clear
    assert [b["microcompactMetadata"]["compactedToolIds"] for b in boundaries] \
        == [[], ["toolu_001"]]
    assert all(b["microcompactMetadata"]["tokensSaved"] > 0 for b in boundaries)
    assert after < before - 0.8 * result_tokens  # nearly all the tool result tokens went
    assert before - after == saved  # what estimate subtracted is exactly what was recorded

    assert ctxtool_ok("restore", "--store", store, input=compacted) == source
