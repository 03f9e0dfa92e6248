"""The application layer: one open session and everything a front end edits about it. No UI import.

`Workspace(inputs)` holds the session (its header typed), the policy over a defaults profile, the fence
descriptors (an edited kind's session fences are re-placed), the step points (by the policy's
`checkpoint.triggerToolName`), the pinned build A, and exports. A front end calls it and renders what it
returns:

- policy: `edit(path, value)` (a refused value is kept in `refused[path]`, the engine's message),
  `reset_field`, `reset_group`, `reset_all`, `switch_defaults`, `load_policy_file`; `errors()` is every
  field's problem;
- fences: `add_fence`, `replace_fence`, `remove_fence`, `duplicate_fence`, `load_fences_file`;
- steps: `set_step(n)`; builds: `build_request()` for the current step, `timeline_request()` for the
  series (`playground.app.building.series_steps`), `record_series(...)` as the series progresses;
  `options` is the one frozen `BuildOptions` every build of the current state uses;
- compare: `pin(result)`, `unpin()`, `changes_since_pin()`; export: `export_text`, `export` (the
  policy, the fences, an HTML report, the session or the shown step's wire for other tools).
Every edit goes through the engine's own functions, so their errors are the ones the user sees.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.build import build_context
from engine.copyset import check_copy
from engine.export import export_session, export_wire
from engine.fences import FenceDescriptor, FenceError, FenceRegistry, dump_fences, load_fences
from engine.messages import AiMessage
from engine.policy import DEFAULTS_PROFILES as PROFILES
from engine.policy import (
    ContextPolicy,
    PolicyValidationError,
    changed_paths,
    dump_policy,
    effective_policy,
    get_defaults_profile,
    get_value,
    policy_controls,
    policy_diff,
    read_policy_file,
    reset_group,
    reset_path,
    runtime_problems,
    set_value,
    write_atomic,
)
from engine.recorded import RecordedRun
from engine.reminders import DEFAULT_MAX_STEPS
from engine.replay import build_at_step, iter_session_steps, with_persisted
from engine.result import BuildResult
from engine.session import SessionHeader
from engine.session_lines import available_tools
from engine.summarizer import SummarizerPort
from engine.ticks import StepPoint, step_points, tick_for
from engine.tokens import TokenizerPort
from playground.app.building import BuildOptions, BuildRequest, Persisted, TimelineRequest
from playground.app.fence_placement import reinject
from playground.app.inputs import SAMPLES_DIR, PlaygroundInputs
from playground.app.recorded import AS_RECORDED_POLICY, record_of
from playground.app.series_memory import SeriesMemory, SeriesProgress
from playground.app.views import ReportView, StepSample, steps_of

Path_ = tuple[str, ...]

DEFAULTS_PROFILES: tuple[str, ...] = tuple(PROFILES)

# kind -> (label, file suffix)
POLICY_EXPORTS = ("policy-changed", "policy-full", "agent-spec")
EXPORTS: dict[str, tuple[str, str]] = {
    "policy-changed": ("policy YAML, only what differs from the defaults", ".policy.yaml"),
    "policy-full": ("policy YAML, every field", ".policy.yaml"),
    "agent-spec": ("policy JSON for a linnkit AgentSpec.contextPolicy", ".policy.json"),
    "fences": ("fence descriptors YAML", ".fences.yaml"),
    "session-openai": ("the session as OpenAI chat JSONL (imports back)", ".openai.jsonl"),
    "session-anthropic": ("the session as an Anthropic Messages request (imports back)", ".anthropic.json"),
    "session-otel": ("the session as OTel GenAI spans, OTLP JSON (imports back)", ".otel.json"),
    "wire-openai": ("the shown step's wire as an OpenAI chat request", ".step.openai.jsonl"),
    "wire-anthropic": ("the shown step's wire as an Anthropic Messages request", ".step.anthropic.json"),
    "wire-otel": ("the shown step's wire as an OTel GenAI span", ".step.otel.json"),
}


@dataclass(frozen=True, slots=True)
class Pinned:
    """Build A of a comparison, with the policy and step it was made with."""

    result: BuildResult
    policy: ContextPolicy
    step: int | None


class Workspace:
    """What one playground window is looking at and editing."""

    def __init__(
        self,
        inputs: PlaygroundInputs,
        *,
        now: int | None = None,
        tokenizer: TokenizerPort | None = None,
        summarizer: SummarizerPort | None = None,
    ) -> None:
        """`now`, `tokenizer` and `summarizer` go to every build (`BuildOptions`)."""
        self.inputs = inputs
        self._loaded_paths: list[Path] = []  # policy files loaded since it opened (`load_policy_file`)
        self._engine = {"now": now, "tokenizer": tokenizer, "summarizer": summarizer}
        self._options: BuildOptions | None = None
        self._options_for: tuple[object, str, str] | None = None
        self.defaults = inputs.defaults
        self.policy = inputs.policy
        self.fences: FenceRegistry | None = inputs.fences.copy() if inputs.fences is not None else None
        self._origins = {kind: kind for kind in (self.fences.kinds() if self.fences else [])}
        self._set_messages(inputs.session.messages)
        self.points: list[StepPoint] = []
        self.step: int | None = None
        self.generation = 0
        self.pinned: Pinned | None = None
        self.copy = inputs.copy  # the words of tool summaries and built-in reminders (engine.copyset)
        self.refused: dict[Path_, str] = {}  # fields whose last edit the engine refused, with its message
        # Summaries the replayed steps made under the current inputs, and how many steps that covers
        self.summaries: list[Persisted] = []
        self.summaries_through = 0
        self._summaries_from: tuple[tuple[AiMessage, ...], BuildOptions, ContextPolicy] | None = None
        self._series = SeriesMemory()  # what the series found, per inputs: the steps an edit cannot change
        self._shown_complete = True  # whether the last step build had every earlier step's summaries
        self._shown_summaries: list[Persisted] = []  # the ones it had
        self._changed: tuple[ContextPolicy | None, str, set[Path_]] = (None, "", set())  # see `changed`
        self._points_tool: str | None = None  # the checkpoint tool `points` were found with
        self._record: RecordedRun | None = None
        self._refresh_points(messages_changed=True)
        self.step = len(self.points) or None
        self._saved = {"policy": self.export_text("policy-full"), "fences": self.export_text("fences")}

    # -- what is open ---------------------------------------------------------------------------
    @property
    def header(self) -> SessionHeader:
        return self.inputs.session.header or SessionHeader.create()

    @property
    def title(self) -> str:
        path = self.inputs.session.path
        return self.header.title or (path.name if path else "session")

    @property
    def messages(self) -> list[AiMessage]:
        """The session, with edited fence kinds re-placed by their descriptors."""
        return self._messages

    def _set_messages(self, messages: Sequence[AiMessage]) -> None:
        """The session's messages, and what every build request reads of them, made once (on 64,000
        messages, each copy or pass cost the UI thread a few ms per key)."""
        self._messages: list[AiMessage] = list(messages)
        self._frozen = tuple(self._messages)
        self._recorded_summaries = [i for i, m in enumerate(self._messages) if m.type == "history_summary"]

    @property
    def max_steps(self) -> int:
        return self.header.max_steps or DEFAULT_MAX_STEPS

    @property
    def available_tools(self) -> tuple[str, ...]:
        return available_tools(self.header.data)

    @property
    def honour_fence_descriptors(self) -> bool:
        return get_defaults_profile(self.defaults).honour_fence_descriptors

    @property
    def options(self) -> BuildOptions:
        """What every build of the current state gets besides messages, policy and tick: one frozen value,
        made again only when the fences or the defaults profile change."""
        made_for = (self.fences, self.defaults, self.copy)
        if self._options is None or self._options_for != made_for:
            self._options, self._options_for = self._make_options(), made_for
        return self._options

    def _make_options(self) -> BuildOptions:
        return BuildOptions(
            fences=self.fences,  # never changed in place: every fence edit makes a new registry
            honour_fence_descriptors=self.honour_fence_descriptors,
            observation_store=self.inputs.observation_store,
            copy=self.copy,
            model_id=self.header.model_id,
            **self._engine,
        )

    def fence_messages(self) -> list[tuple[int, AiMessage]]:
        return [(i, m) for i, m in enumerate(self._messages) if m.type == "context_injection"]

    # -- requests for the workers -----------------------------------------------------------------
    def build_request(self, *, policy_changed: bool = True) -> BuildRequest:
        """The build of the current step, with the summaries the steps before it made (as far as the
        series has replayed them: `summaries_complete` says whether that reached this step)."""
        self.generation += 1
        if policy_changed and not self._summaries_hold():
            series = self._series.series_for(self._series_inputs())  # the steps the edit cannot change
            self.summaries, self.summaries_through = list(series.summaries), len(series.samples)
        self._summaries_from = (self._frozen, self.options, self.policy)
        messages, tick, complete, held = self._frozen, None, True, None
        if self.step is not None:
            point = self.points[self.step - 1]
            tick = tick_for(point, self.max_steps, self.available_tools)
            messages = tuple(with_persisted(self._messages, point.message_count, self.summaries))
            complete = self.summaries_through >= self.step - 1
            recorded = bisect_left(self._recorded_summaries, point.message_count)
            held = recorded + len(messages) - point.message_count  # and those persisted before the step
        self._shown_complete, self._shown_summaries = complete, self._summaries_before(self.step)
        return BuildRequest(
            self.generation,
            messages,
            self.policy,
            self.options,
            tick,
            policy_changed=policy_changed,
            step_number=self.step,
            summaries_complete=complete,
            summaries=held,
        )

    def record_series(self, samples: Sequence[StepSample], summaries: list[Persisted]) -> str:
        """The series has replayed the steps of `samples` (from step 1) and persisted `summaries`. Returns
        "rebuild" when the current step's build lacked summaries it now has, "complete" when it turns out
        to have had them all, else ""."""
        self._series.record(samples, summaries)
        steps_done = len(samples)
        if steps_done >= self.summaries_through:  # summaries kept across an edit are known further on
            self.summaries, self.summaries_through = list(summaries), steps_done
        if self._shown_complete or self.step is None or steps_done < self.step - 1:
            return ""
        self._shown_complete = True
        return "rebuild" if self._summaries_before(self.step) != self._shown_summaries else "complete"

    def _summaries_hold(self) -> bool:
        """Whether the summaries the series persisted hold for the current inputs: the same messages and
        build options, and a policy that differs at most in its reminders (appended to the wire after
        summarization: a reminder-only edit changes no summary). The step builds then stay complete and
        the series finds the same summaries again."""
        if self._summaries_from is None:
            return False
        messages, options, policy = self._summaries_from
        alike = policy.model_copy(update={"system_reminder": self.policy.system_reminder}) == self.policy
        return alike and options is self.options and (messages is self._frozen or messages == self._frozen)

    def _summaries_before(self, step: int | None) -> list[Persisted]:
        if step is None:
            return []
        upto = self.points[step - 1].message_count
        return [(after, summary) for after, summary in self.summaries if after < upto]

    def _series_inputs(self) -> SeriesProgress:
        return SeriesProgress(self._frozen, tuple(self.points), self.policy, self.options)

    def timeline_request(self) -> TimelineRequest:
        """The series of the current inputs, resumed after the steps an earlier series already built as
        these inputs would (`playground.app.series_memory`)."""
        series = self._series.series_for(self._series_inputs())
        return TimelineRequest(
            self.generation,
            series.messages,
            series.points,
            self.policy,
            self.options,
            self.max_steps,
            self.available_tools,
            known=tuple(series.samples),
            known_summaries=tuple(series.summaries),
        )

    # -- steps ----------------------------------------------------------------------------------
    def set_step(self, step: int | None) -> bool:
        """Go to a 1-based step (clamped); True when it moved."""
        if not self.points:
            return False
        step = min(max(step or 1, 1), len(self.points))
        moved, self.step = step != self.step, step
        return moved

    def _refresh_points(self, *, messages_changed: bool = False) -> None:
        tool = self.policy.checkpoint.trigger_tool_name  # the one policy field the steps depend on
        if messages_changed or tool != self._points_tool:
            self.points, self._points_tool = step_points(self._messages, tool), tool
        if self.step is not None:
            self.step = min(self.step, len(self.points)) or None

    # -- policy ---------------------------------------------------------------------------------
    def _use_policy(self, policy: ContextPolicy) -> bool:
        if policy == self.policy:
            return False
        self.policy = policy
        self._refresh_points()
        return True

    def set_policy(self, policy: ContextPolicy) -> bool:
        """Use a whole policy (from code); True when it changed."""
        self.refused.clear()
        return self._use_policy(policy)

    # -- the record --------------------------------------------------------------------------------
    @property
    def record(self) -> RecordedRun:
        """The provider's counts the session kept (`engine.recorded`); empty for a session without usage."""
        if self._record is None:
            self._record = record_of(self.inputs)
        return self._record

    def use_as_recorded(self) -> bool:
        """Rebuild what the agent itself sent: nothing trimmed, no reminder (`engine.truth.AS_RECORDED`)."""
        return self.set_policy(AS_RECORDED_POLICY)

    def edit(self, path: Path_, value: Any) -> bool:
        """Set one field; True when the policy changed. A value the engine refuses leaves the policy as
        it was and puts the engine's message in `refused[path]` (until a valid edit or a reset)."""
        try:
            policy = set_value(self.policy, path, value)
        except PolicyValidationError as error:
            self.refused[path] = "; ".join(str(issue) for issue in error.issues)
            return False
        self.refused.pop(path, None)
        return self._use_policy(policy)

    def reset_field(self, path: Path_) -> bool:
        self.refused.pop(path, None)
        return self._use_policy(reset_path(self.policy, path, self.defaults))

    def reset_group(self, group: str) -> bool:
        self.refused = {p: e for p, e in self.refused.items() if p[0] != group}
        return self._use_policy(reset_group(self.policy, group, self.defaults))

    def reset_all(self) -> bool:
        self.refused.clear()
        return self._use_policy(effective_policy(None, None, self.defaults))

    def changed(self) -> set[Path_]:
        """The fields that differ from the defaults (asked several times per edit: made once per policy)."""
        policy, defaults, changed = self._changed
        if policy is not self.policy or defaults != self.defaults:
            changed = changed_paths(self.policy, self.defaults)
            self._changed = (self.policy, self.defaults, changed)
        return changed

    def problems(self) -> dict[Path_, str]:
        """The engine-config rules (§2.3) the policy fails, by field."""
        return {p.path: p.message for p in runtime_problems(self.policy)}

    def errors(self) -> dict[Path_, str]:
        """Every field's problem: the engine-config rules it fails, and the values it refused."""
        return {**self.problems(), **self.refused}

    def set_copy(self, name: str) -> None:
        """Write tool summaries and built-in reminders in `name` ("zh", linnkit's own, or "en")."""
        self.copy = check_copy(name)

    def switch_defaults(self, name: str) -> None:
        """Use another defaults profile, keeping the fields changed against the old one."""
        changes = policy_diff(self.policy, self.defaults)
        self.defaults = get_defaults_profile(name).name
        self.refused.clear()
        self._use_policy(effective_policy(changes, None, self.defaults))

    def load_policy_file(self, path: str | Path) -> list[str]:
        """Replace the policy by a file's layer over the defaults; raises `PolicyFileError`. Returns the
        file's warnings (unknown or misspelt keys, keys written twice: loaded, but not all of it used)."""
        policy_file = read_policy_file(path)
        policy = effective_policy(policy_file.layer, None, self.defaults)
        self._loaded_paths.append(Path(path))
        self.refused.clear()
        self._use_policy(policy)
        return [str(w) for w in policy_file.warnings]

    # -- fences ---------------------------------------------------------------------------------
    def _use_fences(self, registry: FenceRegistry, origins: dict[str, str]) -> None:
        self.fences, self._origins = registry, origins
        original = self.inputs.fences
        changes = {}
        for descriptor in registry:
            origin = origins[descriptor.kind]
            before = original.get(origin) if original is not None else None
            placed = (descriptor.kind, descriptor.llm_role, descriptor.placement)
            if before is None or (before.kind, before.llm_role, before.placement) != placed:
                changes[origin] = descriptor
        self._set_messages(reinject(self.inputs.session.messages, changes))
        self._refresh_points(messages_changed=True)

    def _registry(self) -> FenceRegistry:
        return self.fences.copy() if self.fences is not None else FenceRegistry()

    def add_fence(self, descriptor: FenceDescriptor) -> None:
        """Register a new kind; raises the registry's `FenceError`."""
        registry = self._registry()
        registry.register(descriptor)
        self._use_fences(registry, {**self._origins, descriptor.kind: descriptor.kind})

    def replace_fence(self, kind: str, descriptor: FenceDescriptor) -> None:
        """Change (and maybe rename) a kind; its session fences follow the new descriptor."""
        registry = self._registry()
        registry.replace(kind, descriptor)
        origins = {k: v for k, v in self._origins.items() if k != kind}
        self._use_fences(registry, {**origins, descriptor.kind: self._origins.get(kind, kind)})

    def remove_fence(self, kind: str) -> None:
        registry = self._registry()
        registry.remove(kind)
        self._use_fences(registry, {k: v for k, v in self._origins.items() if k != kind})

    def duplicate_fence(self, kind: str) -> FenceDescriptor:
        """Register a copy of `kind` as `<kind>-copy` (or `-copy-2`, ...) and return it."""
        registry = self._registry()
        source = registry.get(kind)
        if source is None:
            raise FenceError(f'Fence kind "{kind}" is not registered.')
        names = (f"{kind}-copy", *(f"{kind}-copy-{n}" for n in range(2, len(registry) + 3)))
        descriptor = replace(source, kind=next(name for name in names if name not in registry))
        self.add_fence(descriptor)
        return descriptor

    def set_fences(self, rows: Sequence[tuple[str | None, FenceDescriptor]]) -> None:
        """Replace every descriptor at once, for an editor of rows: each row is (the kind it had in this
        workspace, or None for a new row; its descriptor now). Raises the registry's `FenceError`."""
        registry = FenceRegistry(descriptor for _, descriptor in rows)
        origins = {d.kind: self._origins.get(before, before) if before else d.kind for before, d in rows}
        self._use_fences(registry, origins)

    def load_fences_file(self, path: str | Path) -> None:
        """Replace the descriptors by a fence file's; raises `FenceError`."""
        registry = load_fences(path)
        self._use_fences(registry, {kind: kind for kind in registry.kinds()})

    # -- export ---------------------------------------------------------------------------------
    def export_text(self, kind: str) -> str:
        if kind.startswith("session-"):
            return export_session(self._messages, self.header.to_dict(), kind.removeprefix("session-"))
        if kind.startswith("wire-"):
            return export_wire(self._shown_wire(), kind.removeprefix("wire-"), self.header.model_id)
        if kind == "fences":
            return dump_fences(self.fences or [])
        if kind == "agent-spec":
            return dump_policy(self.policy, only_changed=True, fmt="json", defaults=self.defaults)
        only_changed = kind == "policy-changed"
        return dump_policy(self.policy, only_changed=only_changed, fmt="yaml", defaults=self.defaults)

    def report_view(self) -> ReportView:
        """What a teacher's hand-out shows: the shown step's build and every step of the session (replayed,
        summaries persisting); `playground.web.report` renders it."""
        replayed = list(iter_session_steps(
            self._messages, self.policy, max_steps=self.max_steps, available_tools=self.available_tools,
            checkpoint_tool_name=self.policy.checkpoint.trigger_tool_name, **self.options.kwargs(),
        ))  # fmt: skip
        steps, last = steps_of(replayed)
        policy = policy_diff(self.policy, self.defaults)
        if self.step is None or last is None:
            result = build_context(self._messages, self.policy, **self.options.kwargs())
            return ReportView(result, self.title, policy, note="the whole session")
        result = replayed[self.step - 1].result
        note = f"step {self.step} of {len(steps)}"
        return ReportView(result, self.title, policy, tuple(steps), self.step, note)

    def _shown_wire(self) -> tuple[dict[str, Any], ...]:
        """The wire the policy builds at the shown step (summaries of the steps before it persisting)."""
        if self.step is None:
            return build_context(self._messages, self.policy, **self.options.kwargs()).wire
        return build_at_step(
            self._messages, self.step, self.policy, max_steps=self.max_steps,
            available_tools=self.available_tools,
            checkpoint_tool_name=self.policy.checkpoint.trigger_tool_name, **self.options.kwargs(),
        )[2].wire  # fmt: skip

    def suggested_path(self, suffix: str) -> Path:
        """`<session-stem><suffix>` next to the session (in the working directory for a bundled sample)."""
        session = self.inputs.session.path
        if session is None:
            return Path.cwd() / f"playground{suffix}"
        folder = Path.cwd() if session.resolve().parent == SAMPLES_DIR else session.parent
        return folder / f"{session.stem}{suffix}"

    def protected_paths(self) -> list[Path]:
        """What an export never writes over: the open session and the files it was opened with or loaded
        since (policy, fences, system prompt)."""
        session = [self.inputs.session.path] if self.inputs.session.path else []
        return [*session, *self.inputs.read_paths, *self._loaded_paths]

    def export(self, kind: str, path: str | Path) -> Path:
        """Write atomically, never over the open session; raises `PolicyFileError` or `OSError`."""
        written = write_atomic(path, self.export_text(kind), protected=self.protected_paths())
        saved = "fences" if kind == "fences" else "policy" if kind in POLICY_EXPORTS else None
        if saved:
            self._saved[saved] = self.export_text("fences" if saved == "fences" else "policy-full")
        return written

    def unsaved(self) -> list[str]:
        """What was edited since the session opened or since it was last exported: 'policy', 'fences'."""
        now = {"policy": self.export_text("policy-full"), "fences": self.export_text("fences")}
        return [what for what in ("policy", "fences") if now[what] != self._saved[what]]

    # -- compare --------------------------------------------------------------------------------
    def pin(self, result: BuildResult) -> None:
        self.pinned = Pinned(result, self.policy, self.step)

    def unpin(self) -> None:
        self.pinned = None

    def changes_since_pin(self) -> list[str]:
        """What differs between the pinned build's inputs and the current ones, one line per field."""
        if self.pinned is None:
            return []
        before, now = self.pinned.policy, self.policy
        lines = [
            f"{spec.key} {get_value(before, spec.path)!r} → {get_value(now, spec.path)!r}"
            for spec in policy_controls()
            if get_value(before, spec.path) != get_value(now, spec.path)
        ]
        if self.pinned.step != self.step:
            lines.append(f"step {self.pinned.step} → {self.step}")
        return lines
