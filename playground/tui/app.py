"""The playground app: the composition root. Screens, panels and widgets live in their own modules.

`make_app(inputs)` is the one factory, used by `linn-playground`, the Pilot tests and the snapshots.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import events
from textual.app import App
from textual.binding import BindingType

from playground.app.inputs import PlaygroundInputs
from playground.app.workspace import Workspace
from playground.tui.commands import PlaygroundCommands
from playground.tui.keys import APP_BINDINGS
from playground.tui.priority import KEY_HOLD, UiPriority
from playground.tui.screens.confirm_quit import ConfirmQuit
from playground.tui.screens.export import ExportScreen
from playground.tui.screens.help import HelpScreen
from playground.tui.screens.main import MainScreen
from playground.tui.screens.notice import NoticeScreen
from playground.tui.screens.path_prompt import PathPrompt

DARK, LIGHT = "textual-dark", "textual-light"
MAX_NOTICE_LINES = 200


class PlaygroundApp(App[int]):
    """See what the model receives for a session, and tune the policy that decides it."""

    CSS_PATH = "app.tcss"
    TITLE = "linn-playground"
    COMMANDS = App.COMMANDS | {PlaygroundCommands}
    BINDINGS: ClassVar[list[BindingType]] = APP_BINDINGS

    def __init__(self, inputs: PlaygroundInputs, store: str | None = None) -> None:
        super().__init__()
        self.inputs = inputs
        self.store = store  # the audit store "Record this replay" writes to (None: the default path)
        self.workspace = Workspace(inputs)
        self.priority = UiPriority(self)
        self.main = MainScreen(self.workspace, self.priority)

    def get_default_screen(self) -> MainScreen:
        return self.main

    def on_unmount(self) -> None:
        self.priority.release()  # never leave the garbage collector off behind us

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)):
            self.priority.hold(KEY_HOLD)  # the user is waiting for the screen, not for the background
            main_key = isinstance(event, events.Key) and self.screen is self.main
            if main_key and self.main.asks_for_a_build(event):
                self.priority.hold_paint()  # what the key moves is painted with the build, not before
        await super().on_event(event)

    def on_mount(self) -> None:
        self.theme = DARK
        problems = self.inputs.session.problems
        if problems:
            self.push_screen(load_notice(self.inputs))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        """Quit (q, ctrl+q); with edits nobody exported, ask first: quit anyway, export first, or stay."""
        unsaved = self.workspace.unsaved()
        if not unsaved:
            self.exit()
            return

        def chosen(choice: str | None) -> None:
            if choice == "quit":
                self.exit()
            elif choice == "export":
                self.action_export("fences" if unsaved == ["fences"] else "policy-changed")

        self.push_screen(ConfirmQuit(unsaved), chosen)

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT if self.theme == DARK else DARK

    def action_export(self, kind: str = "policy-changed") -> None:
        def done(path: Path | None) -> None:
            if path is not None:
                self.notify(f"wrote {path}", title="exported")

        self.push_screen(ExportScreen(self.workspace, kind), done)

    def action_record(self) -> None:
        """Replay the session under the current policy, fences and defaults and keep the run in the audit
        store (`runs`), in a thread; a notice says which run, or the one line that went wrong."""
        from playground.app.recording import record_replay, workspace_inputs

        inputs, policy = workspace_inputs(self.workspace), self.workspace.policy  # taken on the UI thread

        def record() -> None:
            from playground.app.store import StoreError

            try:
                run_id, path, new = record_replay(inputs, policy, self.store)
            except (StoreError, ImportError) as error:
                self.call_from_thread(self.notify, str(error), title="not recorded", severity="error")
                return
            title = "recorded" if new else "already recorded"
            self.call_from_thread(self.notify, f"run {run_id[:12]} in {path}", title=title)

        self.notify("replaying the session to record it…", title="record")
        self.run_worker(record, thread=True, group="record", exit_on_error=False)

    def action_open_policy(self) -> None:
        ws = self.workspace
        start = str(ws.suggested_path("policy-changed"))
        warnings: list[str] = []

        def load(path: str) -> None:
            warnings[:] = ws.load_policy_file(path)

        def done(path: str | None) -> None:
            if path is None:
                return
            self.main.policy_loaded()
            if warnings:
                title = f"The policy loaded with {len(warnings)} warning(s): these keys were not used"
                footer = f"`linn-playground validate --policy {path} SESSION` prints this list too."
                self.push_screen(NoticeScreen(title, warnings, footer))

        self.push_screen(PathPrompt("Open a policy file (YAML or JSON)", start, "Open", load), done)

    def action_open_fences(self) -> None:
        ws = self.workspace
        start = str(ws.suggested_path("fences"))
        prompt = PathPrompt("Open a fence file (YAML)", start, "Open", ws.load_fences_file)
        self.push_screen(prompt, lambda path: self.main.fences_changed() if path else None)


def load_notice(inputs: PlaygroundInputs) -> NoticeScreen:
    """The lines of the session file that were skipped or loaded with a warning."""
    session = inputs.session
    lines = [str(p) for p in session.problems[:MAX_NOTICE_LINES]]
    if len(session.problems) > MAX_NOTICE_LINES:
        lines.append(f"… and {len(session.problems) - MAX_NOTICE_LINES} more")
    skipped, warned = len(session.errors), len(session.warnings)
    title = f"The session opened with problems: {skipped} line(s) skipped, {warned} loaded with a warning"
    footer = f"{len(session.messages)} messages loaded. `linn-playground validate` prints this list too."
    return NoticeScreen(title, lines, footer)


def make_app(inputs: PlaygroundInputs, store: str | None = None) -> PlaygroundApp:
    return PlaygroundApp(inputs, store)


def run_app(inputs: PlaygroundInputs, store: str | None = None) -> int:
    """Run the playground until the user quits; the exit code."""
    app = make_app(inputs, store)
    app.run()
    return app.return_code or 0
