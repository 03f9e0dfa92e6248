"""Every key binding of the app and its main screen, each with an id and a tooltip."""

from __future__ import annotations

from textual.binding import Binding, BindingType


def _bind(key: str, action: str, text: str, id: str, tooltip: str, show: bool = True) -> Binding:
    return Binding(key, action, text, show=show, id=id, tooltip=tooltip)


def keys_of(bindings: list[BindingType], *actions: str) -> frozenset[str]:
    """The keys of the bindings whose action starts with one of `actions`."""
    return frozenset(b.key for b in bindings if isinstance(b, Binding) and b.action.startswith(actions))


APP_BINDINGS: list[BindingType] = [
    _bind(
        "ctrl+s", "export", "Export", "app.export", "Export the policy (YAML or AgentSpec JSON) or the fences"
    ),
    _bind("ctrl+o", "open_policy", "Open policy", "app.open_policy", "Load a policy YAML or JSON file"),
    _bind("f1", "help", "Help", "app.help", "What each panel and policy group does"),
    _bind("q", "quit", "Quit", "app.quit", "Quit (asks first when edits were not exported)"),
    _bind("ctrl+t", "toggle_theme", "Theme", "app.theme", "Light or dark theme", show=False),
]

MAIN_BINDINGS: list[BindingType] = [
    _bind("a", "pin", "Pin A", "main.pin", "Pin the current build as A and compare the next builds with it"),
    _bind("A", "unpin", "Unpin", "main.unpin", "Forget the pinned build", show=False),
    _bind("c", "toggle_compare", "Compare", "main.compare", "Switch between the wire and the comparison"),
    _bind("t", "trace", "Trace", "main.trace", "Explain the highlighted message's fate"),
    _bind("D", "diff", "Diff", "main.diff", "Every step: A (pinned, or as opened) vs now", False),
    _bind("d", "toggle_dropped", "Dropped", "main.dropped", "Show or hide dropped messages", show=False),
    _bind("w", "toggle_shape", "Wire shape", "main.shape", "OpenAI or Anthropic message shape", show=False),
    _bind("left_square_bracket", "step(-1)", "Step −", "main.step_back", "Build at the previous step", False),
    _bind("right_square_bracket", "step(1)", "Step +", "main.step_on", "Build at the next step", False),
    _bind(
        "ctrl+r", "reset_all", "Reset all", "main.reset_all", "Every policy field back to its default", False
    ),
    _bind("ctrl+d", "switch_defaults", "Defaults", "main.defaults", "Switch the defaults profile", False),
    _bind("h", "lesson_hint", "Hint", "main.lesson_hint", "Show or hide the lesson step's hint", False),
    _bind("n", "fence('add')", "New fence", "main.new_fence", "A new fence kind, from any panel", False),
    _bind("E", "toggle_copy", "English", "main.copy", "Summaries and reminders in English or 中文", False),
    _bind("L", "lesson_reset", "Lesson start", "main.lesson_reset", "Back to the lesson start", False),
    _bind(
        "g", "as_recorded", "As recorded", "main.as_recorded",
        "The policy that rebuilds what the agent itself sent (nothing trimmed, no reminder)", False,
    ),  # fmt: skip
]

STEP_KEYS = keys_of(MAIN_BINDINGS, "step(")
"""The main screen's keys that build another step."""
