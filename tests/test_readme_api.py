"""The README's Python API example runs as written (from the repository root)."""

from __future__ import annotations

import re
import sys

import pytest

from tests.conftest import ROOT


def test_readme_python_example_runs(monkeypatch: pytest.MonkeyPatch, tmp_path, capsys) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("<!-- section:api -->"):text.index("<!-- /section:api -->")]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)  # type: ignore[union-attr]
    code = code.replace("/tmp/ctxtool-demo-store", str(tmp_path / "store"))
    from ctxtool.storage import durable
    durable.discard()  # a fresh process, as the example is: nothing pending from earlier tests
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out.split()
    assert int(printed[0]) > 0 and printed[1] == "of" and int(printed[2]) == 200_000


def test_import_ctxtool_stays_light() -> None:
    import subprocess
    code = ("import sys, ctxtool; ctxtool.persist; ctxtool.estimate; ctxtool.summarize; "
            "print(sorted(m for m in ('click','tqdm','jsonschema','anthropic') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
