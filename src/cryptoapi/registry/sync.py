"""The registry's lock and its waits, with :mod:`threading` imported only when a thread
first has to wait; and larvals, the work under way that concurrent askers wait for.

``threading`` costs 3 ms to import (with ``functools`` and ``collections``), more than
``hashlib``; a process that looks a name up, tests it and hashes never waits for another
thread, so it need not pay that. The lock is ``_thread``'s reentrant one, the same object
``threading.RLock()`` returns; the first wait wraps it in a ``threading.Condition``.

Larvals are placeholders for work under way (building an instance, loading a provider,
testing an implementation): as in the kernel, the first asker creates the larval and does
the work, and the others sleep until it completes. Unlike the kernel's early versions, a
waiter never hangs: it raises :class:`~cryptoapi.errors.LookupTimeout` after a bounded
wait, and a wait that could never end, because the work waited for is the asker's own or
waits (through other threads' waits) on it, raises :class:`Circular` at once.
"""

from __future__ import annotations

import _thread

from cryptoapi.errors import InvalidArgument, LookupTimeout

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable
    from threading import Condition
    from typing import Any


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


class Circular(InvalidArgument):
    """Waiting for this larval would close a circle: its work is the asking thread's own,
    or waits, directly or through other threads' waits, on work the asking thread owns (a
    self-test of X that, to fuzz X, needs a fallback whose own test needs X)."""


class _Larval:
    __slots__ = ("done", "error", "owner", "result")

    def __init__(self) -> None:
        self.owner = _thread.get_ident()
        self.done = False
        self.result: Any = None
        self.error: BaseException | None = None


class Larvals:
    """Run each keyed piece of work once at a time; others asking meanwhile share it."""

    def __init__(self, cond: Monitor) -> None:
        self._cond = cond
        self._pending: dict[str, _Larval] = {}
        self._waiting: dict[int, _Larval] = {}  # thread -> the larval it waits for

    def run(self, key: str, work: Callable[[], Any], timeout: float) -> Any:
        """Do ``work`` for ``key``, or wait (at most ``timeout`` s) for whoever is doing it."""
        with self._cond:
            larval = self._pending.get(key)
            if larval is None:
                larval = self._pending[key] = _Larval()
                return self._work(key, larval, work)
            if self._leads_back(larval):
                raise Circular(f"{key!r} depends on itself")
            if not self._wait(larval, timeout):
                raise LookupTimeout(f"timed out after {timeout:g} s waiting for {key!r}")
        if larval.error is not None:
            raise larval.error
        return larval.result

    def _leads_back(self, larval: _Larval) -> bool:
        """Whether ``larval``'s owner is this thread, or waits (through the owners of the
        larvals waited for) on one this thread owns. Lock held; every wait is checked
        before it starts, so the chain it follows never loops."""
        me = _thread.get_ident()
        owner = larval.owner
        while owner != me:
            waited = self._waiting.get(owner)
            if waited is None or waited.done:
                return False
            owner = waited.owner
        return True

    def _wait(self, larval: _Larval, timeout: float) -> bool:
        """Wait (lock held) until ``larval`` is done, visible to :meth:`_leads_back`."""
        me = _thread.get_ident()
        self._waiting[me] = larval
        try:
            return self._cond.wait_for(lambda: larval.done, timeout)
        finally:
            del self._waiting[me]

    def _work(self, key: str, larval: _Larval, work: Callable[[], Any]) -> Any:
        # Called with the lock held; the work itself runs without it.
        self._cond.release()
        try:
            larval.result = work()
            return larval.result
        except BaseException as error:
            larval.error = error
            raise
        finally:
            self._cond.acquire()
            del self._pending[key]
            larval.done = True
            self._cond.notify_all()
