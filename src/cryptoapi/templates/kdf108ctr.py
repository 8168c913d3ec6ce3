"""The ``kdf108ctr`` template: KDF in Counter Mode, NIST SP 800-108r1 §4.1, over any HMAC or CMAC
PRF (``hmac(sha256)``, ``hmac(sha3-256)``, ``cmac(aes)``).

    n := ⌈L/h⌉;  if n > 2^r - 1, error
    K(i) := PRF(K_IN, [i]_r || FixedInput)          for i = 1 .. n
    K_OUT := the leftmost L bits of K(1) || ... || K(n)

``derive(fixed_input, length, **options)`` takes ``counter_bits`` r ∈ {8, 16, 24, 32}
(default 32) and ``counter_location``: ``before`` the fixed input (the default, as above),
``after`` it, or in the ``middle`` at byte offset ``split`` (CAVP's MIDDLE_FIXED, whose
DataBeforeCtrLen is ``split``). :func:`fixed_input` builds the fixed input §4 describes,
Label || 0x00 || Context || [L]_32.

The PRF is keyed once, in ``setkey``. A prefix every block shares (the fixed input before an
``after`` or ``middle`` counter) goes through the PRF once when it fills a PRF block, and
each block continues from a copy of that state.
"""

from collections.abc import Callable
from typing import Any

from cryptoapi.alg import Algorithm, Buffer, InnerLookup, Template
from cryptoapi.errors import InvalidArgument
from cryptoapi.templates._kdf108 import (
    AFTER,
    BEFORE,
    COUNTER_MODE_LOCATIONS,
    Counter,
    PrfKdf,
    block_count,
    buffer_option,
    counter_from,
    encode_length,
    kdf_instance,
)

DEFAULT = Counter(32, BEFORE)
_FIRST = (1).to_bytes(DEFAULT.bits // 8, "big")  # [1]_32, the first block's counter


def fixed_input(label: Buffer, context: Buffer, length_bits: int) -> bytes:
    """Label || 0x00 || Context || [L]_32, the fixed input of SP 800-108r1 §4 (L in bits:
    the length the caller will ask ``derive`` for, times 8)."""
    label = buffer_option("fixed_input", "label", label)
    context = buffer_option("fixed_input", "context", context)
    return label + b"\x00" + context + encode_length(length_bits)


class CounterModeKdf(PrfKdf):
    """The core of ``kdf108ctr(PRF)``: a keyed PRF core and the counter-mode loop."""

    __slots__ = ("_blocksize",)

    def __init__(self, name: str, prf: Algorithm) -> None:
        super().__init__(name, prf)
        self._blocksize = prf.blocksize

    def derive(self, fixed: bytes, length: int, /, **options: Any) -> bytes:
        if not options and length <= self._h:  # the common case: one block, [1]_32 first
            return self._prf.digest(_FIRST + fixed)[:length]
        counter = counter_from(
            self._name, options, locations=COUNTER_MODE_LOCATIONS, default=DEFAULT, optional=False,
            accepted=("counter_bits", "counter_location", "split"),
        )  # fmt: skip
        n = block_count(self._name, length, self._h, counter)
        prf: Callable[[bytes], bytes]
        if counter.location == BEFORE:
            prf, suffix = self._prf.digest, fixed
        else:
            split = len(fixed) if counter.location == AFTER else counter.split
            if split > len(fixed):
                raise InvalidArgument(
                    f"{self._name}: split {split} is beyond the {len(fixed)}-byte fixed input"
                )
            prf, suffix = self._prefixed(fixed[:split], n), fixed[split:]
        return b"".join([prf(i + suffix) for i in counter.encodings(n)])[:length]

    def _prefixed(self, prefix: bytes, uses: int) -> Callable[[bytes], bytes]:
        """m -> PRF(prefix || m); a prefix of a PRF block or more is absorbed once."""
        digest = self._prf.digest
        if uses == 1 or len(prefix) < self._blocksize:
            return lambda rest: digest(prefix + rest)
        state = self._prf.init()
        state.update(prefix)

        def prf(rest: bytes) -> bytes:
            running = state.copy()
            running.update(rest)
            return running.digest()

        return prf


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``kdf108ctr(PRF)`` from the best (or the named) keyed PRF."""
    return kdf_instance("kdf108ctr", lookup, args, CounterModeKdf)


TEMPLATE = Template("kdf108ctr", create)
