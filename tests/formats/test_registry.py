"""The registry: each builtin adapter under its own name, in detection order, imported only
when its format is asked for, and register/unregister for formats defined elsewhere."""

from __future__ import annotations

import json
import subprocess
import sys

from ctxtool.formats import registry
from ctxtool.formats.adapter import FormatAdapter
from tests.conftest import ROOT


def test_each_builtin_adapter_has_its_key_as_name() -> None:
    assert [registry.adapter_for(name).name for name in registry.BUILTIN] == list(registry.BUILTIN)
    assert [a.name for a in registry.adapters()][:len(registry.BUILTIN)] == list(registry.BUILTIN)


def loaded_adapters(code: str) -> list[str]:
    script = (f"{code}\nimport sys, json\nprint(json.dumps(sorted(m for m in sys.modules "
              "if m.startswith('ctxtool.formats.'))))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=ROOT,
                          check=True, timeout=120)
    modules = json.loads(proc.stdout.splitlines()[-1])
    return [name for name, (module, _) in registry.BUILTIN.items() if module in modules]


def test_an_adapter_is_imported_when_its_format_is_asked_for() -> None:
    head = "from ctxtool.formats import registry\n"
    assert loaded_adapters(head + "registry.format_names()") == []
    assert loaded_adapters(head + "registry.adapter_for('claude-code')") == ["claude-code"]
    assert loaded_adapters(head + "registry.adapters()") == list(registry.BUILTIN)  # control


class Other(FormatAdapter):
    name = "claude-code"


class New(FormatAdapter):
    name = "toy-registry"


def test_register_replaces_in_place_and_unregister_gives_the_builtin_back() -> None:
    builtin = registry.adapter_for("claude-code")
    new, other = registry.register(New()), registry.register(Other())
    try:
        assert registry.adapter_for("claude-code") is other
        assert registry.format_names() == (*registry.BUILTIN, "toy-registry")
        assert registry.adapters()[0] is other and registry.adapters()[-1] is new
    finally:
        registry.unregister("claude-code")
        registry.unregister("toy-registry")
    assert type(registry.adapter_for("claude-code")) is type(builtin)
    assert registry.format_names() == tuple(registry.BUILTIN)
