"""What the fuzzer needs of a registry, as a Protocol: the registry hands itself down
through this interface (as the kernel's manager joins the registry through a notifier),
so the fuzzing code never imports the registry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cryptoapi.alg import AlgInfo, Algorithm, AlgType


class FuzzTarget(Protocol):
    """The registry calls the fuzzer makes: look up, allocate exactly, list, build all."""

    def lookup(self, name: str, type: AlgType | str | None = None, *, wait: float = 0) -> Algorithm:
        """The implementation ``name`` resolves to."""
        ...

    def new_transform(self, alg: Algorithm, *, alone: bool = False) -> Any:
        """A transform of exactly ``alg``, as users get it (``alone``: without a fallback,
        raising ``Unserved`` where ``alg`` cannot serve a call)."""
        ...

    def algorithms(self) -> list[AlgInfo]:
        """Every registered implementation."""
        ...

    def instantiate_all(self, extra: Iterable[str] = ()) -> None:
        """Load every provider and build every standard instance (and ``extra``)."""
        ...
