"""What a step series already found, kept across edits: the first steps an edit cannot change.

A step's build depends on the messages up to it (with the summaries earlier steps persisted), its tick,
the policy and the build options. After an edit, the steps whose prefix holds no changed message and no
fence of a changed kind, under the same policy and the same other options, build exactly as before: the
new series resumes after them (`playground.app.building.series_steps`). Going back to settings tried a
moment ago finds their series where it stopped. A reminder-only edit keeps every persisted summary (the
workspace's `_summaries_hold`) but changes the steps' reminders, so their samples are made again.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter

from engine.cache_breaks import common_prefix
from engine.fences import FenceRegistry
from engine.messages import AiMessage
from engine.policy import ContextPolicy
from engine.ticks import StepPoint
from playground.app.building import BuildOptions, Persisted
from playground.app.views import StepSample

KEPT = 8  # series remembered (the current one and the last settings tried)


@dataclass(slots=True)
class SeriesProgress:
    """A series under one set of inputs, as far as it has been replayed."""

    messages: tuple[AiMessage, ...]
    points: tuple[StepPoint, ...]
    policy: ContextPolicy
    options: BuildOptions
    samples: list[StepSample] = field(default_factory=list)
    summaries: list[Persisted] = field(default_factory=list)

    def known(self, steps: int) -> tuple[tuple[StepSample, ...], tuple[Persisted, ...]]:
        """The first `steps` samples and the summaries those steps persisted."""
        if steps == 0:
            return (), ()
        upto = self.points[steps - 1].message_count
        return tuple(self.samples[:steps]), tuple(s for s in self.summaries if s[0] <= upto)


def changed_fence_kinds(before: FenceRegistry | None, after: FenceRegistry | None) -> set[str]:
    """Kinds registered in one registry and not the other, or described differently."""
    kinds = set(before.kinds() if before else ()) | set(after.kinds() if after else ())
    return {k for k in kinds if (before.get(k) if before else None) != (after.get(k) if after else None)}


def steps_still_true(progress: SeriesProgress, now: SeriesProgress) -> int:
    """How many first steps of `progress` the inputs of `now` build exactly as they were built. Runs on the
    UI thread at every edit: another policy ends it at once, and the messages are compared in C."""
    if progress.policy != now.policy or _but_fences(progress.options) != _but_fences(now.options):
        return 0
    points = min(len(progress.samples), len(progress.points), len(now.points))
    if progress.points[:points] == now.points[:points]:  # in C; mostly the very same objects
        steps = points
    else:  # after a fence edit they are new objects, compared one by one (their equality is Python's)
        steps = next(i for i in range(points) if progress.points[i] != now.points[i])
    changed = changed_fence_kinds(progress.options.fences, now.options.fences)
    if not changed and progress.messages == now.messages:
        return steps
    same = common_prefix(progress.messages, now.messages)  # messages both step lists build from
    if changed:
        same = min(same, next((i for i, m in enumerate(now.messages) if _fence_kind(m) in changed), same))
    counts = [point.message_count for point in now.points[:steps]]
    return bisect.bisect_right(counts, same)  # the steps whose prefix ends within the unchanged part


def _fence_kind(message: AiMessage) -> str | None:
    kind = (message.metadata or {}).get("fenceKind") if message.type == "context_injection" else None
    return kind if isinstance(kind, str) else None


class SeriesMemory:
    """The series of the last `KEPT` sets of inputs; `series_for(now)` is the current one, made for `now`
    (resumed after the most steps any remembered series still holds) unless it already is."""

    def __init__(self) -> None:
        self._kept: list[SeriesProgress] = []

    @property
    def current(self) -> SeriesProgress | None:
        return self._kept[-1] if self._kept else None

    def series_for(self, now: SeriesProgress) -> SeriesProgress:
        current = self.current
        return current if current is not None and _same_inputs(current, now) else self._start(now)

    def _start(self, now: SeriesProgress) -> SeriesProgress:
        found = [(steps_still_true(progress, now), progress) for progress in self._kept]
        steps, source = max(found, default=(0, None), key=itemgetter(0))
        if source is not None:
            known, summaries = source.known(steps)
            now.samples, now.summaries = list(known), list(summaries)
        self._kept = [p for p in self._kept if not _same_inputs(p, now)][-(KEPT - 1) :] + [now]
        return now

    def record(self, samples: Sequence[StepSample], summaries: Sequence[Persisted]) -> None:
        """The current series has replayed `samples` (from step 1) and persisted `summaries`."""
        current = self.current
        if current is None or len(samples) < len(current.samples):
            return
        held = len(current.samples)
        if held and samples[held - 1] is current.samples[held - 1]:  # the same series, further on
            current.samples.extend(samples[held:])  # only what is new: this runs at every step
        else:
            current.samples = list(samples)
        current.summaries = list(summaries)


def _same_inputs(a: SeriesProgress, b: SeriesProgress) -> bool:
    same_build = a.policy == b.policy and a.options == b.options
    return same_build and a.messages == b.messages and a.points == b.points


def _but_fences(options: BuildOptions) -> BuildOptions:
    return replace(options, fences=None)
