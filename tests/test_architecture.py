"""The layering DESIGN.md promises, checked rather than hoped for.

* ``ctxtool.core`` and ``ctxtool.formats`` import no click, tqdm or anthropic (and no jsonschema:
  only ``ctxtool.formats.validate`` uses it, lazily), nor ``ctxtool.cli`` or ``ctxtool.io`` — both
  by importing every module in a fresh interpreter and by reading their import statements;
* ``import ctxtool``, ``ctxtool --help`` and ``ctxtool estimate < one-line.jsonl`` stay light:
  the real console script is run with ``PYTHONPROFILEIMPORTTIME`` so Python itself lists every
  module it imported; ``estimate --json`` and ``statusline`` on a Claude Code transcript import
  none of the modules only other paths need (other agents' adapters, OpenCode's database, the
  timeline, shutil...): start-up is most of a short run;
* the README's test command is the one ``.ci/run`` runs.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import ROOT, ctxtool_executable

PACKAGE = ROOT / "ctxtool"
HEAVY = {"click", "tqdm", "anthropic", "jsonschema"}
LAYERS = ("core", "formats")
EDGE = ("ctxtool.cli", "ctxtool.io")  # the commands, and the plumbing only they use (click, tqdm)
GOOD_LINE = (b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s",'
             b'"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hello"}}\n')


def layer_modules(layer: str) -> list[str]:
    """Dotted names of every module file under ctxtool/<layer>, found without importing them."""
    names = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def loaded_after(code: str) -> set[str]:
    """Top-level packages in sys.modules after running ``code`` in a fresh interpreter."""
    script = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=ROOT,
                          check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return {name.split(".")[0] for name in json.loads(proc.stdout.splitlines()[-1])}


def imported_by_entry_point(*args: str, stdin: bytes | None = None) -> set[str]:
    """Top-level packages the real ``ctxtool`` executable imports for one run (as Python reports
    them with PYTHONPROFILEIMPORTTIME), and asserts the run itself did not crash."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    env.pop("ANTHROPIC_API_KEY", None)
    proc = subprocess.run([*ctxtool_executable(), *args], input=stdin, capture_output=True,
                          env=env, check=False, timeout=120)
    log = proc.stderr.decode()
    assert "Traceback" not in log, log
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)\s*$", log, re.MULTILINE)
    assert "ctxtool.cli" in names, "import-time profile not captured"
    return {name.split(".")[0] for name in names}


# --- core and formats ----------------------------------------------------------------------------

@pytest.mark.parametrize("layer", LAYERS)
def test_layer_modules_import_nothing_heavy(layer: str) -> None:
    modules = layer_modules(layer)
    assert len(modules) > 2
    heavy = HEAVY & loaded_after("\n".join(f"import {name}" for name in modules))
    if heavy:  # name the culprit: one fresh interpreter per module
        culprits = {name: sorted(HEAVY & loaded_after(f"import {name}")) for name in modules}
        pytest.fail(f"{layer} imports {sorted(heavy)}: "
                    f"{ {k: v for k, v in culprits.items() if v} }")


def test_fresh_interpreter_check_sees_heavy_imports() -> None:
    assert "click" in loaded_after("import ctxtool.cli")  # the control: the probe can fail


def test_schema_checks_load_jsonschema_only_when_used() -> None:
    used = loaded_after("from ctxtool.formats.validate import entry_checker\n"
                        "assert entry_checker('claude-code')({'type': 'user'})")
    assert "jsonschema" in used  # the lazy import really happens...
    assert not {"click", "tqdm", "anthropic"} & used  # ...and drags in nothing else heavy


def imports_in(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at module level?) for every import statement of a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, id(node) in top))
    return found


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_import_statements(layer: str) -> None:
    wrong = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        lazy_schema_ok = path == PACKAGE / "formats" / "validate.py"
        for module, module_level in imports_in(path):
            root = module.split(".")[0]
            if root in {"click", "tqdm", "anthropic"} or module.startswith(EDGE):
                wrong.append(f"{path.relative_to(ROOT)}: import {module}")
            elif root in {"jsonschema", "referencing"} and (module_level or not lazy_schema_ok):
                wrong.append(f"{path.relative_to(ROOT)}: import {module} (only lazily, in "
                             "ctxtool/formats/validate.py)")
    assert wrong == []


