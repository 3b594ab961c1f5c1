#!/usr/bin/env python3
"""Write a large Gemini CLI 0.61 session in the shape the real client writes (the fixtures of
tests/fixtures/gemini-cli-0.61.0, made by scripts/make_gemini_fixture.py, which drives the client
for small sessions only).

It starts with new.jsonl's metadata line and first checkpoint, then TURNS tool turns as the
client writes one: the prompt, the model record without and then with its ``toolCalls`` (the
``read_file`` result of RESULT bytes inside), the user record answering the call, the answer,
each followed by a ``$set`` of ``lastUpdated``; every EVERY turns a compression's checkpoint (a
``$set`` of the message list: the session context, the ``<state_snapshot>`` and Gemini's
acknowledgement). ``tokens.input`` grows with each call and starts over after a compression.

    python scripts/gen_gemini_session.py --turns 6000 --result 8000 --every 100 -o /tmp/g.jsonl
    ctxtool statusline --color never /tmp/g.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, BinaryIO

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "gemini-cli-0.61.0"
MODEL = "gemini-3.8-flash"
FIRST_PROMPT = 11_624  # the first call's tokens.input in new.jsonl
SNAPSHOT = "<state_snapshot>\n<overall_goal>Read the notes.</overall_goal>\n</state_snapshot>"


class Writer:
    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.ids = 0

    def line(self, record: Any) -> None:
        self.out.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")

    def new_id(self) -> str:
        self.ids += 1
        return f"00000000-0000-4000-8000-{self.ids:012d}"


def tokens(prompt: int, output: int) -> dict[str, int]:
    return {"input": prompt, "output": output, "cached": 0, "thoughts": 0, "tool": 0,
            "total": prompt + output}


def turn(w: Writer, t: int, stamp: str, prompt: int, result: int) -> int:
    """One tool turn; the prompt size of the next call."""
    call = f"read_file__read_file_{t}_0"
    body = "".join(f"line {i}: alpha beta gamma {t}\n" for i in range(result // 30))
    response = [{"functionResponse": {"id": call, "name": "read_file",
                                      "response": {"output": body}}}]
    asked, model, answered, said = (w.new_id() for _ in range(4))
    model_record = {"id": model, "timestamp": stamp, "type": "gemini", "content": "Let me read it.",
                    "thoughts": [], "tokens": tokens(prompt, 26), "model": MODEL}
    w.line({"id": asked, "timestamp": stamp, "type": "user",
            "content": [{"text": f"What is in notes{t}.txt?"}]})
    w.line({"$set": {"lastUpdated": stamp}})
    w.line(model_record)
    w.line({**model_record, "toolCalls": [{"id": call, "name": "read_file",
                                           "args": {"file_path": f"notes{t}.txt"},
                                           "result": response, "status": "success",
                                           "timestamp": stamp}]})
    w.line({"id": answered, "timestamp": stamp, "type": "user", "content": response})
    w.line({"$set": {"lastUpdated": stamp}})
    prompt += 2 * result // 4 + 60  # the call and its result, sent twice
    w.line({"id": said, "timestamp": stamp, "type": "gemini",
            "content": f"notes{t}.txt has lines.", "thoughts": [], "tokens": tokens(prompt, 17),
            "model": MODEL})
    w.line({"$set": {"lastUpdated": stamp}})
    return prompt + 40


def generate(out: BinaryIO, *, turns: int, result: int, every: int) -> None:
    head = (FIXTURE / "new.jsonl").read_bytes().splitlines(keepends=True)[:2]
    context = json.loads(head[1])["$set"]["messages"][0]
    out.write(b"".join(head))
    w, prompt = Writer(out), FIRST_PROMPT
    for t in range(turns):
        stamp = f"2026-11-27T{16 + t // 3600 % 8:02d}:{t // 60 % 60:02d}:{t % 60:02d}.000Z"
        if t and every and t % every == 0:
            w.line({"$set": {"messages": [
                context,
                {"id": w.new_id(), "timestamp": stamp, "type": "user",
                 "content": [{"text": SNAPSHOT}]},
                {"id": w.new_id(), "timestamp": stamp, "type": "gemini",
                 "content": [{"text": "Got it. Thanks for the additional context!"}]}],
                "lastUpdated": stamp}})
            prompt = FIRST_PROMPT
        prompt = turn(w, t, stamp, prompt, result)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--result", type=int, default=8000, help="bytes of each read_file result")
    parser.add_argument("--every", type=int, default=100,
                        help="turns between compressions (0: none)")
    parser.add_argument("-o", "--output", help="file to write (default stdout)")
    args = parser.parse_args(argv)
    if args.output:
        with open(args.output, "wb") as out:
            generate(out, turns=args.turns, result=args.result, every=args.every)
    else:
        generate(sys.stdout.buffer, turns=args.turns, result=args.result, every=args.every)
    return 0


if __name__ == "__main__":
    sys.exit(main())
