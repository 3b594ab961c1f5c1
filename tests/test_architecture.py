"""The layering DESIGN.md promises, checked rather than hoped for.

* ``ctxtool.core`` and ``ctxtool.formats`` import no click, tqdm or anthropic (and no jsonschema:
  only ``ctxtool.formats.validate`` uses it, lazily) — both by importing every module in a fresh
  interpreter and by reading their import statements;
* ``import ctxtool``, ``ctxtool --help`` and ``ctxtool estimate < one-line.jsonl`` stay light:
  the real console script is run with ``PYTHONPROFILEIMPORTTIME`` so Python itself lists every
  module it imported;
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
from pathlib import Path

import pytest

from tests.conftest import ROOT, ctxtool_executable

PACKAGE = ROOT / "ctxtool"
HEAVY = {"click", "tqdm", "anthropic", "jsonschema"}
LAYERS = ("core", "formats")
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
            if root in {"click", "tqdm", "anthropic"} or module.startswith("ctxtool.cli"):
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


def test_validate_does_load_jsonschema() -> None:
    # the control for the two tests above: the method sees a lazy import when one happens
    assert "jsonschema" in imported_by_entry_point("validate", stdin=GOOD_LINE)


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
