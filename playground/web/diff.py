"""The diff of two runs as one self-contained HTML page (no script, no external resource). No UI import.

Every piece of session text goes through `html.escape`; the page is written by `html_report.write_report`
(atomic, never over a session).
"""

from __future__ import annotations

from html import escape

from playground.app.costing import cost_rows, money
from playground.app.diffing import break_text, prefix_text, signed_tokens, step_title
from playground.app.rundiff import ALIGNMENTS, MessageChange, RunDiff, StepDiff
from playground.app.views import tokens_long
from playground.web.report import PAGE_STYLE

DIFF_STYLE = """<style>
.ld-step{border:1px solid #e2e8f0;border-radius:4px;margin:8px 0;padding:4px 8px}
.ld-head{font-weight:600;font-size:13px}.ld-cols{display:grid;grid-template-columns:1fr 1fr;gap:8px;
 font-size:12px;color:#334155}.ld-msg{font:12px ui-monospace,monospace;white-space:pre-wrap;margin:3px 0;
 word-break:break-word}.ld-added{color:#166534}.ld-removed{color:#991b1b}
.ld-msg del{background:#fee2e2;color:#991b1b}
.ld-msg ins{background:#dcfce7;color:#166534;text-decoration:none}
.ld-break{color:#9a3412}.ld-totals td,.ld-totals th{padding:1px 10px;text-align:right;font-size:13px}
</style>"""


def _words(change: MessageChange) -> str:
    out = []
    for op, text in change.words:
        tag = {"-": "del", "+": "ins"}.get(op)
        out.append(f"<{tag}>{escape(text)}</{tag}>" if tag else escape(text))
    return "".join(out)


def _message(change: MessageChange) -> str:
    if change.change == "added":
        head = f"+ [{change.index_b}] {change.id_b} ({change.role}) {change.tokens_b} tok"
        return f'<div class="ld-msg ld-added">{escape(head)}</div>'
    if change.change == "removed":
        head = f"− [{change.index_a}] {change.id_a} ({change.role}) {change.tokens_a} tok"
        return f'<div class="ld-msg ld-removed">{escape(head)}</div>'
    head = f"~ [{change.index_a}→{change.index_b}] {change.id_a} → {change.id_b} ({change.role}) "
    head += f"{change.tokens_a} → {change.tokens_b} tok"
    return f'<div class="ld-msg">{escape(head)}<br>{_words(change)}</div>'


def _side(step: StepDiff, name: str) -> str:
    side = step.a if name == "A" else step.b
    if side is None:
        return f"<div><b>{name}</b>: no such step</div>"
    figures = (
        f"{tokens_long(side.tokens)} tok sent, {tokens_long(side.cached)} cached, {money(side.cost_usd)}"
    )
    brk = f'<div class="ld-break">{escape(break_text(side))}</div>'
    return f"<div><b>{name}</b> step {side.step} ({side.messages} messages): {escape(figures)}{brk}</div>"


def step_html(step: StepDiff) -> str:
    delta = step.cost_delta
    head = f"{step_title(step)} · tokens {signed_tokens(step.tokens_delta)}"
    if delta is not None:
        head += f" · cost {'+' if delta > 0 else '−' if delta < 0 else '±'}{money(abs(delta))}"
    if step.break_change:
        head += f" · cache break {step.break_change}"
    prefix = ""
    if step.prefix is not None:
        prefix = f"<div>{escape(prefix_text(step))}</div>"
    body = "".join(_message(change) for change in step.messages)
    cols = f'<div class="ld-cols">{_side(step, "A")}{_side(step, "B")}</div>'
    return f'<section class="ld-step"><div class="ld-head">{escape(head)}</div>{cols}{prefix}{body}</section>'


def totals_html(diff: RunDiff) -> str:
    if diff.totals_a is None or diff.totals_b is None:
        return ""
    rows = "".join(
        f"<tr><th style='text-align:left'>{escape(label)}</th><td>{escape(x)}</td><td>{escape(y)}</td>"
        f"<td>{escape(d)}</td></tr>"
        for label, x, y, d in cost_rows(diff.totals_a, diff.totals_b)
    )
    head = "<tr><th></th><th>A</th><th>B</th><th>B − A</th></tr>"
    return f'<h2>Totals</h2><table class="ld-totals">{head}{rows}</table>'


def diff_page(diff: RunDiff, *, every_step: bool = False) -> str:
    """The page: what was compared, the alignment, the totals, then each step that differs."""
    changed = diff.changed_steps
    note = (
        f"aligned {ALIGNMENTS[diff.alignment]}: {len(diff.steps)} steps, {len(changed)} differ "
        f"(wire shape {diff.shape})"
    )
    shown = range(len(diff.steps)) if every_step else changed
    same = "<p>The two runs sent the same context at every step.</p>"
    steps = "".join(step_html(diff.steps[n]) for n in shown) or same
    title = "Diff of two runs"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title>{PAGE_STYLE}{DIFF_STYLE}</head>\n<body><h1>{title}</h1>"
        f'<div class="lr-meta">A: {escape(diff.label_a)}<br>B: {escape(diff.label_b)}<br>'
        f"{escape(note)}</div>\n"
        f"{totals_html(diff)}<h2>Steps</h2>{steps}\n</body></html>\n"
    )
