"""What FIPS mode adds to one registry (``Registry(fips=True)``, ``CRYPTOAPI_FIPS=1``).

- approved algorithms only: :meth:`FipsMode.approved`, on every public lookup and
  allocation;
- self-tests cannot be skipped: the registry refuses ``selftests="off"``; lookups test
  before first use (lazy) or at registration (eager, full);
- a failure is fatal, with no fallback: :meth:`FipsMode.self_test_failed`, the self-test
  manager's ``fatal`` hook, raises instead of letting the lookup try the next one;
- the error state: :class:`~cryptoapi.fips.state.FipsState`, which stops every transform
  handed out (:meth:`FipsMode.track`);
- integrity: :func:`cryptoapi.fips.integrity.checked` before the registry offers anything;
- conditional tests: :func:`cryptoapi.fips.conditional.conditional` on the records handed
  out (kpp, rng).

Nothing of this runs per operation: the checks happen at lookup and allocation, the
conditional tests where keys and random streams are made. A registry not in FIPS mode
never imports this package.
"""

from __future__ import annotations

from cryptoapi.errors import InvalidArgument
from cryptoapi.fips import integrity
from cryptoapi.fips.approved import is_approved, refusal
from cryptoapi.fips.conditional import conditional
from cryptoapi.fips.state import FipsState

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn, TypeVar

    from cryptoapi.alg import Algorithm
    from cryptoapi.transforms.base import Transform

    T = TypeVar("T", bound=Transform)


def check_selftests(mode: str) -> None:
    """InvalidArgument for ``off``: FIPS mode tests every implementation before use."""
    if mode == "off":
        raise InvalidArgument("self-tests cannot be turned off in FIPS mode (selftests='off')")


class FipsMode:
    """One registry's FIPS mode: its error state, its approved lookups, its tracked
    transforms. ``close(message)`` is the registry's: it stops its entry points."""

    __slots__ = ("broken", "state")

    def __init__(self, close: Callable[[str], None], broken: frozenset[str]) -> None:
        self.state = FipsState(close)
        self.broken = broken
        reason = integrity.checked()
        if reason is not None:
            self.state.enter(f"FIPS error state: the integrity check failed: {reason}")

    def approved(self, asked: str, alg: Algorithm) -> Algorithm:
        """``alg`` if FIPS mode offers it; AlgorithmNotFound "not approved in FIPS mode"."""
        if not is_approved(alg):
            raise refusal(asked, alg)
        return alg

    def served(self, alg: Algorithm) -> Algorithm:
        """``alg`` with its conditional self-tests (kpp, rng)."""
        return conditional(alg, self.state, self.broken)

    def track(self, transform: T) -> T:
        return self.state.track(transform)

    def self_test_failed(self, alg: Algorithm, error: Exception) -> NoReturn:
        """The manager's ``fatal`` hook: enter the error state and raise FipsError."""
        self.state.fail("self-test", alg.name, alg.driver, error)
