"""Locks that a forked child process gets back unlocked.

A process forked while another of its threads holds a lock inherits that lock held, by a thread the child
does not have: the child's first use of it would wait forever. The playground forks its background
replays (`playground.app.forked`) while the UI thread or a check may be inside the engine, so every lock
of the engine is made here and re-made unlocked in the child; the child then forgets what the engine
remembers of earlier builds (`engine.stage_cache.forget_earlier_builds`), which such a thread may have
left half-updated.
"""

from __future__ import annotations

import os
import threading
import weakref

_LOCKS: weakref.WeakSet[threading.Lock] = weakref.WeakSet()


def fork_safe_lock() -> threading.Lock:
    """A `threading.Lock` that is unlocked in a child forked while it was held."""
    lock = threading.Lock()
    _LOCKS.add(lock)
    return lock


def _unlock_in_child() -> None:
    for lock in list(_LOCKS):
        lock._at_fork_reinit()  # type: ignore[attr-defined]  # CPython's own fork hook for its locks


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_unlock_in_child)
