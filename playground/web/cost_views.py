"""Pure HTML/SVG renderings of costs: the per-step chart of sent vs cached tokens, a session's totals, A vs B,
and a sweep's cost-against-loss plot with its Pareto front. No UI import, nothing fetched: plain inline SVG,
so it shows the same in Jupyter, Voilà and an exported page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from engine.cost import SessionCost, StepCost

CACHED, NEW, BREAK = "#16a34a", "#94a3b8", "#dc2626"


def _svg(width: int, height: int, shapes: list[str]) -> str:
    return (
        f'<svg class="lp-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">{"".join(shapes)}</svg>'
    )


def cost_chart(steps: Sequence[StepCost], *, width: int = 640) -> str:
    """One bar a step: tokens sent, its cached prefix green, the new part grey; a red tick where the
    prefix broke (the mechanism in the tooltip)."""
    height, top, bottom = 120, 12, 100
    if not steps:
        return '<div class="lp-muted">no steps</div>'
    peak = max(max(s.tokens_sent for s in steps), 1) * 1.05
    slot = width / len(steps)

    def y(value: float) -> float:
        return bottom - (bottom - top) * value / peak

    shapes = []
    for i, step in enumerate(steps):
        x, w = i * slot + slot * 0.1, max(slot * 0.8, 0.5)
        tip = f"step {step.step}: sent {step.tokens_sent}, cached {step.cached_tokens}" + (
            f"; prefix broke at message {step.break_at} ({step.mechanism})" if step.mechanism else ""
        )
        cached_top, sent_top = y(step.cached_tokens), y(step.tokens_sent)
        shapes.append(
            f"<g><title>{escape(tip)}</title>"
            f'<rect x="{x:.2f}" y="{sent_top:.2f}" width="{w:.2f}" height="{cached_top - sent_top:.2f}" '
            f'fill="{NEW}"/><rect x="{x:.2f}" y="{cached_top:.2f}" width="{w:.2f}" '
            f'height="{y(0) - cached_top:.2f}" fill="{CACHED}"/></g>'
        )
        if step.mechanism:
            shapes.append(
                f'<text x="{x + w / 2:.2f}" y="9" font-size="9" text-anchor="middle" fill="{BREAK}">'
                f"{escape(step.mechanism[:1].upper())}</text>"
            )
    legend = (
        f'<text x="2" y="{height - 4}" font-size="10" fill="#64748b">{len(steps)} steps · '
        f'<tspan fill="{CACHED}">■ cached</tspan> <tspan fill="{NEW}">■ new</tspan> '
        f'<tspan fill="{BREAK}">letter: what broke the prefix</tspan></text>'
    )
    return _svg(width, height, [*shapes, legend])


RECORDED, REBUILT, POLICY = "#d97706", "#64748b", "#2563eb"


def record_chart(steps: Sequence[StepCost], *, width: int = 640) -> str:
    """A recorded session's prompt per step: what the provider counted (amber), the as-recorded rebuild's
    prediction of it (grey) and this policy's predicted prompt (blue), on one scale; empty without a
    record."""
    if not any(s.recorded_prompt_tokens is not None for s in steps):
        return ""
    height, top, bottom = 120, 8, 100
    series = [
        ("recorded", RECORDED, [s.recorded_prompt_tokens for s in steps]),
        ("as recorded", REBUILT, [s.as_recorded_prompt_tokens for s in steps]),
        ("this policy", POLICY, [s.predicted_prompt_tokens for s in steps]),
    ]
    peak = max(max((v for _, _, vs in series for v in vs if v is not None), default=1), 1) * 1.05
    slot = width / len(steps)
    shapes = []
    for name, color, values in series:
        points = " ".join(
            f"{(i + 0.5) * slot:.2f},{bottom - (bottom - top) * v / peak:.2f}"
            for i, v in enumerate(values)
            if v is not None
        )
        if points:
            shapes.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{points}">'
                          f"<title>{escape(name)}</title></polyline>")  # fmt: skip
    for i, step in enumerate(steps):
        if step.rebuild_error is not None:
            tip = (f"step {step.step}: recorded {step.recorded_prompt_tokens}, as recorded "
                   f"{step.as_recorded_prompt_tokens} ({100 * step.rebuild_error:+.1f}%), this policy "
                   f"{step.predicted_prompt_tokens}")  # fmt: skip
            shapes.append(f'<rect x="{i * slot:.2f}" y="{top}" width="{slot:.2f}" height="{bottom - top}" '
                          f'fill="transparent"><title>{escape(tip)}</title></rect>')  # fmt: skip
    legend = (
        f'<text x="2" y="{height - 4}" font-size="10" fill="#64748b">prompt per step · '
        + " ".join(f'<tspan fill="{color}">— {escape(name)}</tspan>' for name, color, _ in series)
        + "</text>"
    )
    return _svg(width, height, [*shapes, legend])


def totals_table(lines: Sequence[tuple[str, str]], title: str = "Session cost") -> str:
    rows = "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in lines)
    return f'<div class="lp-cost"><b>{escape(title)}</b><table class="lp-table">{rows}</table></div>'


def compare_table(rows: Sequence[tuple[str, str, str, str]]) -> str:
    head = "<tr><th></th><th>A</th><th>B</th><th>B − A</th></tr>"
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f'<div class="lp-cost"><b>Session cost, A vs B</b><table class="lp-table">{head}{body}</table></div>'
    )


def session_line(totals: SessionCost) -> str:
    return f"{totals.steps} steps · cached {totals.cached_share:.0%} · {totals.breaks} breaks"


# -- sweeps: cost against what is lost -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PolicyPoint:
    policy: str
    cost: float
    lost: float


def pareto_front(points: Sequence[PolicyPoint]) -> list[PolicyPoint]:
    """The points no other point beats on both axes (cost and loss, lower is better), by cost."""
    front = [
        p
        for p in points
        if not any(
            (q.cost <= p.cost and q.lost <= p.lost) and (q.cost < p.cost or q.lost < p.lost) for q in points
        )
    ]
    return sorted(front, key=lambda p: (p.cost, p.lost))


def points_of(
    summary: Sequence[dict[str, Any]], cost: str = "costUsd.sum", lost: str = "userRequestsDropped.sum"
) -> list[PolicyPoint]:
    return [
        PolicyPoint(str(line["policy"]), float(line[cost]), float(line[lost]))
        for line in summary
        if line.get(cost) is not None and line.get(lost) is not None
    ]


def pareto_plot(points: Sequence[PolicyPoint], *, width: int = 560, height: int = 320,
                lost_label: str = "user requests lost (sum over sessions)") -> str:  # fmt: skip
    """A scatter of the policies (cost →, lost ↑), the Pareto front joined and ringed, each point numbered;
    the legend below names the policies."""
    if not points:
        return '<div class="lp-muted">no priced rows to plot</div>'
    left, right, top, bottom = 56, width - 12, 12, height - 40
    xs, ys = [p.cost for p in points], [p.lost for p in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = 0.0, max(max(ys), 1.0)
    pad = (x1 - x0) * 0.08 or max(x1 * 0.05, 1e-6)
    x0, x1 = x0 - pad, x1 + pad

    def px(v: float) -> float:
        return left + (right - left) * (v - x0) / (x1 - x0)

    def py(v: float) -> float:
        return bottom - (bottom - top) * (v - y0) / ((y1 - y0) * 1.1)

    front = pareto_front(points)
    on_front = {p.policy for p in front}
    shapes = [
        f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#94a3b8"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#94a3b8"/>',
        f'<text x="{(left + right) / 2:.0f}" y="{height - 8}" font-size="11" text-anchor="middle" '
        f'fill="#475569">estimated cost, USD (sum over sessions) →</text>',
        f'<text x="12" y="{(top + bottom) / 2:.0f}" font-size="11" text-anchor="middle" fill="#475569" '
        f'transform="rotate(-90 12 {(top + bottom) / 2:.0f})">{escape(lost_label)}</text>',
        f'<text x="{left}" y="{bottom + 14}" font-size="10" fill="#64748b">${x0 + pad:.4f}</text>',
        f'<text x="{right}" y="{bottom + 14}" font-size="10" text-anchor="end" fill="#64748b">'
        f"${x1 - pad:.4f}</text>",
        f'<text x="{left - 4}" y="{py(y1):.1f}" font-size="10" text-anchor="end" fill="#64748b">'
        f"{y1:g}</text>",
        f'<text x="{left - 4}" y="{bottom}" font-size="10" text-anchor="end" fill="#64748b">0</text>',
    ]
    if len(front) > 1:
        path = " ".join(f"{px(p.cost):.1f},{py(p.lost):.1f}" for p in front)
        shapes.append(f'<polyline points="{path}" fill="none" stroke="{CACHED}" stroke-width="2"/>')
    numbers: dict[tuple[float, float], list[str]] = {}  # policies at one spot share one label: "5,6"
    for number, point in enumerate(points, start=1):
        numbers.setdefault((point.cost, point.lost), []).append(str(number))
    for number, point in enumerate(points, start=1):
        x, y = px(point.cost), py(point.lost)
        same = numbers[(point.cost, point.lost)]
        label = ",".join(same) if same[0] == str(number) else ""
        best = point.policy in on_front
        tip = f"{point.policy}: ${point.cost:.4f}, lost {point.lost:g}" + (" (Pareto front)" if best else "")
        ring = f'<circle cx="{x:.1f}" cy="{y:.1f}" r="8" fill="none" stroke="{CACHED}" stroke-width="2"/>'
        shapes.append(
            f"<g><title>{escape(tip)}</title>{ring if best else ''}"
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{"#0f172a" if best else "#94a3b8"}"/>'
            f'<text x="{x + 9:.1f}" y="{y - 6:.1f}" font-size="10" fill="#0f172a">{label}</text></g>'
        )
    legend = "".join(
        f"<li>{'<b>' if p.policy in on_front else ''}{escape(p.policy)} — ${p.cost:.4f}, lost {p.lost:g}"
        f"{' (Pareto front)</b>' if p.policy in on_front else ''}</li>"
        for p in points
    )
    return (
        f'<div class="lp-pareto">{_svg(width, height, shapes)}<ol style="font-size:12px">{legend}</ol></div>'
    )
