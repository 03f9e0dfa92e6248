"""A third-party importer registers through a real `linn_playground.importers` entry point: the README's
example, installed as a package (a dist-info folder on sys.path), not a mock of the registry."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

from engine.importers import import_file, registry
from playground.cli.main import main

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("- **Your own format** is a plug-in") :]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    return "\n".join(line.removeprefix("  ") for line in code.group(1).splitlines()) + "\n"


@pytest.fixture
def installed_plugin(tmp_path, monkeypatch):
    package = tmp_path / "my_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "importer.py").write_text(_readme_example(), encoding="utf-8")
    dist = tmp_path / "my_pkg-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-pkg\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[linn_playground.importers]\nmine = my_pkg.importer:MINE\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    registry.plugins.cache_clear()
    yield tmp_path
    registry.plugins.cache_clear()
    sys.modules.pop("my_pkg.importer", None)
    sys.modules.pop("my_pkg", None)


def test_an_entry_point_importer_is_detected_and_read(installed_plugin, capsys):
    assert [i.name for i in registry.plugins()] == ["mine"]
    names = [i.name for i in registry.importers()]
    assert names.index("mine") == names.index("anthropic") - 1  # after the specific ones, before the generic
    path = installed_plugin / "chat.txt"
    path.write_text("USER: hello\nBOT: hi there\n# a comment\nUSER: bye\n", encoding="utf-8")
    result = import_file(path)
    assert result.format == "mine"
    assert [(m.id, m.role, m.type, m.content) for m in result.messages] == [
        ("u1", "user", "user_input", "hello"),
        ("b2", "assistant", "final_answer", "hi there"),
        ("u4", "user", "user_input", "bye"),
    ]
    assert result.unknown == {"line type 'other'": (None, [3])}
    assert main(["import", str(path), "--from", "mine"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("detected format: mine; 3 messages\n")
    assert "  unknown line type 'other': 1 (lines 3), left out\n" in out
