"""The registry's lock and its waits, with :mod:`threading` imported only when a thread
first has to wait.

``threading`` costs 3 ms to import (with ``functools`` and ``collections``), more than
``hashlib``; a process that looks a name up, tests it and hashes never waits for another
thread, so it need not pay that. The lock is ``_thread``'s reentrant one, the same object
``threading.RLock()`` returns; the first wait wraps it in a ``threading.Condition``.
"""

from __future__ import annotations

import _thread

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable
    from threading import Condition


class Monitor:
    """A reentrant lock with ``threading.Condition``'s ``wait_for`` and ``notify_all``
    (both with the lock held, as on a Condition). No condition exists until the first
    wait, and none is needed before: nobody can be waiting to be notified."""

    __slots__ = ("_cond", "_lock", "acquire", "release")

    def __init__(self) -> None:
        self._lock = _thread.RLock()
        self._cond: Condition | None = None
        self.acquire = self._lock.acquire
        self.release = self._lock.release

    def __enter__(self) -> bool:
        return self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    def notify_all(self) -> None:
        """Wake every thread waiting in :meth:`wait_for` (lock held)."""
        if self._cond is not None:
            self._cond.notify_all()

    def wait_for(self, predicate: Callable[[], object], timeout: float | None = None) -> bool:
        """Wait until ``predicate()`` is true or ``timeout`` seconds pass (lock held):
        ``threading.Condition.wait_for``."""
        if self._cond is None:
            import threading

            self._cond = threading.Condition(self._lock)
        return bool(self._cond.wait_for(predicate, timeout))
