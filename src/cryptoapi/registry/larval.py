"""Larvals: placeholders for work under way (building an instance, loading a provider,
testing an implementation) that concurrent askers wait on instead of repeating it.

As in the kernel, the first asker creates the larval and does the work; the others sleep
until it completes. Unlike the kernel's early versions, a waiter never hangs: it raises
:class:`~cryptoapi.errors.LookupTimeout` after a bounded wait.
"""

from __future__ import annotations

import _thread

from cryptoapi.errors import InvalidArgument, LookupTimeout

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from cryptoapi.registry.sync import Monitor


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

    def run(self, key: str, work: Callable[[], Any], timeout: float) -> Any:
        """Do ``work`` for ``key``, or wait (at most ``timeout`` s) for whoever is doing it."""
        with self._cond:
            larval = self._pending.get(key)
            if larval is None:
                larval = self._pending[key] = _Larval()
                return self._work(key, larval, work)
            if larval.owner == _thread.get_ident():
                raise InvalidArgument(f"{key!r} depends on itself")
            if not self._cond.wait_for(lambda: larval.done, timeout):
                raise LookupTimeout(f"timed out after {timeout:g} s waiting for {key!r}")
        if larval.error is not None:
            raise larval.error
        return larval.result

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