def test_static_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("import os\ndef f():\n    import click\n    from jsonschema import x\n")
    assert imports_in(sample) == [("os", True), ("click", False), ("jsonschema", False)]


# --- the package and the entry point -----------------------------------------------------------

def test_import_ctxtool_is_light() -> None:
    assert not HEAVY & loaded_after("import ctxtool\nctxtool.estimate_text_tokens('hi')")


def test_help_imports_no_anthropic_or_jsonschema() -> None:
    imported = imported_by_entry_point("--help")
    assert "click" in imported
    assert not {"anthropic", "jsonschema"} & imported


def test_estimate_imports_no_anthropic_or_jsonschema() -> None:
    if not (PACKAGE / "cli" / "estimate.py").exists():
        pytest.skip("ctxtool/cli/estimate.py does not exist yet")
    imported = imported_by_entry_point("estimate", stdin=GOOD_LINE)
    assert not {"anthropic", "jsonschema"} & imported


# What a run on a Claude Code transcript must not import: each costs start-up time that every run
# of estimate and statusline would pay (python -X importtime), and only other paths use them:
# other agents' adapters (detection asks the adapters in order), OpenCode's database (sqlite3),
# the timeline (--timeline), cleanup's retention rules, and stdlib modules imported where used.
NOT_AT_START_UP = {
    "ctxtool.formats.codex", "ctxtool.formats.opencode.adapter", "ctxtool.formats.openai_chat",
    "ctxtool.formats.anthropic", "ctxtool.storage.opencode_db", "ctxtool.storage.opencode_config",
    "ctxtool.storage.retention", "ctxtool.core.sizing.timeline", "ctxtool.cli.estimate_timeline",
    "sqlite3", "html", "shutil", "tempfile", "hashlib",
}
MODULES_AT_EXIT = """
import atexit, os, sys
out = os.environ["CTXTOOL_TEST_MODULES"]
atexit.register(lambda: open(out, "w").write("\\n".join(sorted(sys.modules))))
from ctxtool.cli import main
main(sys.argv[1:])
"""


