"""Each newer format's samples are claimed by its own importer only, and no older sample by a newer one."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.importers import Sniff, detect_format, folder_format
from engine.importers.new_formats import NEW_FORMATS

TESTS = Path(__file__).resolve().parents[1]
DATA = TESTS / "data" / "real-sessions"
SHARED = TESTS.parents[1] / "shared" / "real-sessions"
OWN = {
    "claude-code-stream/stream.jsonl": "claude-code-stream",
    "cline/1767225600000/api_conversation_history.json": "cline",
    "copilot-cli/0cb916db-26aa-40f2-86b5-1ba81b225fd2/events.jsonl": "copilot-cli",
    "copilot-cli/phase1-task-20260730-0156-2144.json": "copilot-cli",
    "cursor-agent/8f14e45f-ceea-467f-a0e6-0d6f2d1c3b4a.jsonl": "cursor-agent",
    "gemini-cli/gemini.jsonl": "gemini-cli-jsonl",
    "openhands-v1/goal-events.jsonl": "openhands-v1",
    "qwen-code/5d0c1b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d.jsonl": "qwen-code",
}
FOLDERS = {
    "cline/1767225600000": "cline",
    "copilot-cli/0cb916db-26aa-40f2-86b5-1ba81b225fd2": "copilot-cli",
}
OLDER = sorted(
    p
    for root in (DATA, SHARED)
    if root.is_dir()
    for p in root.rglob("*.json*")
    if p.relative_to(root).as_posix() not in OWN and p.suffix in (".json", ".jsonl")
)


def claims(path: Path) -> list[str]:
    sniff = Sniff.of(path.read_text(encoding="utf-8-sig"), str(path))
    return [i.name for i in NEW_FORMATS if i.detect(sniff)]


@pytest.mark.parametrize(("relative", "fmt"), sorted(OWN.items()))
def test_a_sample_is_claimed_by_its_own_importer_only(relative: str, fmt: str) -> None:
    assert claims(DATA / relative) == [fmt]
    assert detect_format(DATA / relative) == fmt


@pytest.mark.parametrize("path", OLDER, ids=lambda p: p.name)
def test_no_older_sample_is_claimed_by_a_newer_importer(path: Path) -> None:
    assert claims(path) == []


@pytest.mark.parametrize(("relative", "fmt"), sorted(FOLDERS.items()))
def test_a_folder_is_claimed_by_its_format(relative: str, fmt: str) -> None:
    chosen = folder_format(DATA / relative)
    assert chosen is not None and chosen.name == fmt
