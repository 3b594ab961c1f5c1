"""Adding an agent is writing its adapter and registering it: no transform changes.

A sixth format is defined here and nowhere else - a toy agent writing one JSON object per line
(``{"toy": KIND, ...}``: ``say`` by ``user``/``bot``, ``call`` and ``result`` paired by ``id``,
``usage`` after each model call, ``compact`` holding a summary that replaces everything before
it) - registered with :func:`ctxtool.formats.registry.register`, and every transform runs on it
through the CLI: estimate (anchored on its usage, restarted at its compaction), persist and
restore byte for byte, snip, microcompact, summarize (appending the agent's own compaction
record), filter-compacted (cutting there) and validate.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from ctxtool.cli import cli
from ctxtool.formats import registry
from ctxtool.formats.adapter import (Clearer, CompactionLines, CompactionWrite, FormatAdapter,
                                     Restorer, ResultSlot, Usage)

Block = dict[str, Any]


def _blocks(entry: Mapping[str, Any]) -> tuple[str | None, list[Block]]:
    kind = entry.get("toy")
    if kind == "say":
        return ("user" if entry.get("who") == "user" else "assistant",
                [{"type": "text", "text": str(entry.get("text", ""))}])
    if kind == "call":
        return "assistant", [{"type": "tool_use", "id": entry["id"], "name": entry["tool"],
                              "input": entry.get("args") or {}}]
    if kind == "result":
        return "user", [{"type": "tool_result", "tool_use_id": entry["id"],
                         "content": entry.get("output", "")}]
    if kind == "compact":
        return "user", [{"type": "text", "text": str(entry.get("summary", ""))}]
    return None, []


class _Restart:
    """The toy's compaction record restarts the context with itself (its summary)."""

    def note(self, entry: Mapping[str, Any], tokens: int) -> int | None:
        return tokens if entry.get("toy") == "compact" else None


class _Writer:
    def add(self, entry: dict[str, Any]) -> None:
        pass

    def write(self, compaction: CompactionWrite) -> CompactionLines:
        return CompactionLines([{"toy": "compact", "summary": compaction.summary,
                                 "at": compaction.timestamp}])


