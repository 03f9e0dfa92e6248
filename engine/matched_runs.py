"""A list matched against the last one like it, in runs: what a replay's next step can take over.

Consecutive steps of a long replay keep nearly the same states and messages (all but about twenty of
thousands, in a handful of runs), so a figure summed or listed per state can take the last step's values for
each run as slices, and read only what is new. Items are matched by identity (their `id`s, the last list's
objects held by the caller so that no id is reused).
"""

from __future__ import annotations

NO_ID = 0  # no object's id: put in a known list where an item must not match
LOOK_AHEAD = 64
FEW = 64  # a list shorter than this is cheaper read item by item than matched


def matched_runs(ids: list[int], known: list[int]) -> list[tuple[int, int, int]]:
    """`ids` as segments `(position, start, length)`: `ids[position:position + length]` equals
    `known[start:start + length]`, or a single id not found in `known` (`start` -1, `length` 1). An id is
    looked for a little ahead of where the last run ended (those between were left out); only after many
    misses (a long stretch left out, a list reordered) in an index of `known`. So an id `known` holds far
    from there may be missed at first: it is then read as a new one, never matched wrongly."""
    segments: list[tuple[int, int, int]] = []
    where: dict[int, int] | None = None
    position = ahead = misses = 0
    while position < len(ids):
        item = ids[position]
        try:
            start = known.index(item, ahead, ahead + LOOK_AHEAD)
        except ValueError:
            misses += 1
            if where is None and misses > LOOK_AHEAD:
                where = dict(zip(known, range(len(known)), strict=True))
                where.pop(NO_ID, None)
            start = -1 if where is None else where.get(item, -1)
        if start < 0:
            segments.append((position, -1, 1))
            position += 1
            continue
        length = _run_length(ids, position, known, start)
        segments.append((position, start, length))
        position += length
        ahead = start + length
    return segments


def _run_length(a: list[int], i: int, b: list[int], j: int) -> int:
    """How far `a` from `i` equals `b` from `j` (at least 1: they start equal), found by doubling the
    length compared and then halving the gap, each comparison a slice compared in C."""
    limit = min(len(a) - i, len(b) - j)
    same = 1
    while same < limit:
        upto = min(limit, 2 * same)
        if a[i + same : i + upto] == b[j + same : j + upto]:
            same = upto
            continue
        while upto - same > 1:  # a[i:i + same] matches; the first difference lies before upto
            middle = (same + upto) // 2
            if a[i + same : i + middle] == b[j + same : j + middle]:
                same = middle
            else:
                upto = middle
        return same
    return same
