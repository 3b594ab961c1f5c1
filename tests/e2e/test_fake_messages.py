"""The fake Messages server speaks the streaming protocol the real SDK parses (no client needed)."""

from __future__ import annotations

import urllib.request

import anthropic

from tests.e2e.fake_messages import FakeMessages, say, tool


def test_streamed_tool_call_and_text_reach_the_sdk_whole() -> None:
    with FakeMessages() as api:
        api.push(tool("Bash", {"command": "ls"}, text="Looking."), say("Finished."))
        client = anthropic.Anthropic(api_key="sk-fake", base_url=api.url, max_retries=0)
        tools = [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}]
        ask = {"model": "m", "max_tokens": 100, "tools": tools,
               "messages": [{"role": "user", "content": "hi"}]}
        with client.messages.stream(**ask) as stream:
            first = stream.get_final_message()
        with client.messages.stream(**ask) as stream:
            second = stream.get_final_message()
        side = client.messages.create(model="m", max_tokens=5,
                                      messages=[{"role": "user", "content": "title?"}])
        counted = client.messages.count_tokens(model="m", messages=ask["messages"])
        probe = urllib.request.urlopen(f"{api.url}/api/hello", timeout=5)
    assert [b.type for b in first.content] == ["text", "tool_use"]
    assert first.content[1].input == {"command": "ls"} and first.stop_reason == "tool_use"
    assert first.usage.input_tokens > 0
    assert second.content[0].text == "Finished."
    assert side.content[0].text == "Fake side reply."  # side requests leave the script alone
    assert counted.input_tokens > 0 and probe.status == 200
    assert len(api.turns()) == 2 and api.turns()[0]["stream"] is True


def test_a_compaction_request_gets_the_nine_sections() -> None:
    with FakeMessages() as api:
        client = anthropic.Anthropic(api_key="sk-fake", base_url=api.url, max_retries=0)
        ask = "Your task is to create a detailed summary of the conversation so far."
        reply = client.messages.create(model="m", max_tokens=100, tools=[
            {"name": "Bash", "description": "run", "input_schema": {"type": "object"}}],
            messages=[{"role": "user", "content": ask}])
    assert "<summary>" in reply.content[0].text and "9. Optional Next Step" in reply.content[0].text
    assert api.turns() == [] and len(api.compactions()) == 1


def test_an_opencode_compaction_request_gets_its_template_filled() -> None:
    with FakeMessages() as api:
        client = anthropic.Anthropic(api_key="sk-fake", base_url=api.url, max_retries=0)
        ask = "<conversation>\n[User]: hi\n</conversation>\n\n<template>\n## Objective\n</template>"
        reply = client.messages.create(model="m", max_tokens=100,
                                       messages=[{"role": "user", "content": ask}])
    assert reply.content[0].text.startswith("## Objective\n- fake summary")
    assert "### Blocked" in reply.content[0].text and len(api.compactions()) == 1
