"""Every sample of the formats added for issue 31 (OTel, Inspect AI, ATIF, pi, Kimi, Factory Droid,
SpecStory, OpenCode) builds cleanly, and none of their importers claims another format's sample."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import build_context, check_invariants, effective_policy
from engine.importers import import_file
from engine.importers.detect import read_source
from engine.importers.registry import Sniff, find

DATA = Path(__file__).resolve().parents[1] / "data" / "real-sessions"
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "real-sessions"
SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
NEW = {
    "otel": "otel",
    "inspect-ai": "inspect-ai",
    "atif": "atif",
    "pi": "pi",
    "kimi": "kimi",
    "factory-droid": "factory-droid",
    "specstory": "specstory",
}
TRANSCRIPT = (".json", ".jsonl", ".eval", ".md")


def _samples(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix in TRANSCRIPT)


NO_MESSAGES = {"copilot-cli-phase2-otel-20260803-1550-2169.jsonl"}  # its import says why: test_import_otel
NEW_SAMPLES = [p for folder in NEW for p in _samples(DATA / folder) if p.name not in NO_MESSAGES] + [
    DATA / "opencode" / "storage"
]
OTHERS = [
    p
    for root in (DATA, SHARED)
    if root.is_dir()
    for folder in sorted(root.iterdir())
    if folder.is_dir() and folder.name not in (*NEW, "opencode")
    for p in _samples(folder)
] + sorted(SAMPLES.glob("*.jsonl"))


@pytest.mark.parametrize("path", NEW_SAMPLES, ids=lambda p: p.name)
def test_each_new_sample_builds_without_a_failure_or_a_provider_problem(path: Path) -> None:
    result = build_context(import_file(path).messages, effective_policy({}))
    assert result.error is None
    assert not check_invariants(result).errors
    assert not result.provider_problems


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_new_importer_claims_another_formats_sample(path: Path) -> None:
    text, _ = read_source(path)
    sniff = Sniff.of(text, path.name)
    new = (*NEW.values(), "kimi-context", "opencode", "linn-export")
    assert [name for name in new if find(name).detect(sniff)] == []