def modules_at_exit(tmp_path: Path, *args: str, stdin: bytes = b"",
                    installed: bool = False) -> tuple[set[str], bytes]:
    """Every module loaded when a ``ctxtool ARGS`` run ends, and its stdout (the CLI's main in a
    fresh interpreter: sys.modules also holds what is imported by name, as the registry and the
    command group do, which the import-time profile does not list). ``installed``: without
    site (``-S``), the package and its dependencies on the path, as in a regular install: an
    editable install's import hook, run by site, loads pathlib in every interpreter."""
    listing = tmp_path / "modules.txt"
    env = {**os.environ, "CTXTOOL_TEST_MODULES": str(listing)}
    if installed:
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"]])
    proc = subprocess.run([sys.executable, *(["-S"] if installed else []), "-c",
                           MODULES_AT_EXIT, *args], input=stdin, capture_output=True,
                          check=False, timeout=120, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    return set(listing.read_text().split()), proc.stdout


@pytest.mark.parametrize("command", ["estimate --json", "estimate", "statusline"])
def test_a_claude_code_run_imports_only_its_path(tmp_path: Path, command: str) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(GOOD_LINE)
    if command == "estimate --json":
        loaded, out = modules_at_exit(tmp_path, "estimate", "--json", str(transcript))
        assert json.loads(out)["format"] == "claude-code"
    elif command == "estimate":  # the table, as scripts/bench.py runs it (its width: $COLUMNS)
        loaded, out = modules_at_exit(tmp_path, "estimate", str(transcript))
        assert b"tokens in context" in out
    else:
        hook = json.dumps({"session_id": "s", "transcript_path": str(transcript)}).encode()
        loaded, out = modules_at_exit(tmp_path, "statusline", "--color", "never", stdin=hook)
        assert b"to compact" in out
    assert "ctxtool.formats.claude_code.adapter" in loaded  # imported by name: the probe sees it
    assert sorted(NOT_AT_START_UP & loaded) == []


@pytest.mark.parametrize("command", ["persist", "restore"])
def test_persist_and_restore_load_no_other_agent(tmp_path: Path, command: str) -> None:
    """--style's choices (one per agent truncating outputs its own way) are looked up when the
    option is used or --help shown, not when cli/persist.py (restore's helpers too) is
    imported. hashlib is the store's (names of content-addressed files)."""
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(GOOD_LINE)
    loaded, out = modules_at_exit(tmp_path, command, "--store", str(tmp_path / "store"),
                                  str(transcript))
    assert out == GOOD_LINE
    assert "ctxtool.formats.claude_code.adapter" in loaded
    assert sorted((NOT_AT_START_UP - {"hashlib"}) & loaded) == []
    if command == "persist":  # the control: the choices are all there when asked for
        loaded, out = modules_at_exit(tmp_path, "persist", "--help")
        assert b"--style [claude-code|opencode|gemini]" in out
        assert "ctxtool.formats.opencode.adapter" in loaded


def test_a_regular_install_runs_estimate_without_pathlib(tmp_path: Path) -> None:
    """pathlib (with urllib.parse and ipaddress, ~3 ms) and importlib.util are imported where
    used: sessions, stores, -o files; not by a run reading a file."""
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(GOOD_LINE)
    loaded, out = modules_at_exit(tmp_path, "estimate", "--json", str(transcript),
                                  installed=True)
    assert json.loads(out)["format"] == "claude-code"
    assert sorted({"pathlib", "importlib.util"} & loaded) == []
    loaded, _ = modules_at_exit(tmp_path, "estimate", "-o", str(tmp_path / "out.txt"),
                                str(transcript), installed=True)
    assert "pathlib" in loaded  # the control: writing -o FILE atomically does use it


@pytest.mark.parametrize(("command", "unneeded"), [
    (("summarize", "--llm", "offline"), "socket"),  # the Anthropic backend's deadline transport
    (("convert", "--to", "anthropic"), "sqlite3"),  # OpenCode's database, when the input is one
])
def test_commands_leave_other_paths_modules_alone(tmp_path: Path, command: tuple[str, ...],
                                                 unneeded: str) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(GOOD_LINE)
    loaded, _ = modules_at_exit(tmp_path, *command, str(transcript))
    assert f"ctxtool.cli.{command[0]}" in loaded
    assert unneeded not in loaded


def test_the_lazy_paths_import_what_they_need(tmp_path: Path) -> None:
    """The control: the same probe sees the modules a run does need, imported where used."""
    messages = tmp_path / "messages.jsonl"
    messages.write_bytes(b'{"role":"user","content":"hello"}\n')  # detection asks every adapter
    loaded, _ = modules_at_exit(tmp_path, "estimate", str(messages), "--timeline",
                             str(tmp_path / "context.svg"))
    assert {"ctxtool.formats.anthropic", "ctxtool.formats.codex",
            "ctxtool.core.sizing.timeline", "ctxtool.cli.estimate_timeline"} <= loaded
    assert (tmp_path / "context.svg").exists()


def test_validate_loads_jsonschema_only_for_an_entry_that_fails_the_schema() -> None:
    # the control for the two tests above: the method sees a lazy import when one happens
    # (validate asks jsonschema only about entries its compiled check rejects, for the message)
    bad = GOOD_LINE.replace(b'"content":"hello"', b'"content":5')
    assert "jsonschema" in imported_by_entry_point("validate", stdin=bad)
    assert "jsonschema" not in imported_by_entry_point("validate", stdin=GOOD_LINE)


# --- README and CI ------------------------------------------------------------------------------

def readme_setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"Set up on a fresh machine.*?```sh\n(.*?)```", text, re.DOTALL)
    assert block, "README has no set-up block"
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def steps(commands: list[str]) -> list[list[str]]:
    """Shell commands split at `&&` into argument lists, pip's --quiet dropped (cosmetic)."""
    out = []
    for command in commands:
        for part in command.split("&&"):
            words = [w for w in shlex.split(part) if not (w == "--quiet" and "pip" in part)]
            if words:
                out.append(words)
    return out


