"""The notebook opens what the CLI opens, and refuses what it refuses, in the same words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import format_names
from engine.importers import UnknownFormatError
from playground.notebook import Playground


def test_an_unknown_file_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text('{"hello": "world"}', encoding="utf-8")
    with pytest.raises(UnknownFormatError) as caught:
        Playground(str(path))
    supported = ", ".join(format_names())
    assert str(caught.value) == f"{path}: unrecognised transcript format; supported: {supported}"


def test_a_transcript_opens_by_importing_it(tmp_path: Path) -> None:
    chat = tmp_path / "data.json"
    conversation = [{"from": "human", "value": "hello"}, {"from": "gpt", "value": "hi there"}]
    chat.write_text(json.dumps([{"conversations": conversation}]), encoding="utf-8")
    playground = Playground(str(chat))
    assert [m.content for m in playground.workspace.messages] == ["hello", "hi there"]
    assert playground.workspace.header.to_dict()["importedFrom"] == {"file": str(chat), "format": "sharegpt"}
