"""OpenCode messages through the common block view (core/messages/blocks.py, fmt == "opencode")."""

from __future__ import annotations

import copy

import pytest

from ctxtool.core.messages.blocks import (
    api_message, block_text, content_blocks, iter_tool_results, iter_tool_uses, pair_tools,
    role_of, with_message_content, with_tool_result_content,
)
from ctxtool.core.sizing.tokens import estimate_entry_tokens
from ctxtool.formats.opencode.export import entries_from_export, loads_document
from ctxtool.formats.opencode.view import CLEARED, INTERRUPTED, iter_api_messages
from tests.opencode_builders import FIXTURE, assistant, compaction, text, tool, user

OC = "opencode"
PNG = "data:image/png;base64,iVBORw0KGgo="


def fixture_entries() -> list[dict]:
    data = (FIXTURE / "export.json").read_bytes()
    return entries_from_export(loads_document(data, "export.json"), "export.json")


def kinds(entry: dict) -> list[str]:
    return [b["type"] for b in content_blocks(entry, OC)]


def test_roles_and_the_message_record() -> None:
    entries = fixture_entries()
    assert api_message(entries[0], OC) is None and role_of(entries[0], OC) is None  # session line
    assert role_of(entries[1], OC) == "user" and role_of(entries[2], OC) == "assistant"
    assert api_message(entries[2], OC) is entries[2]["info"]
    assert content_blocks({"info": "x", "parts": []}, OC) == []


def test_user_parts_as_the_model_sees_them() -> None:
    first = fixture_entries()[1]
    blocks = content_blocks(first, OC)
    # ignored text and the text/plain file are left out; the image and the pdf stay
    assert [b["type"] for b in blocks] == ["text", "text", "text", "image", "document"]
    image_url = next(p["url"] for p in first["parts"] if p.get("mime") == "image/png")
    assert blocks[3]["source"] == {"type": "base64", "media_type": "image/png",
                                   "data": image_url.split(",", 1)[1]}
    assert blocks[4]["source"] == {"type": "url", "url": "file:///home/dev/app/spec.pdf"}
    assert all(b.get("text") != "ignored draft" for b in blocks)
    assert content_blocks(user(1, compaction()), OC) == [{"type": "text", "text": "What did we do so far?"}]
    subtask = user(2, {"type": "subtask", "prompt": "p", "description": "d", "agent": "general"})
    assert block_text(content_blocks(subtask, OC)[0]) == "The following tool was executed by the user"


def test_assistant_parts_reasoning_tools_and_markers() -> None:
    second = fixture_entries()[2]
    assert kinds(second) == ["thinking", "text", "tool_use", "tool_result", "tool_use",
                             "tool_result", "tool_use", "tool_result"]
    thinking = content_blocks(second, OC)[0]
    assert thinking == {"type": "thinking", "thinking": "The test imports a missing helper.",
                        "signature": "EqQBCkYIBxgCKkA="}
    results = {r.tool_use_id: r for r in iter_tool_results(second, OC)}
    assert results["toolu_01BashBBB"].content == CLEARED  # state.time.compacted is set
    assert results["toolu_01ReadAAA"].content.startswith("<file>")
    assert [u.name for u in iter_tool_uses(second, OC)] == ["read", "bash", "skill"]


@pytest.mark.parametrize(("part", "content", "is_error"), [
    (tool("c", status="pending"), INTERRUPTED, True),
    (tool("c", status="running"), INTERRUPTED, True),
    (tool("c", output="boom", status="error"), "boom", True),
    (tool("c", output="aborted", status="error", metadata={"interrupted": True, "output": "half"}),
     "half", False),
    (tool("c", output="full", compacted=7), CLEARED, False),
    (tool("c", output="full"), "full", False),
])
def test_every_tool_status_gets_a_result(part: dict, content: str, is_error: bool) -> None:
    (result,) = iter_tool_results(assistant(2, 1, part), OC)
    assert (result.tool_use_id, result.content, result.is_error) == ("c", content, is_error)
    (use,) = iter_tool_uses(assistant(2, 1, part), OC)
    assert use.id == "c" and use.name == "bash"


def test_pending_tool_calls_in_the_fixture_pair_as_interrupted() -> None:
    pairs = pair_tools(fixture_entries(), OC)
    assert len(pairs) == 8 and all(use and result for use, result in pairs.values())
    assert pairs["toolu_01EditGGG"][1].content == INTERRUPTED
    assert pairs["toolu_01BashHHH"][1].is_error is True


