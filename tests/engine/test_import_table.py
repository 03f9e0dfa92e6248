"""The README's table of formats lists every importer, with its own one-line summary, in detection order."""

from __future__ import annotations

import re
from pathlib import Path

from engine.importers import importers, registry

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_table_lists_every_format_with_its_summary_in_detection_order() -> None:
    rows = re.findall(r"^  \| `([a-z0-9-]+)` \| (.+?) \| (real|fixture|round trip) \| (.+) \|$",
                      README.read_text(encoding="utf-8"), re.M)  # fmt: skip
    plugins = {p.name for p in registry.plugins()}  # installed by the user, not ours to list
    assert [name for name, *_ in rows] == [i.name for i in importers() if i.name not in plugins]
    summaries = {i.name: i.summary.replace("|", "/") for i in importers()}
    assert all(summary == summaries[name] for name, _, _, summary in rows)
