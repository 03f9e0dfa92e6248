"""The user requests a replay's steps did not send as written: dropped, or folded into a summary.

Each step asks its build only which requests the wire carries as written (`BuildResult.sent_as_written`);
the rest of the step's requests are the lost ones. A request first lost at this step is one every earlier
step sent as written (or new since the last step) and this one did not: so a step reads its wire and the
requests it added, never the whole history's fates (that made a long replay's cost grow with the square
of its length).
"""

from __future__ import annotations

from engine.result import BuildResult

__all__ = ["RequestsLost"]

USER_REQUEST = "user_input"


class RequestsLost:
    """Feed it a replay's builds in order (`step`); `ids` holds every request some step lost. Requests are
    told apart by their rank among the session's user requests (ids may repeat in a session)."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self._seen = 0  # how many requests the steps so far held
        self._kept: set[int] = set()  # ranks of the requests no step has lost yet

    def step(self, result: BuildResult) -> tuple[int, tuple[str, ...]]:
        """How many requests this step did not send as written, and, in session order, the ids of those it
        is the first to lose (an id some step lost before is not told again)."""
        if result.error is not None:
            return 0, ()  # a failed build decided nothing
        fates = result.sent_as_written(USER_REQUEST)
        written = set(fates.ranks)
        self._kept.update(range(self._seen, fates.count))
        self._seen = fates.count
        lost = sorted(self._kept.difference(written))
        self._kept.difference_update(lost)
        newly = tuple(found for found in map(fates.id_of, lost) if found not in self.ids)
        self.ids.update(newly)
        return fates.count - len(fates.ranks), newly
