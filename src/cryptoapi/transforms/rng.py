"""The ``rng`` transform: deterministic random bit generators (the kernel's ``crypto_rng``).

A core (``Algorithm.create()``) has ``seed(entropy, personalization)``, ``reseed(entropy,
additional)``, ``generate(n, additional)``, ``set_entropy_source(source)`` and ``seeded``;
the SP 800-90A DRBGs of :mod:`cryptoapi.rng` are the cores offered here, and they enforce
their own limits (request size, input lengths, reseed interval). The transform checks
argument types, serialises calls with a lock (one generator shared by threads must never
hand two of them the same bytes, as the kernel's ``drbg_mutex`` ensures), and makes sure a
child process after :func:`os.fork` never repeats its parent's output: the child's first
``generate`` reseeds from :func:`os.urandom`.

A transform never seeded seeds itself from the entropy source (:func:`os.urandom`) on its
first ``generate``. ``seed(entropy)`` instead makes the generator deterministic, for known
answers: ``entropy`` is the entropy input followed by the nonce (SP 800-90A §8.6.7), as
the kernel's ``drbg_test_data`` and NIST's CAVP files (EntropyInput || Nonce) give them.

Some cores need the lookup of the registry that allocates them (a DRBG finds its hash or
block cipher there, once per transform, as the kernel's drbg allocates its backend by
name): their record's ``create`` is a :class:`LookupRecipe`, which the registry binds to
itself when the record registers.
"""

import os
import threading
import weakref
from collections.abc import Callable
from functools import partial
from typing import NoReturn, Protocol

from cryptoapi.alg import Algorithm, Buffer, InnerLookup
from cryptoapi.errors import InvalidArgument
from cryptoapi.transforms.base import Transform, check_buffer, check_int

EntropySource = Callable[[int], bytes]
"""Returns (at least) the number of entropy bytes asked for: :func:`os.urandom` by default."""


class RngCore(Protocol):
    """What ``Algorithm.create()`` returns for an ``rng``."""

    @property
    def seeded(self) -> bool: ...
    def seed(self, entropy: bytes, personalization: bytes, /) -> None: ...
    def reseed(self, entropy: bytes, additional: bytes, /) -> None: ...
    def generate(self, n: int, additional: bytes, /) -> bytes: ...
    def set_entropy_source(self, source: EntropySource, /) -> None: ...


class LookupRecipe:
    """The ``create`` of a record whose cores resolve other algorithms in the registry
    that allocates them. Called unbound it refuses; :meth:`bind` returns the create a
    registry registers."""

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[InnerLookup], RngCore]) -> None:
        self._make = make

    def __call__(self) -> NoReturn:
        raise InvalidArgument("this rng resolves its primitives in a registry: register it first")

    def bind(self, lookup: InnerLookup) -> Callable[[], RngCore]:
        return partial(self._make, lookup)


def bound(alg: Algorithm, lookup: InnerLookup) -> Algorithm:
    """``alg`` with its :class:`LookupRecipe` bound to ``lookup`` (other records unchanged)."""
    if not isinstance(alg.create, LookupRecipe):
        return alg
    return alg.replace(create=alg.create.bind(lookup))


class Rng(Transform):
    """A random number generator, as ``alloc_rng(name)`` returns it."""

    __slots__ = ("_core", "_forked", "_lock")  # weakly referable: Transform

    def __init__(self, alg: Algorithm) -> None:
        self._alg = alg
        self._core: RngCore = alg.create()
        self._lock = threading.Lock()
        self._forked = False
        _LIVE.add(self)

    @property
    def seedsize(self) -> int:
        """The entropy bytes a seeding draws: entropy input plus nonce (SP 800-90A §8.6.7)."""
        return self._alg.seedsize

    def seed(self, entropy: Buffer, personalization: Buffer = b"") -> None:
        """Instantiate (SP 800-90A §9.1) from ``entropy`` (entropy input || nonce) and an
        optional personalization string; the output is then determined by these inputs."""
        entropy = bytes(check_buffer(entropy, "entropy"))
        personalization = bytes(check_buffer(personalization, "personalization"))
        with self._lock:
            self._core.seed(entropy, personalization)
            self._forked = False

    def reseed(self, entropy: Buffer, additional: Buffer = b"") -> None:
        """Reseed (SP 800-90A §9.2) with fresh ``entropy`` and optional additional input."""
        entropy = bytes(check_buffer(entropy, "entropy"))
        additional = bytes(check_buffer(additional, "additional"))
        with self._lock:
            self._core.reseed(entropy, additional)
            self._forked = False

    def generate(self, n: int, additional: Buffer = b"") -> bytes:
        """``n`` pseudorandom bytes (SP 800-90A §9.3); seeds itself from the entropy
        source first if never seeded, and reseeds first in a child after ``fork``."""
        check_int(n, "n")
        additional = bytes(check_buffer(additional, "additional"))
        with self._lock:
            if self._forked:
                self._reseed_after_fork()
            return self._core.generate(n, additional)

    def set_entropy_source(self, source: EntropySource | None) -> None:
        """Where automatic seeding, reseeding and prediction resistance draw entropy from;
        ``None`` restores :func:`os.urandom`. The test hook of the kernel's
        ``crypto_drbg_get_bytes_addtl_test``: a known source makes a prediction-resistant
        generator reproduce NIST's EntropyInputPR vectors. Never a constant in production."""
        if source is not None and not callable(source):
            raise TypeError(f"source must be callable or None, not {type(source).__name__}")
        with self._lock:
            self._core.set_entropy_source(source or os.urandom)

    def _reseed_after_fork(self) -> None:
        self._forked = False
        if self._core.seeded:
            self._core.reseed(os.urandom(self.seedsize), b"")

    def _mark_forked(self) -> None:
        self._lock = threading.Lock()  # a thread of the parent may have held it: not here
        self._forked = True


_LIVE: "weakref.WeakSet[Rng]" = weakref.WeakSet()
"""Every live transform, for the fork hook (Python's ``random`` reseeds its child the same way)."""


def _after_fork_in_child() -> None:
    for rng in list(_LIVE):
        rng._mark_forked()


os.register_at_fork(after_in_child=_after_fork_in_child)
