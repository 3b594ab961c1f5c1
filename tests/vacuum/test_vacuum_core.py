"""The vacuum engine against an adapter of the test's own: replacements, payloads kept once,
copies, the rules an adapter's edits must keep, and the recipe rebuilding the original."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator

import pytest

from ctxtool.core.vacuuming.lines import FileVacuum, plan_lines
from ctxtool.core.vacuuming.recipe import rebuild
from ctxtool.errors import OperationError, StoreError
from ctxtool.formats.anthropic import AnthropicAdapter
from ctxtool.formats.registry import register, unregister
from ctxtool.formats.vacuum import LineEdit

IMAGE = b"iVBORw0KGgo" * 300


class Images(AnthropicAdapter):
    """Replaces every line holding IMAGE by the line with the image taken out."""

    name = "test-images"
    edits: list[LineEdit] | None = None  # given as they are, when set

    def vacuum_lines(self, lines: Iterable[bytes]) -> Iterator[LineEdit]:
        if self.edits is not None:
            yield from self.edits
            return
        for index, line in enumerate(lines):
            at = line.find(IMAGE)
            if at >= 0:
                yield LineEdit(index, "repeated image", new=line.replace(IMAGE, b""),
                               payloads=((at, at + len(IMAGE)),))


@pytest.fixture
def adapter() -> Iterator[Images]:
    made = register(Images())
    yield made
    unregister(made.name)


class Keeper(dict[str, bytes]):
    def keep(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        self[digest] = data
        return digest


def vacuum(lines: list[bytes], fmt: str) -> tuple[list[bytes], dict, Keeper]:
    keeper = Keeper()
    plan = plan_lines(iter(lines), fmt, source="t")
    work = FileVacuum(plan, keeper.keep, source="t")
    out = list(work.write(iter(lines)))
    return out, work.result(), keeper


def test_payloads_repeated_in_many_lines_are_kept_once(adapter: Images) -> None:
    lines = [b'{"role":"user","content":"a"}\n'] + [
        b'{"role":"user","content":"' + IMAGE + b'","n":%d}\n' % i for i in range(50)]
    out, recipe, keeper = vacuum(lines, adapter.name)
    assert len(keeper) == 1  # the image, once; the bytes around it are in the recipe
    assert sum(map(len, out)) == sum(map(len, lines)) - 50 * len(IMAGE)
    assert b"".join(rebuild(recipe, iter(out), keeper.get, "t")) == b"".join(lines)


def test_a_line_left_out_comes_back_from_the_store(adapter: Images) -> None:
    lines = [b'{"role":"user","content":"a"}\n', b'{"role":"user","content":"b"}\n']
    adapter.edits = [LineEdit(0, "unused")]
    out, recipe, keeper = vacuum(lines, adapter.name)
    assert out == lines[1:]
    assert b"".join(rebuild(recipe, iter(out), keeper.get, "t")) == b"".join(lines)
    keeper.clear()
    with pytest.raises(StoreError, match="missing from the store"):
        b"".join(rebuild(recipe, iter(out), keeper.get, "t"))


def test_a_changed_file_is_not_rebuilt_into_something_else(adapter: Images) -> None:
    lines = [b'{"role":"user","content":"a"}\n', b'{"role":"user","content":"a"}\n']
    adapter.edits = [LineEdit(1, "copy", copy_of=0)]
    out, recipe, keeper = vacuum(lines, adapter.name)
    assert out == lines[:1]
    with pytest.raises(StoreError, match="not the original"):
        b"".join(rebuild(recipe, iter([b'{"role":"user","content":"b"}\n']), keeper.get, "t"))


@pytest.mark.parametrize("edits, problem", [
    ([LineEdit(1, "x"), LineEdit(0, "x")], "out of order"),
    ([LineEdit(5, "x")], "past the end"),
    ([LineEdit(2, "x")], "no newline yet"),
    ([LineEdit(1, "x", copy_of=1)], "not an earlier kept line"),
    ([LineEdit(0, "x"), LineEdit(1, "x", copy_of=0)], "not an earlier kept line"),
    ([LineEdit(1, "x", new=b"{}")], "must end with a newline"),
])
def test_edits_that_break_the_rules_are_refused(adapter: Images, edits: list[LineEdit],
                                                problem: str) -> None:
    adapter.edits = edits
    lines = [b"{}\n", b"{}\n", b"{}"]
    with pytest.raises(OperationError, match=problem):
        plan_lines(iter(lines), adapter.name, source="t")


def test_a_claimed_copy_that_differs_stops_the_write(adapter: Images) -> None:
    adapter.edits = [LineEdit(1, "copy", copy_of=0)]
    lines = [b'{"a":1}\n', b'{"a":2}\n']
    plan = plan_lines(iter(lines), adapter.name, source="t")
    with pytest.raises(OperationError, match="not a copy"):
        list(FileVacuum(plan, Keeper().keep, source="t").write(iter(lines)))
