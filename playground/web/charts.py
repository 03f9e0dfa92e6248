"""The tokens of every step as one plain SVG chart: a bar per step (stacked by token category when asked),
the budget and trigger lines, S/C/R markers, the current step highlighted. Pure functions, no widgets;
every label is escaped."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from playground.app.views import StepSample
from playground.web.views import category_colour, category_order, tokens_text

__all__ = ["step_bars", "step_chart"]


def step_chart(
    samples: Sequence[StepSample], current: int | None = None, *, width: int = 640, stacked: bool = False
) -> str:
    """Plain SVG: one bar per step (final tokens; with `stacked`, one segment per token category), the
    budget and trigger lines, S/C/R markers. `current` is the 1-based step drawn highlighted (a bar in
    the theme's foreground colour and a ▼ above it)."""
    height, top, bottom = 110, 14, 96
    if not samples:
        return '<div class="lp-muted">no steps</div>'
    peak = max(max(s.final_tokens for s in samples), max(s.total_budget for s in samples), 1) * 1.05
    slot = width / len(samples)

    def y(value: float) -> float:
        return bottom - (bottom - top) * value / peak

    shapes = [_step_bar(s, i * slot, slot, y, s.step == current, stacked) for i, s in enumerate(samples)]
    shapes.append(_hline(y(samples[-1].total_budget), width, "#dc2626", "budget"))
    shapes.append(_hline(y(samples[-1].trigger_tokens), width, "#7c3aed", "trigger", dash=True))
    label = f"{len(samples)} steps · peak {tokens_text(max(s.final_tokens for s in samples))} tok"
    shapes.append(
        f'<text class="lp-axis" x="2" y="{height - 2}" font-size="10" fill="#64748b">{label}</text>'
    )
    return (
        f'<svg class="lp-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">{"".join(shapes)}</svg>'
    )


def _step_bar(sample: StepSample, x: float, slot: float, y, current: bool, stacked: bool = False) -> str:
    top = y(sample.final_tokens)
    colour = "#0f172a" if current else ("#dc2626" if sample.final_tokens > sample.total_budget else "#64748b")
    tip = f"step {sample.step}: {tokens_text(sample.final_tokens)} tok {escape(sample.markers)}".strip()
    left, bar_width = f"{x + slot * 0.1:.2f}", f"{max(slot * 0.8, 0.5):.2f}"
    css = ' class="lp-current"' if current else ""
    counts = dict(getattr(sample, "by_category", ()))
    if stacked and counts and not current:
        parts, base = [], 0
        for name in category_order(counts):
            upper, lower = y(base + counts[name]), y(base)
            parts.append(
                f'<rect x="{left}" y="{upper:.2f}" width="{bar_width}" height="{lower - upper:.2f}" '
                f'fill="{category_colour(name)}"><title>{tip} · {escape(name)} {tokens_text(counts[name])}'
                "</title></rect>"
            )
            base += counts[name]
        bar = "".join(parts)
    else:
        bar = (
            f'<rect{css} x="{left}" y="{top:.2f}" width="{bar_width}" '
            f'height="{y(0) - top:.2f}" fill="{colour}"><title>{tip}</title></rect>'
        )
    if current:
        bar += (
            f'<text class="lp-current" x="{x + slot / 2:.2f}" y="{max(top - 2, 20):.2f}" font-size="10" '
            f'text-anchor="middle" fill="{colour}">▼</text>'
        )
    if sample.markers:
        bar += (
            f'<text x="{x + slot / 2:.2f}" y="10" font-size="9" text-anchor="middle" '
            f'fill="#7c3aed">{escape(sample.markers)}</text>'
        )
    return bar


def step_bars(samples: Sequence[StepSample], current: int | None = None, *, height: int = 90) -> str:
    """The step chart as plain HTML boxes (no SVG): what a front end that sanitizes SVG away (an untrusted
    notebook in JupyterLab, GitHub) still draws. One column per step, stacked by category; the current
    step outlined; the budget and the markers in the caption."""
    if not samples:
        return '<div class="lp-muted">no steps</div>'
    peak = max(max(s.final_tokens for s in samples), max(s.total_budget for s in samples), 1) * 1.05
    columns = []
    for sample in samples:
        counts = dict(getattr(sample, "by_category", ()))
        total = sum(counts.values()) or 1
        parts = (
            "".join(
                f'<div style="height:{100 * counts[name] / total:.2f}%;'
                f'background:{category_colour(name)}"></div>'
                for name in reversed(category_order(counts))
            )
            or '<div style="height:100%;background:#64748b"></div>'
        )
        edge = "border:2px solid #0f172a;" if sample.step == current else ""
        tip = f"step {sample.step}: {tokens_text(sample.final_tokens)} tok {sample.markers}".strip()
        columns.append(
            f'<div class="lp-step-col" title="{escape(tip)}" style="flex:1 1 0;min-width:0;{edge}'
            f'height:{100 * sample.final_tokens / peak:.2f}%">{parts}</div>'
        )
    marked = {m: [str(s.step) for s in samples if m in s.markers] for m in "SCR"}
    notes = " · ".join(f"{m} at {', '.join(steps[:12])}" for m, steps in marked.items() if steps)
    caption = (
        f"{len(samples)} steps · peak {tokens_text(max(s.final_tokens for s in samples))} tok · "
        f"budget {tokens_text(samples[-1].total_budget)} tok" + (f" · {notes}" if notes else "")
    )
    return (
        f'<div class="lp-step-bars" style="display:flex;align-items:flex-end;height:{height}px;'
        f'border-bottom:1px solid #94a3b8">{"".join(columns)}</div>'
        f'<div class="lp-muted">{escape(caption)}</div>'
    )


def _hline(y: float, width: int, colour: str, name: str, dash: bool = False) -> str:
    style = ' stroke-dasharray="4 3"' if dash else ""
    return (
        f'<line x1="0" x2="{width}" y1="{y:.2f}" y2="{y:.2f}" stroke="{colour}"{style}>'
        f"<title>{name}</title></line>"
    )
