"""The database-level hook (formats/vacuum.py DatabaseVacuum) as the sweep and restore call it,
with an adapter of the test's own: what it plans and removes is reported per session and in
all, its keeper is ctxtool's store, and ``restore --in-place DB`` hands it the same keeper."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from ctxtool.cli import cli
from ctxtool.formats.anthropic import AnthropicAdapter
from ctxtool.formats.registry import register, unregister
from ctxtool.formats.vacuum import BlobKeeper, SessionSize
from tests.opencode_db_builder import make_db

ROW = b'{"type":"event","data":"a snapshot"}'


class Hook:
    def __init__(self, db: Path) -> None:
        self.db = db
        self.kept: list[str] = []

    def databases(self, env: Mapping[str, str]) -> list[Path]:
        return [self.db]

    def plan(self, path: Path) -> list[SessionSize]:
        return [SessionSize("ses_1", "one", 5000, 3000, {"event row": 4})]

    def apply(self, path: Path, keeper: BlobKeeper) -> list[SessionSize]:
        self.kept.append(keeper.keep(ROW))
        return self.plan(path)

    def restore(self, path: Path, keeper: BlobKeeper) -> int:
        return sum(keeper.load(digest) == ROW for digest in self.kept)


class DatabaseAgent(AnthropicAdapter):
    name = "test-db"
    hook: Hook | None = None

    def vacuum_database(self) -> Hook | None:
        return self.hook


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[DatabaseAgent]:
    made = DatabaseAgent()
    (tmp_path / "data").mkdir()
    made.hook = Hook(make_db(tmp_path / "data" / "opencode.db"))
    register(made)
    yield made
    unregister(made.name)
    gc.collect()  # the stores the commands made in this process close their folders now


def test_the_sweep_plans_and_applies_through_the_hook(runner, agent: DatabaseAgent,
                                                      tmp_path: Path) -> None:
    plan = runner.invoke(cli, ["vacuum", "--all", "--agent", "test-db", "--json"])
    assert plan.exit_code == 0, plan.output
    records = [json.loads(line) for line in plan.stdout.splitlines()]
    assert records[0]["path"] == "ses_1" and records[0]["removed"] == {"event row": 4}
    assert records[-1]["bytes_saved"] == 2000 and records[-1]["action"] == "plan"
    assert agent.hook is not None and agent.hook.kept == []
    done = runner.invoke(cli, ["vacuum", "--all", "--apply", "--agent", "test-db", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout.splitlines()[-1])["action"] == "vacuumed"
    kept = tmp_path / "data" / "ctxtool-store" / "test-db-database" / "ctxtool-vacuum"
    assert [p.name for p in kept.glob("*.bin")] == [f"{agent.hook.kept[0]}.bin"]
    back = runner.invoke(cli, ["restore", "--in-place", str(agent.hook.db)])
    assert back.exit_code == 0, back.output
    assert "1 row(s) vacuum removed put back" in back.stderr


def test_a_database_given_as_file_is_vacuumed_in_place(runner, agent: DatabaseAgent) -> None:
    assert agent.hook is not None
    out = runner.invoke(cli, ["vacuum", str(agent.hook.db)])
    assert out.exit_code == 2 and "a database is vacuumed in place" in out.stderr
    done = runner.invoke(cli, ["vacuum", "--in-place", "--json", str(agent.hook.db)])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout.splitlines()[0])["removed"] == {"event row": 4}
    assert len(agent.hook.kept) == 1
