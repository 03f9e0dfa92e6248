"""HTML views of a BuildResult: wire cards, budget bar, events, trace (the per-step chart: `charts.py`).

Pure functions, no ipywidgets: each takes engine records and returns an HTML string. Every piece of
session text goes through `html.escape`, so a session can never inject markup or script. Styles are one
`<style>` block (`STYLE`) with `lp-` class names; the widgets put it in front of each view.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from engine import (
    BuildResult,
    Decision,
    Event,
    TokenAccount,
    WireCard,
    call_arguments,
    call_name,
)
from playground.app.compare import BuildComparison
from playground.app.explain import decision_rows, why_dropped
from playground.app.views import CHANGE_SIGNS, WireRow, WireRows, category_names, tokens_delta, wire_rows

__all__ = [
    "CATEGORY_COLOURS",
    "ROLE_COLOURS",
    "STYLE",
    "budget_bar",
    "category_order",
    "events_list",
    "tokens_text",
    "trace_view",
    "wire_cards",
    "wire_summary",
]

ROLE_COLOURS = {"system": "#64748b", "user": "#2563eb", "assistant": "#059669", "tool": "#d97706"}
MARK_COLOURS = {
    "summary": "#7c3aed",
    "fence": "#0891b2",
    "assembled": "#0891b2",
    "compressed": "#a16207",
    "degraded": "#ea580c",
    "truncated": "#ea580c",
    "reminder": "#db2777",
    "dropped": "#dc2626",
}
CATEGORY_COLOURS = {
    "core": "#64748b",
    "user": "#2563eb",
    "fence": "#0891b2",
    "working_memory": "#059669",
    "tool_history": "#d97706",
    "summary": "#7c3aed",
    "reminder": "#db2777",
}
STYLE = """<style>
.lp-view{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;line-height:1.35;
 color:var(--jp-ui-font-color1,#0f172a)}
.lp-card{border:1px solid var(--jp-border-color1,#cbd5e1);border-left:5px solid var(--lp-role);
 border-radius:4px;margin:4px 0;padding:3px 6px;background:var(--jp-layout-color1,#fff);
 color:var(--jp-content-font-color1,#0f172a)}
.lp-head{font-size:12px;color:var(--jp-ui-font-color1,#334155)}.lp-role{font-weight:600;color:var(--lp-role)}
.lp-body{white-space:pre-wrap;word-break:break-word;margin:2px 0;font-family:ui-monospace,monospace;
 font-size:12px}
.lp-mark{display:inline-block;border-radius:3px;padding:0 4px;margin-left:4px;color:#fff;font-size:11px}
.lp-src,.lp-more{font-size:11px;color:var(--jp-ui-font-color2,#64748b)}
.lp-reminder{background:#fce7f3;color:#831843}
.lp-call{font-family:ui-monospace,monospace;font-size:12px;color:var(--jp-success-color0,#065f46)}
.lp-dropped{border:1px dashed #dc2626;color:var(--jp-error-color0,#991b1b);border-radius:4px;margin:4px 0;
 padding:2px 6px;font-size:12px;background:var(--jp-layout-color2,#fef2f2)}
.lp-replaced{border-color:#7c3aed;color:var(--jp-ui-font-color1,#5b21b6);background:var(--jp-layout-color2,#f5f3ff)}
.lp-bar{position:relative;display:flex;height:22px;border:1px solid var(--jp-border-color1,#94a3b8);
 background:var(--jp-layout-color2,#f8fafc);margin:4px 0}
.lp-seg{height:100%}.lp-reserved{position:absolute;top:0;right:0;height:100%;
 background:repeating-linear-gradient(45deg,#cbd5e1,#cbd5e1 3px,#f1f5f9 3px,#f1f5f9 6px)}
.lp-line{position:absolute;top:-4px;height:30px;border-left:2px solid}
.lp-table{border-collapse:collapse;font-size:12px}.lp-table td{padding:1px 6px}
.lp-num{text-align:right;font-variant-numeric:tabular-nums}
.lp-swatch{display:inline-block;width:10px;height:10px;margin-right:4px}
.lp-over{color:#dc2626;font-weight:600}.lp-error{color:var(--jp-error-color1,#dc2626)}
.lp-muted{color:var(--jp-ui-font-color2,#64748b)}
.lp-kind{font-weight:600;color:#7c3aed;margin-right:6px}
.lp-chart .lp-current{fill:var(--jp-ui-font-color0,#0f172a)}
.lp-chart .lp-axis{fill:var(--jp-ui-font-color2,#64748b)}
</style>"""

BODY_LIMIT = 4000  # characters of one message shown before "… N more characters"


def tokens_text(count: float) -> str:
    """`18 412`: thousands grouped with a narrow no-break space."""
    return f"{round(count):,}".replace(",", "\u202f")


def _percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "–"


# -- wire cards --------------------------------------------------------------------------------------


def wire_cards(
    result: BuildResult,
    *,
    show_dropped: bool = False,
    limit: int = BODY_LIMIT,
    window: tuple[int, int] | None = None,
    rows: Sequence[WireRow] | None = None,
) -> str:
    """The wire messages as cards, in wire order; with `show_dropped`, the dropped messages
    (`playground.app.views.wire_rows`) appear as dashed lines at their place in the session, with the reason.
    `window` (start, stop) shows only those rows (a page of a long wire) and says which; `rows` are
    `wire_rows(result, show_dropped)` when the caller has them already."""
    if result.error is not None:
        return _error_box(result)
    rows = wire_rows(result, show_dropped) if rows is None else rows
    start, stop = (0, len(rows)) if window is None else window
    if isinstance(rows, WireRows):  # row k is card k's: only the window's cards are made
        cards = iter(result.cards[k] for k in range(start, min(stop, len(rows))))
    else:
        before = sum(r.kind == "card" for r in rows[:start])
        cards = iter(sorted(result.cards, key=lambda c: c.index)[before:])
    parts = []
    for row in rows[start:stop]:
        if row.kind == "card":
            parts.append(_card(next(cards), result, limit))
        else:
            decision = result.decision_for(row.message_id or "")
            if decision is not None:
                parts.append(_dropped(decision))
    shown = ""
    if window is not None and (start, stop) != (0, len(rows)):
        shown = f" · rows {min(start + 1, len(rows))}–{min(stop, len(rows))} of {len(rows)}"
    head = (
        f'<div class="lp-muted">{len(result.cards)} messages · {tokens_text(result.tokens.final_tokens)} tok'
        f"{shown}"
    )
    return f'{STYLE}<div class="lp-view lp-wire">{head}</div>{"".join(parts)}</div>'


def wire_summary(result: BuildResult, *, first: int | None = None, last: int = 0) -> str:
    """The wire as a compact table, one row per message: position, role, type, tokens, marks. With
    `first`, a longer wire shows its first `first` and last `last` messages and says how many are left out
    (a saved notebook stays small)."""
    if result.error is not None:
        return _error_box(result)
    cards = sorted(result.cards, key=lambda c: c.index)
    rows = [_summary_row(card) for card in cards]
    if first is not None and len(rows) > first + last:
        gap = f'<tr><td colspan="5" class="lp-muted">… {len(rows) - first - last} more messages</td></tr>'
        rows = [*rows[:first], gap, *rows[len(rows) - last :]]
    tokens = tokens_text(result.tokens.final_tokens)
    head = f'<div class="lp-muted">{len(result.cards)} messages · {tokens} tok</div>'
    table = f'<table class="lp-table">{"".join(rows)}</table>'
    return f'{STYLE}<div class="lp-view lp-wire-summary">{head}{table}</div>'


def _summary_row(card: WireCard) -> str:
    return _row(
        f'<td class="lp-num">#{card.index}</td>',
        _role_cell(str(card.message.get("role", "?"))),
        f"<td>{escape(card.type)}</td>",
        f'<td class="lp-num">{tokens_text(card.tokens)}</td>',
        f"<td>{''.join(_mark(mark) for mark in card.marks)}</td>",
    )


def _role_cell(role: str) -> str:
    colour = ROLE_COLOURS.get(role, "#475569")
    return f'<td><span class="lp-role" style="--lp-role:{colour}">{escape(role)}</span></td>'


def _card(card: WireCard, result: BuildResult, limit: int) -> str:
    role = str(card.message.get("role", "?"))
    colour = ROLE_COLOURS.get(role, "#475569")
    marks = "".join(_mark(mark) for mark in card.marks)
    head = (
        f'<span class="lp-role">{escape(role)}</span> · {escape(card.type)} · {tokens_text(card.tokens)} tok'
        f" · #{card.index}{marks}"
    )
    sources = ""
    if card.source_ids != (card.message_id,):
        sources = f'<div class="lp-src">carries {escape(", ".join(card.source_ids))}</div>'
    body = _body(card, result, limit)
    return (
        f'<div class="lp-card" style="--lp-role:{colour}" data-index="{card.index}"'
        f' data-id="{escape(card.message_id)}"><div class="lp-head">{head}</div>{sources}{body}</div>'
    )


def _mark(mark: str) -> str:
    colour = MARK_COLOURS.get(mark.split(":", 1)[0], "#475569")
    return f'<span class="lp-mark" style="background:{colour}">{escape(mark)}</span>'


def _body(card: WireCard, result: BuildResult, limit: int) -> str:
    content = card.message.get("content")
    text = content if isinstance(content, str) else ("" if content is None else json.dumps(content))
    appended = result.reminder.appended_text if "reminder" in card.marks else None
    reminder = ""
    if appended and text.endswith(appended):
        text, reminder = text[: -len(appended)], f'<span class="lp-reminder">{escape(appended)}</span>'
    parts = [f'<pre class="lp-body">{_clipped(text, limit)}{reminder}</pre>' if text or reminder else ""]
    parts += [f'<div class="lp-call">{_call(call)}</div>' for call in card.message.get("tool_calls") or ()]
    if card.message.get("tool_call_id"):
        parts.append(f'<div class="lp-src">answers {escape(str(card.message["tool_call_id"]))}</div>')
    return "".join(parts)


def _clipped(text: str, limit: int) -> str:
    if len(text) <= limit:
        return escape(text)
    more = f'<span class="lp-more">… {tokens_text(len(text) - limit)} more characters</span>'
    return escape(text[:limit]) + more


def _call(call: Any) -> str:
    if not isinstance(call, dict):
        return escape(json.dumps(call, ensure_ascii=False))
    return f"{escape(call_name(call))}({escape(call_arguments(call))})"


def _dropped(decision: Decision) -> str:
    """A session message no card carries: dropped, or replaced by one that does not list it (a summary)."""
    note = f" · {escape(decision.note)}" if decision.note else ""
    phase = f"{escape(decision.phase)}: " if decision.phase else ""
    fate, css = ("dropped", "lp-dropped")
    if decision.replaced_by:
        fate, css = f"replaced by {escape(decision.replaced_by)}", "lp-dropped lp-replaced"
    return (
        f'<div class="{css}" data-id="{escape(decision.message_id)}">┄ {fate} · '
        f"{escape(decision.role)} · {escape(decision.type)} {escape(decision.message_id)} · "
        f"{phase}{escape(decision.reason)}{note}</div>"
    )


def _error_box(result: BuildResult) -> str:
    error = result.error
    assert error is not None
    return (
        f'{STYLE}<div class="lp-view lp-error"><b>build failed: {escape(error.code)}</b><br>'
        f"{escape(error.message)}</div>"
    )


# -- budget ------------------------------------------------------------------------------------------


def category_order(by_category: dict[str, int]) -> list[str]:
    """The categories with tokens, in the one stacking order (`playground.app.views.category_names`)."""
    return [k for k in category_names(set(by_category)) if by_category.get(k)]


def category_colour(name: str) -> str:
    return CATEGORY_COLOURS.get(name.split(":", 1)[0], "#475569")


def budget_bar(tokens: TokenAccount, check: dict[str, Any] | None = None) -> str:
    """The stacked budget bar (categories, reserved, the summarization trigger line) and its numbers."""
    scale = max(tokens.max_tokens, tokens.final_tokens + tokens.reserved_for_response, 1)

    def width(count: float) -> str:
        return f"{100 * count / scale:.3f}%"

    order = category_order(tokens.by_category)
    segments = "".join(
        f'<div class="lp-seg" title="{escape(name)}" style="width:{width(tokens.by_category[name])};'
        f'background:{category_colour(name)}"></div>'
        for name in order
    )
    reserved = f'<div class="lp-reserved" style="width:{width(tokens.reserved_for_response)}"></div>'
    trigger = (
        f'<div class="lp-line" title="summarization trigger" style="left:{width(tokens.trigger_tokens)};'
        'border-color:#7c3aed"></div>'
    )
    bar = f'<div class="lp-bar">{segments}{reserved}{trigger}</div>'
    body = bar + _budget_table(tokens, order) + _trigger(check, tokens)
    return f'{STYLE}<div class="lp-view lp-budget">{body}</div>'


def _row(*cells: str) -> str:
    return "<tr>" + "".join(cells) + "</tr>"


def _budget_table(tokens: TokenAccount, order: list[str]) -> str:
    rows = [
        _row(
            f'<td><span class="lp-swatch" style="background:{category_colour(name)}"></span>'
            f"{escape(name)}</td>",
            f'<td class="lp-num">{tokens_text(tokens.by_category[name])}</td>',
        )
        for name in order
    ]
    used_class = "lp-num lp-over" if tokens.over_budget else "lp-num"
    numbers = [
        ("used", tokens.final_tokens, used_class, _percent(tokens.final_tokens, tokens.total_budget)),
        ("free", tokens.free, "lp-num", ""),
        ("budget", tokens.total_budget, "lp-num", ""),
        ("reserved", tokens.reserved_for_response, "lp-num", ""),
        ("max tokens", tokens.max_tokens, "lp-num", ""),
        ("working memory", tokens.wm_budget, "lp-num", ""),
        ("trigger", tokens.trigger_tokens, "lp-num", _percent(tokens.trigger_tokens, tokens.total_budget)),
    ]
    rows += [
        _row(
            f"<td>{label}</td>",
            f'<td class="{cls}">{tokens_text(value)}</td>',
            f'<td class="lp-muted">{extra}</td>',
        )
        for label, value, cls, extra in numbers
    ]
    over = '<div class="lp-over">over budget</div>' if tokens.over_budget else ""
    backend = f'<div class="lp-muted">tokens: {escape(tokens.backend)}</div>'
    return f'<table class="lp-table">{"".join(rows)}</table>{over}{backend}'


def _trigger(check: dict[str, Any] | None, tokens: TokenAccount) -> str:
    """Both stages of linnkit's summarization trigger, with their numbers (spec §5.4, §9 D8)."""
    if not check:
        return ""
    used, available, threshold = check["used"], check["available"], check["threshold"]
    ratio = _percent(tokens.trigger_tokens, tokens.total_budget)
    stage1 = "passed" if check["precheckPassed"] else "stop"
    lines = [
        f"summarization stage 1: kept {tokens_text(used)} ÷ remaining {tokens_text(available)} = "
        f"{_percent(used, available)} (trigger {ratio}) → {stage1}"
    ]
    if check["precheckPassed"] and check.get("contentTokens") is None:
        lines.append(f"stage 2: kept {tokens_text(used)} < 0.9 × {tokens_text(threshold)} → not fired")
    elif check["precheckPassed"]:
        verdict = "fired" if check["fired"] else "not fired"
        content = tokens_text(check["contentTokens"])
        lines.append(f"stage 2: content-only count {content} vs {tokens_text(threshold)} → {verdict}")
    return "".join(f'<div class="lp-muted lp-trigger">{escape(line)}</div>' for line in lines)


# -- events and trace --------------------------------------------------------------------------------


def events_list(result: BuildResult) -> str:
    """Events, then warnings, then the build error if there is one."""
    items = [_event(event) for event in result.events]
    items += [f'<li><span class="lp-kind">warning</span>{escape(text)}</li>' for text in result.warnings]
    body = f"<ul>{''.join(items)}</ul>" if items else '<div class="lp-muted">no events</div>'
    return f'{STYLE}<div class="lp-view lp-events">{body}</div>'


def _event(event: Event) -> str:
    ids = f' <span class="lp-muted">({len(event.message_ids)} msgs)</span>' if event.message_ids else ""
    return f'<li><span class="lp-kind">{escape(event.kind)}</span>{escape(event.title)}{ids}</li>'


def trace_view(result: BuildResult, message_id: str) -> str:
    """The fate of one message: its decision, the cards carrying it, events and ContextTrace entries."""
    decision = result.decision_for(message_id)
    title = f"<b>trace {escape(message_id)}</b>"
    if decision is None:
        return f'{STYLE}<div class="lp-view">{title}<div class="lp-muted">no decision recorded</div></div>'
    rows = _rows(decision_rows(decision, tokens_text, why_dropped(result, decision)))
    carriers = result.cards_carrying(message_id)
    if carriers:
        rows += _rows([("on the wire", ", ".join(f"#{i}" for i in carriers))])
    events = "".join(_event(e) for e in result.events_touching(message_id))
    events_html = f"<div><b>events</b><ul>{events}</ul></div>" if events else ""
    return (
        f'{STYLE}<div class="lp-view lp-trace">{title}<table class="lp-table">{rows}</table>{events_html}'
        + (f"{_trace_entries(result, message_id)}</div>")
    )


def _rows(pairs: Iterable[tuple[str, str]]) -> str:
    return "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in pairs)


def _trace_entries(result: BuildResult, message_id: str) -> str:
    events = (result.trace or {}).get("events") or []
    mine = [e for e in events if e.get("messageId") == message_id]
    if not mine:
        return ""
    text = "\n".join(json.dumps(e, ensure_ascii=False) for e in mine)
    return f'<div><b>ContextTrace</b><pre class="lp-body">{escape(text)}</pre></div>'


# -- compare -------------------------------------------------------------------------------------------


def comparison(compared: BuildComparison, policy_changes: list[str]) -> str:
    """Build A (pinned) against B (current): what changed in the inputs, then the messages B adds, drops
    and re-counts."""
    a, b = compared.a, compared.b
    head = (
        f"<b>A → B</b> · messages {compared.a_messages} → {compared.b_messages} · "
        f"tokens {tokens_text(a.final_tokens)} → {tokens_text(b.final_tokens)}"
    )
    changes = "".join(f"<li>{escape(line)}</li>" for line in policy_changes)
    rows = "".join(
        _row(*(f"<td>{cell}</td>" for cell in (
            CHANGE_SIGNS[d.change], escape(d.message_id), escape(f"{d.role}·{d.type}"),
            "" if d.a_tokens is None else tokens_text(d.a_tokens),
            "" if d.b_tokens is None else tokens_text(d.b_tokens),
            tokens_delta(d.delta),
        )))
        for d in compared.deltas
    )  # fmt: skip
    table = f'<table class="lp-table lp-compare">{rows}</table>' if rows else "<div>same wire</div>"
    return f'{STYLE}<div class="lp-view">{head}<ul>{changes}</ul>{table}</div>'