def test_attachments_become_image_blocks_unless_compacted() -> None:
    attachment = {"id": "prt_att", "sessionID": "s", "messageID": "msg_002", "type": "file",
                  "mime": "image/png", "url": PNG}
    entry = assistant(2, 1, tool("c", output="read it", attachments=[attachment]))
    (result,) = iter_tool_results(entry, OC)
    assert [b["type"] for b in result.content] == ["text", "image"]
    cleared = assistant(2, 1, tool("c", compacted=1, attachments=[attachment]))
    assert next(iter_tool_results(cleared, OC)).content == CLEARED


def test_errored_assistant_messages_are_hidden_unless_an_abort_left_content() -> None:
    failed = assistant(2, 1, text("partial"), error={"name": "APIError", "data": {}})
    assert content_blocks(failed, OC) == []
    aborted = assistant(2, 1, text("partial"), error={"name": "MessageAbortedError", "data": {}})
    assert kinds(aborted) == ["text"]
    only_reasoning = assistant(2, 1, {"type": "reasoning", "text": "r", "time": {"start": 1}},
                               error={"name": "MessageAbortedError", "data": {}})
    assert content_blocks(only_reasoning, OC) == []


def test_token_estimates_see_the_view() -> None:
    big = "x" * 4000
    full = estimate_entry_tokens(assistant(2, 1, tool("c", output=big)), OC)
    cleared = estimate_entry_tokens(assistant(2, 1, tool("c", output=big, compacted=1)), OC)
    assert full > 1000 and cleared * 5 < full


def test_writing_a_tool_result_rewrites_the_output_copy_on_write() -> None:
    entry = assistant(2, 1, text("t"), tool("c", output="old"), tool("d", output="keep"))
    pristine = copy.deepcopy(entry)
    new = with_tool_result_content(entry, OC, "c", "new")
    assert entry == pristine
    assert new["parts"][1]["state"]["output"] == "new"
    assert new["parts"][0] is entry["parts"][0] and new["parts"][2] is entry["parts"][2]
    assert with_tool_result_content(entry, OC, "zzz", "x") is entry
    pending = assistant(3, 1, tool("p", status="pending"))
    assert with_tool_result_content(pending, OC, "p", "x") is pending
    failed = with_tool_result_content(assistant(4, 1, tool("e", status="error")), OC, "e", "why")
    assert failed["parts"][0]["state"]["error"] == "why"


def test_block_lists_round_trip_through_output_and_attachments() -> None:
    attachment = {"id": "prt_att", "sessionID": "ses_test", "messageID": "msg_002",
                  "type": "file", "mime": "image/png", "filename": "a.png", "url": PNG}
    entry = assistant(2, 1, tool("c", output="read it", attachments=[attachment]))
    (result,) = iter_tool_results(entry, OC)
    placeholder = with_tool_result_content(entry, OC, "c", "<persisted-output>")
    assert "attachments" not in placeholder["parts"][0]["state"]
    back = with_tool_result_content(placeholder, OC, "c", result.content)
    state = back["parts"][0]["state"]
    assert state["output"] == "read it"
    assert state["attachments"][0]["url"] == PNG and state["attachments"][0]["type"] == "file"
    same = with_tool_result_content(entry, OC, "c", result.content)
    assert same["parts"][0]["state"] == entry["parts"][0]["state"]  # kept attachments reused


def test_whole_message_content_cannot_be_replaced() -> None:
    with pytest.raises(ValueError, match="parts"):
        with_message_content(user(1), OC, "x")


def test_api_messages_split_each_step_into_call_and_results() -> None:
    step = {"type": "step-start"}
    entry = assistant(2, 1, step, text("a"), tool("c1"), step, text("b"), tool("c2"),
                      {"type": "step-finish", "reason": "stop", "cost": 0, "tokens": {}})
    out = list(iter_api_messages([user(1), entry, assistant(3, 1, step)]))
    assert [(m["role"], [b["type"] for b in m["content"]]) for m in out] == [
        ("user", ["text"]), ("assistant", ["text", "tool_use"]), ("user", ["tool_result"]),
        ("assistant", ["text", "tool_use"]), ("user", ["tool_result"])]
