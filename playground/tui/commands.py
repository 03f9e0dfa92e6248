"""The command palette: every playground action by name, each group's reset, and a jump to each field."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from engine import policy_controls, policy_groups
from playground.web.exports import EXPORTS

ACTIONS: tuple[tuple[str, str, str], ...] = (
    ("Pin the current build as A", "compare the next builds with it", "pin"),
    ("Unpin A", "stop comparing", "unpin"),
    ("Switch wire / compare", "the middle panel", "toggle_compare"),
    ("Diff two runs: A and this policy", "every step side by side (A pinned, else as opened)", "diff"),
    ("Trace the highlighted message", "its decision, phase, reason, tokens and events", "trace"),
    ("Show or hide dropped messages", "dropped messages in place in the wire", "toggle_dropped"),
    ("Switch wire shape", "OpenAI chat messages or an Anthropic Messages payload", "toggle_shape"),
    ("Previous step", "build at the previous LLM call", "step(-1)"),
    ("Next step", "build at the next LLM call", "step(1)"),
    ("First step", "build at the first LLM call", "step(-1000000)"),
    ("Last step", "build at the last LLM call", "step(1000000)"),
    ("Reset every policy field", "back to the defaults profile", "reset_all"),
    ("Switch defaults profile", "seed or linnkit-0.21", "switch_defaults"),
    ("Switch reminder and summary copy", "English or linnkit's Chinese (zh)", "toggle_copy"),
    ("Lesson: show or hide the hint", "of the step the lesson is at", "lesson_hint"),
    ("Lesson: back to its start", "the policy the lesson starts from, no step done", "lesson_reset"),
    ("Policy: as recorded", "rebuild what the agent sent, beside the provider's counts", "as_recorded"),
    ("New fence", "register a new fence kind", "fence('add')"),
    ("Edit the selected fence", "the descriptor selected in the fences tab", "fence('edit')"),
    ("Duplicate the selected fence", "copy it under a new kind", "fence('duplicate')"),
    ("Delete the selected fence", "unregister it", "fence_delete"),
)
APP_ACTIONS: tuple[tuple[str, str, str], ...] = (
    *(
        (f"Export: {label}", "written atomically, never over the session", f"export('{kind}')")
        for kind, (label, _) in EXPORTS.items()
    ),
    ("Record this replay", "keep the session's replay under this policy in the audit store (runs)", "record"),
    ("Open a policy file", "replace the policy by a YAML or JSON file", "open_policy"),
    ("Open a fence file", "replace the fence descriptors by a YAML file", "open_fences"),
    ("Toggle light / dark theme", "the playground's colours", "toggle_theme"),
    ("Help", "what each panel and policy group does", "help"),
    ("Quit", "asks first when the policy or fences were edited and not exported", "quit"),
)


@dataclass(frozen=True, slots=True)
class PaletteCommand:
    title: str
    help: str
    action: str
    on_app: bool = False


def palette_commands() -> list[PaletteCommand]:
    commands = [PaletteCommand(*entry) for entry in ACTIONS]
    commands += [PaletteCommand(*entry, on_app=True) for entry in APP_ACTIONS]
    commands += [
        PaletteCommand(f"Reset group: {g.label}", g.help, f"reset_group('{g.key}')") for g in policy_groups()
    ]
    commands += [
        PaletteCommand(f"Go to field: {s.key}", s.label + " · " + s.help_lines[0], f"focus_field('{s.key}')")
        for s in policy_controls()
    ]
    return commands


class PlaygroundCommands(Provider):
    """Runs actions on the playground's main screen (or the app)."""

    def _runnable(self) -> Iterator[tuple[PaletteCommand, partial]]:
        app = self.app
        main = getattr(app, "main", None)
        for command in palette_commands():
            target = app if command.on_app or main is None else main
            yield command, partial(app.run_action, command.action, target)

    async def discover(self) -> Hits:
        for command, run in self._runnable():
            if not command.title.startswith("Go to field"):
                yield DiscoveryHit(command.title, run, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command, run in self._runnable():
            score = matcher.match(command.title)
            if score > 0:
                yield Hit(score, matcher.highlight(command.title), run, text=command.title, help=command.help)