def test_readme_test_command_is_what_ci_runs() -> None:
    setup = readme_setup_commands()
    assert len(setup) == 2, setup
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    ci_steps = [s for s in steps(ci)
                if s[0] not in ("set", "cd")  # the script's own preamble
                and s[-2:] != ["--upgrade", "pip"]]  # upgrading pip itself is CI-only
    assert ci_steps == steps([setup[1]])


# --- format adapters, import arrows and floors (DESIGN §2) ---------------------------------------
#
# What one agent does differently lives in its adapter under ctxtool/formats/ (the registry gives
# the adapter of a format; the detector asks them which claims a line): a transform never compares
# format names. Lower folders import nothing from higher ones, and nothing imports in a circle.

FORMAT_CONSTANTS = {"CLAUDE_CODE", "OPENCODE", "OPENAI", "ANTHROPIC", "CODEX"}
FORMAT_VARIABLES = {"fmt", "format", "in_fmt", "target", "to", "agent"}
# where format names may be compared: the adapters and the detector
FORMAT_HOME = PACKAGE / "formats"
LOWER = ("formats", "llm", "storage")  # import nothing from core/, io/ or cli/
# core's floors, lowest first: a module imports its own folder or a lower floor only
CORE_FLOORS = {"messages": 0, "sizing": 1, "validating": 1, "vacuuming": 1, "clearing": 2,
               "summarizing": 3}


def format_names() -> set[str]:
    from ctxtool.formats.registry import format_names as registered
    return set(registered())


def format_comparisons(path: Path, names: set[str]) -> list[int]:
    """Lines comparing a format: with a format constant (``fmt == OPENCODE``, ``fmt in (OPENAI,
    ANTHROPIC)``), or a format variable with a format name (``fmt != "claude-code"``)."""

    def constant(node: ast.AST) -> bool:
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(constant(e) for e in node.elts)
        return (isinstance(node, ast.Name) and node.id in FORMAT_CONSTANTS) or (
            isinstance(node, ast.Attribute) and node.attr in FORMAT_CONSTANTS)

    def name(node: ast.AST) -> bool:
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(name(e) for e in node.elts)
        return isinstance(node, ast.Constant) and node.value in names

    def variable(node: ast.AST) -> bool:
        return (isinstance(node, ast.Name) and node.id in FORMAT_VARIABLES) or (
            isinstance(node, ast.Attribute) and node.attr in FORMAT_VARIABLES)

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(map(constant, sides)) or (any(map(variable, sides)) and any(map(name, sides))):
                found.append(node.lineno)
    return sorted(found)


def test_no_format_comparison_outside_the_adapters() -> None:
    names = format_names()
    found = [f"{path.relative_to(ROOT)}:{line}"
             for path in sorted(PACKAGE.rglob("*.py")) if FORMAT_HOME not in path.parents
             for line in format_comparisons(path, names)]
    assert found == [], "compare formats in an adapter (ctxtool/formats/), not in a transform"