class ToyAdapter(FormatAdapter):
    name: ClassVar[str] = "toy"
    reads_whole_session: ClassVar[bool] = False
    summary_keeps_lines: ClassVar[bool] = True

    def claims(self, entry: Mapping[str, Any]) -> bool:
        return isinstance(entry.get("toy"), str)

    def api_message(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        return dict(entry) if _blocks(entry)[0] is not None else None

    def role_and_blocks(self, entry: Mapping[str, Any]) -> tuple[str | None, list[Block]]:
        return _blocks(entry)

    def with_tool_result_content(self, entry: dict[str, Any], tool_use_id: str,
                                 content: Any) -> dict[str, Any]:
        if entry.get("toy") != "result" or entry.get("id") != tool_use_id:
            return entry
        return {**entry, "output": content}

    def result_slots(self, entry: Mapping[str, Any]) -> list[ResultSlot]:
        if entry.get("toy") != "result":
            return []
        return [ResultSlot(-1, entry["id"], entry.get("output", ""))]

    def with_result_contents(self, entry: dict[str, Any],
                             changes: Mapping[int, Any]) -> dict[str, Any]:
        return {**entry, "output": changes[-1]}

    def cleared(self, entry: dict[str, Any], clearer: Clearer) -> dict[str, Any]:
        if entry.get("toy") != "result" or not clearer.wants_result(entry["id"]):
            return entry
        text = clearer.result(entry["id"], entry.get("output", ""), entry)
        return entry if text is None else {**entry, "output": text}

    def restored(self, entry: dict[str, Any], restorer: Restorer) -> dict[str, Any]:
        if entry.get("toy") != "result":
            return entry
        output = restorer.result(entry.get("output", ""), entry["id"])
        return entry if output is entry.get("output") else {**entry, "output": output}

    def usage_of(self, entry: Mapping[str, Any]) -> Usage | None:
        if entry.get("toy") != "usage":
            return None
        return Usage((str(entry["call"]), ""), entry["prompt"], 0, 0, entry["output"])

    def compaction_tracker(self) -> _Restart:
        return _Restart()

    def is_compaction_record(self, entry: Mapping[str, Any]) -> bool:
        return entry.get("toy") == "compact"

    def is_summary_entry(self, entry: Mapping[str, Any]) -> bool:
        return entry.get("toy") == "compact"

    def summary_text(self, entry: Mapping[str, Any]) -> str | None:
        return str(entry.get("summary", "")) if entry.get("toy") == "compact" else None

    def compaction_writer(self) -> _Writer:
        return _Writer()


@pytest.fixture()
def toy() -> Iterator[ToyAdapter]:
    adapter = registry.register(ToyAdapter())
    try:
        yield adapter
    finally:
        registry.unregister(adapter.name)


def session(calls: int = 6, size: int = 6000) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [{"toy": "say", "who": "user", "text": "Look at every log."}]
    for n in range(calls):
        lines += [{"toy": "say", "who": "bot", "text": f"Reading log {n}."},
                  {"toy": "call", "id": f"c{n}", "tool": "Read",  # log 0 read twice
                   "args": {"file_path": f"/srv/log{n % (calls - 1)}.txt"}},
                  {"toy": "usage", "call": n, "prompt": 1000 + n * size // 3, "output": 20},
                  {"toy": "result", "id": f"c{n}",
                   "output": "\n".join(f"{n}:{i} line of the log" for i in range(size // 20))}]
    lines += [{"toy": "say", "who": "bot", "text": "All read."},
              {"toy": "usage", "call": calls, "prompt": 1000 + calls * size // 3, "output": 10}]
    return lines


def data(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def ok(*args: str, data_in: bytes, home: Path) -> bytes:
    result = CliRunner().invoke(cli, list(args), input=data_in,
                                env={"HOME": str(home), "NO_COLOR": "1"}, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return result.stdout_bytes


def parsed(out: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_every_transform_runs_on_a_registered_sixth_agent(toy: ToyAdapter, tmp_path: Path) -> None:
    source = data(session())
    store = str(tmp_path / "store")

    report = json.loads(ok("estimate", "--json", "-", data_in=source, home=tmp_path))
    assert report["format"] == "toy" and report["method"] == "usage"
    last = session()[-1]
    assert report["anchor"]["prompt_tokens"] == last["prompt"]
    assert report["tool_results_by_tool"]["Read"] > 0

    persisted = ok("persist", "--max-chars", "500", "--store", store, "-", data_in=source,
                   home=tmp_path)
    assert persisted != source
    assert ok("restore", "--store", store, "-", data_in=persisted, home=tmp_path) == source

    snipped = ok("snip", "--store", store, "-", data_in=source, home=tmp_path)
    assert snipped != source
    assert snipped != source
    assert ok("restore", "--store", store, "-", data_in=snipped, home=tmp_path) == source

    cleared = ok("microcompact", "--force", "--keep", "1", "--target", "0", "--store", store,
                 "-", data_in=source, home=tmp_path)
    before = [e["output"] for e in session() if e["toy"] == "result"]
    after_clearing = [e["output"] for e in parsed(cleared) if e["toy"] == "result"]
    assert after_clearing[-1] == before[-1] and after_clearing[0] != before[0]  # --keep 1
    assert ok("restore", "--store", store, "-", data_in=cleared, home=tmp_path) == source

    summarized = ok("summarize", "-", data_in=source, home=tmp_path)
    assert summarized.startswith(source)  # the agent keeps every line, then its record
    record = parsed(summarized)[-1]
    assert record["toy"] == "compact" and "log" in record["summary"]
    after = json.loads(ok("estimate", "--json", "-", data_in=summarized, home=tmp_path))
    assert after["context_tokens"] < report["context_tokens"]
    assert after["compact_boundaries"] == 1

    view = parsed(ok("filter-compacted", "-", data_in=summarized, home=tmp_path))
    assert view == [record]

    checked = CliRunner().invoke(cli, ["validate", "-"], input=summarized,
                                 env={"HOME": str(tmp_path)})
    assert checked.exit_code == 0, checked.output
    broken = data([e for e in session() if not (e["toy"] == "result" and e["id"] == "c0")])
    refused = CliRunner().invoke(cli, ["validate", "-"], input=broken, env={"HOME": str(tmp_path)})
    assert refused.exit_code != 0 and "c0" in refused.output
