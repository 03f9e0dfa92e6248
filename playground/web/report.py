"""A self-contained HTML report of a build or a replay, for a teacher to hand out. No UI import.

One file, no script, no external resource: the wire (cards, dropped messages in place), the budget bars,
the step chart (inline SVG), the events, and the policy as YAML. The renderers are the notebook's pure HTML
views (`playground.web.views`), so every piece of session text is escaped there; the parts written
here escape theirs too. Writing is atomic and refuses to replace the session file.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

import yaml

from engine.policy import PolicyFileError, write_atomic
from engine.result import BuildResult
from playground.app.views import ReportStep, ReportView
from playground.web.charts import step_chart
from playground.web.views import budget_bar, events_list, wire_cards

__all__ = ["build_report", "replay_report", "report_page", "write_report"]

PAGE_STYLE = """<style>
body{margin:16px auto;max-width:980px;font-family:system-ui,sans-serif;color:#0f172a;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 4px;border-bottom:1px solid #e2e8f0}
.lr-meta{color:#475569;font-size:13px}.lr-policy{background:#f8fafc;border:1px solid #e2e8f0;padding:6px;
 font:12px ui-monospace,monospace;white-space:pre-wrap}
.lr-steps{border-collapse:collapse;font-size:12px}.lr-steps td,.lr-steps th{padding:1px 8px;text-align:right}
</style>"""


def build_report(
    result: BuildResult,
    *,
    title: str,
    policy: dict[str, Any],
    steps: Sequence[ReportStep] = (),
    current_step: int | None = None,
    note: str = "",
) -> str:
    """The whole page for one build (`steps` adds the chart of the session's steps)."""
    sections = [
        _section("Budget", budget_bar(result.tokens, result.summarization_check)),
        _section("What the model receives", wire_cards(result, show_dropped=True)),
        _section("Events", events_list(result)),
    ]
    if steps:
        sections.insert(0, _section("Steps", step_chart(steps, current_step) + _step_table(steps)))
    sections.append(_section("Policy", f'<pre class="lr-policy">{escape(_yaml(policy))}</pre>'))
    return _page(title, note, sections)


def report_page(view: ReportView) -> str:
    """The page of a workspace's `report_view()`."""
    return build_report(
        view.result,
        title=view.title,
        policy=view.policy,
        steps=view.steps,
        current_step=view.current_step,
        note=view.note,
    )


def replay_report(
    steps: Sequence[ReportStep], last: BuildResult | None, *, title: str, policy: dict[str, Any]
) -> str:
    """A replay: the chart and table of every step, then the last step's build in full."""
    if last is None:
        return _page(title, "no LLM call to replay", [])
    note = f"replay of {len(steps)} steps; the wire and budget below are the last step's"
    return build_report(last, title=title, policy=policy, steps=steps, current_step=steps[-1].step, note=note)


def write_report(path: str | Path, page: str, *, protected: Iterable[str | Path] = ()) -> Path:
    """Write atomically; never over a protected file (the session)."""
    return write_atomic(path, page, protected=[p for p in protected if p])


def write_page_said(out: str, page: str, protected: Iterable[str | Path], what: str) -> bool:
    """Write a page (`write_report`) and say so on stdout, or why not in one line on stderr (False)."""
    try:
        write_report(out, page, protected=protected)
    except PolicyFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return False
    except OSError as error:
        print(f"error: {out}: {error.strerror or error}", file=sys.stderr)
        return False
    print(f"{what} written to {out}")
    return True


def _page(title: str, note: str, sections: list[str]) -> str:
    meta = f'<div class="lr-meta">{escape(note)}</div>' if note else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title>{PAGE_STYLE}</head>\n"
        f"<body><h1>{escape(title)}</h1>{meta}\n" + "\n".join(sections) + "\n</body></html>\n"
    )


def _section(heading: str, body: str) -> str:
    return f"<section><h2>{escape(heading)}</h2>{body}</section>"


def _step_table(steps: Sequence[ReportStep]) -> str:
    head = "<tr><th>step</th><th>messages</th><th>tokens</th><th>budget</th><th>marks</th>" + (
        "<th>carried</th><th style='text-align:left'>reminders</th></tr>"
    )
    rows = "".join(
        f"<tr><td>{s.step}</td><td>{s.messages}</td><td>{s.final_tokens}</td><td>{s.total_budget}</td>"
        f"<td>{escape(s.markers) or '-'}</td><td>{s.carried}</td>"
        f"<td style='text-align:left'>{escape(', '.join(s.reminders)) or '-'}</td></tr>"
        for s in steps
    )
    return f'<details><summary>every step</summary><table class="lr-steps">{head}{rows}</table></details>'


def _yaml(policy: dict[str, Any]) -> str:
    return yaml.safe_dump(policy, sort_keys=False, allow_unicode=True) if policy else "(defaults)\n"