def test_format_comparison_check_sees_them(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("if fmt == OPENCODE: pass\n"
                      "if self.fmt in (OPENAI, ANTHROPIC): pass\n"
                      "x = 1 if fmt != 'claude-code' else 2\n"
                      "if scan.fmt == types.CLAUDE_CODE: pass\n"
                      "if kind == 'tool_use' or strategy == 'opencode': pass\n")
    assert format_comparisons(sample, format_names()) == [1, 2, 3, 4]


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (at any depth of the file: lazy imports and
    TYPE_CHECKING ones count), ``from pkg import module`` resolved to the module."""
    modules = {module_name(p, package.parent): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets.add(node.module)
                targets.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[module] = {t for t in targets if t in modules and t != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or around a circle (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                other = stack.pop()
                group.append(other)
                if other == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle() -> None:
    assert circles(import_graph()) == []


def test_circle_check_sees_one() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_graph_sees_lazy_and_package_imports(tmp_path: Path) -> None:
    package = tmp_path / "ctxtool"
    (package / "core").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "core" / "__init__.py").write_text("")
    (package / "core" / "a.py").write_text("def f():\n    from ctxtool.core import b\n")
    (package / "core" / "b.py").write_text("import ctxtool.core.a\n")
    graph = import_graph(package)
    assert graph["ctxtool.core.a"] == {"ctxtool.core", "ctxtool.core.b"}
    assert circles(graph) == [["ctxtool.core.a", "ctxtool.core.b"]]


@pytest.mark.parametrize("layer", LOWER)
def test_lower_folders_import_no_transform_or_command(layer: str) -> None:
    graph = import_graph()
    wrong = [f"{module} -> {target}" for module, targets in sorted(graph.items())
             if module.startswith(f"ctxtool.{layer}") for target in sorted(targets)
             if target.startswith(("ctxtool.core", *EDGE))]
    assert wrong == []


def test_io_imports_no_command() -> None:
    """io/ sits under the commands: cli/ imports it, never the other way round."""
    wrong = [f"{module} -> {target}" for module, targets in sorted(import_graph().items())
             if module.startswith("ctxtool.io") for target in sorted(targets)
             if target.startswith("ctxtool.cli")]
    assert wrong == []


def test_cli_holds_the_commands() -> None:
    """cli/ reads as the list of commands: each module is a command's, or its own presentation
    (``cleanup_table.py`` beside ``cleanup.py``); the plumbing they share lives in io/."""
    from ctxtool.cli import COMMANDS
    commands = {target.split(":")[0].rsplit(".", 1)[1] for target in COMMANDS.values()}
    loose = [p.name for p in sorted((PACKAGE / "cli").glob("*.py"))
             if p.stem != "__init__" and p.stem not in commands
             and not any(p.stem.startswith(f"{name}_") for name in commands)]
    assert loose == [], "move what is not one command's own to ctxtool/io/"


def test_core_modules_sit_on_floors() -> None:
    loose = [p.name for p in (PACKAGE / "core").glob("*.py") if p.name != "__init__.py"]
    assert loose == [], "core/ is grouped by capability: put each module in a floor's folder"
    folders = {p.name for p in (PACKAGE / "core").iterdir() if (p / "__init__.py").exists()}
    assert folders == set(CORE_FLOORS)


def test_core_imports_go_down() -> None:
    wrong = []
    for module, targets in sorted(import_graph().items()):
        if not module.startswith("ctxtool.core."):
            continue
        floor = module.split(".")[2]
        for target in sorted(t for t in targets if t.startswith("ctxtool.core.")):
            other = target.split(".")[2]
            if other != floor and CORE_FLOORS[other] >= CORE_FLOORS[floor]:
                wrong.append(f"{module} ({floor}) -> {target} ({other})")
    assert wrong == []


def test_every_package_is_in_the_wheel() -> None:
    declared = re.search(r"^packages = \[(.*?)\]", (ROOT / "pyproject.toml").read_text(),
                         re.MULTILINE | re.DOTALL)
    assert declared
    listed = set(re.findall(r'"([\w.]+)"', declared.group(1)))
    packages = {module_name(p.parent / "__init__.py") for p in PACKAGE.rglob("__init__.py")}
    assert packages - listed == set(), "add the new package to pyproject's packages list"


# --- core knows no agent: agents are reached through formats.registry.adapter_for ---------------

# core's folders written against the adapters only
AGENT_FREE = ("messages", "sizing", "validating", "clearing", "summarizing")


def agent_homes() -> set[str]:
    """The module or package of every registered adapter (``ctxtool.formats.codex``,
    ``ctxtool.formats.claude_code``...): what only that agent's code may import."""
    from ctxtool.formats.registry import adapters
    return {".".join(type(a).__module__.split(".")[:3]) for a in adapters()}


def agent_imports(path: Path, homes: set[str]) -> list[str]:
    """What ``path`` imports of an agent: its modules, or a format-name constant of
    ``ctxtool.types`` (``CLAUDE_CODE``...), at any depth of the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [f"{node.lineno}: {name}" for name in names
                  if any(name == home or name.startswith(home + ".") for home in homes)
                  or (name.startswith("ctxtool.types.")
                      and name.rsplit(".", 1)[1] in FORMAT_CONSTANTS)]
    return found


@pytest.mark.parametrize("folder", AGENT_FREE)
def test_core_folders_import_no_agent(folder: str) -> None:
    homes = agent_homes()
    found = [f"{module_name(path)}:{hit}"
             for path in sorted((PACKAGE / "core" / folder).rglob("*.py"))
             for hit in agent_imports(path, homes)]
    assert found == [], "reach the agent through adapter_for(fmt) and a hook of its adapter"


def test_agent_import_check_sees_them(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("from ctxtool.formats.claude_code.chain import is_compact_boundary\n"
                      "from ctxtool.types import CLAUDE_CODE, location_of\n"
                      "def f():\n    import ctxtool.formats.codex\n"
                      "from ctxtool.formats.registry import adapter_for\n")
    assert [hit.split(":")[0] for hit in agent_imports(sample, agent_homes())] == [
        "1", "1", "2", "4"]
    assert {"ctxtool.formats.codex", "ctxtool.formats.opencode"} <= agent_homes()


# An agent's literal (Claude Code's "<synthetic>" model, a Codex file prefix...) is a fact of that
# agent too: core reaches it through a hook of the adapter, never compares with it itself.

def agent_literals() -> set[str]:
    """Strings an agent's module names as a module-level constant (``SYNTHETIC_MODEL =
    "<synthetic>"``) that no agent-neutral module of ctxtool/formats uses anywhere (the
    Anthropic-shaped defaults of adapter.py, jsonl.py...: "user", the cleared-result text)."""
    homes, named, neutral = agent_homes(), set(), set()
    for path in (PACKAGE / "formats").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        if any(module_name(path).startswith(home) for home in homes):
            named.update(node.value.value for node in tree.body
                         if isinstance(node, (ast.Assign, ast.AnnAssign))
                         and isinstance(node.value, ast.Constant)
                         and isinstance(node.value.value, str))
        else:
            neutral.update(node.value for node in ast.walk(tree)
                           if isinstance(node, ast.Constant) and isinstance(node.value, str))
    return named - neutral


def agent_literal_uses(path: Path, literals: set[str]) -> list[int]:
    """Lines of ``path`` comparing with an agent's literal (``model != "<synthetic>"``, ``x in
    ("a", "b")``) or naming one as a constant (``NAME = "<synthetic>"``); a dict key or a
    docstring mentioning one is not a use."""
    def literal(node: ast.AST | None) -> bool:
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(literal(e) for e in node.elts)
        return isinstance(node, ast.Constant) and node.value in literals

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Compare) and any(map(literal, [node.left, *node.comparators])):
            found.append(node.lineno)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and literal(node.value):
            found.append(node.lineno)
    return sorted(found)


def test_core_compares_with_no_agent_literal() -> None:
    literals = agent_literals()
    found = [f"{module_name(path)}:{line}"
             for path in sorted((PACKAGE / "core").rglob("*.py"))
             for line in agent_literal_uses(path, literals)]
    assert found == [], "ask the adapter (a hook such as model_of or is_own_reply)"


def test_agent_literal_check_sees_them(tmp_path: Path) -> None:
    literals = agent_literals()
    assert "<synthetic>" in literals  # Claude Code's, named in its adapter
    assert not {"user", "assistant", "tool_use", "model"} & literals  # every format's words
    sample = tmp_path / "m.py"
    sample.write_text('SYNTHETIC = "<synthetic>"\n'
                      'if model is not None and model != "<synthetic>": pass\n'
                      'ok = kind in ("text", "<synthetic>")\n'
                      'row = {"<synthetic>": 1}\n'
                      '"""A docstring naming "<synthetic>"."""\n')
    assert agent_literal_uses(sample, literals) == [1, 2, 3]
