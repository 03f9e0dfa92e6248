"""F1: what each panel shows, the keys, and each policy group in two lines."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from engine import policy_controls, policy_groups

PANELS = """\
# linn-playground

See what the model receives, and tune the policy that decides it. Every edit rebuilds in the background.

## Panels

| panel | what it shows |
|---|---|
| **Policy** | The 12 policy groups. `●` marks a field that differs from the defaults profile; \
`r` resets a field, `R` its group, `ctrl+r` everything. An invalid value shows the engine's error \
and keeps the last build. |
| **Fences** | The fence descriptors (`n` new, `e` edit, `y` duplicate, `x` delete) and the fences in the \
session. Editing a kind re-places its fences as the host would have. |
| **Wire** | The messages the model receives, as cards with their marks. `d` shows dropped messages in \
place, `w` switches between the OpenAI and Anthropic shapes, `t` traces the highlighted message. |
| **Compare** | `a` pins the current build as A; this tab then lists what B (the current build) adds, \
drops and re-counts, and both budgets. `A` unpins. |
| **Budget** | Where the tokens go, stacked against `maxTokens`: △ working-memory budget, ▲ trigger. |
| **Cost** | The whole session replayed under this policy: tokens sent, the share a prompt cache \
serves, cache breaks by mechanism, summarizer tokens and the estimated cost from the price table \
(focus it: `m` the price row, `k` the cache shape). Compare shows A vs B with deltas. |
| **Events** | What the stages did (compression, pruning, summarization) and the reminders that fired. |
| **Timeline** | Tokens at each LLM call of the session, S/C/R for summarization, checkpoint, reminder. \
Moving it (`[` `]`, or focus it and use ←→) rebuilds at that step with its tick. |
| **Trace** | `t`: the fate of one message (decision, phase, reason, tokens, events) and the \
effective policy. |

## Keys

| key | action |
|---|---|
| `ctrl+s` / `ctrl+o` | export the policy or fences / open a policy file |
| `a` / `A` / `c` | pin A / unpin / switch wire and compare |
| `d` / `w` / `t` | dropped messages / wire shape / trace |
| `[` / `]` | previous / next step |
| `ctrl+d` | switch the defaults profile (seed, linnkit-0.21) |
| `n` / `E` | new fence, from any panel / tool summaries and reminders in English or 中文 |
| `ctrl+t` | light or dark theme |
| `ctrl+p` | every action, by name |
"""


def groups_text() -> str:
    """Each group in two lines: what it governs, then its fields."""
    fields: dict[str, list[str]] = {}
    for spec in policy_controls():
        fields.setdefault(spec.group, []).append(spec.label.lower())
    lines = ["## Policy groups", ""]
    for group in policy_groups():
        lines.append(f"**{group.label}** (`{group.key}`): {group.help}  ")
        lines.append(f"fields: {', '.join(fields.get(group.key, []))}")
        lines.append("")
    return "\n".join(lines)


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "dismiss", "Close help", id="help.close", tooltip="Back to the playground"),
    ]

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > VerticalScroll { width: 92%; height: 92%; border: thick $primary; background: $surface; }
    }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(PANELS + "\n" + groups_text())

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss()
