"""The ``kdf108dp`` template: KDF in Double-Pipeline Iteration Mode, NIST SP 800-108r1 §4.3,
over any HMAC or CMAC PRF (``hmac(sha256)``, ``hmac(sha3-256)``, ``cmac(aes)``).

    n := ⌈L/h⌉;  if n > 2^r - 1 (with a counter) or 2^32 - 1 (without), error
    A(0) := FixedInput
    A(i) := PRF(K_IN, A(i-1))                                    the first pipeline
    K(i) := PRF(K_IN, A(i) {|| [i]_r} || FixedInput)             the second, i = 1 .. n
    K_OUT := the leftmost L bits of K(1) || ... || K(n)

``derive(fixed_input, length, **options)`` takes ``counter`` (default True),
``counter_bits`` r ∈ {8, 16, 24, 32} (default 32) and ``counter_location``: ``after_iter``
(the default, as above), ``before_iter`` or ``after_fixed``, as NIST's CAVP tests vary it.
"""

from typing import Any

from cryptoapi.alg import Algorithm, InnerLookup, Template
from cryptoapi.templates._kdf108 import (
    AFTER_ITER,
    ITERATION_LOCATIONS,
    Counter,
    PrfKdf,
    block_count,
    counter_from,
    kdf_instance,
)

DEFAULT = Counter(32, AFTER_ITER)
OPTIONS = ("counter", "counter_bits", "counter_location")


class DoublePipelineKdf(PrfKdf):
    """The core of ``kdf108dp(PRF)``: the A pipeline chains, the K pipeline outputs."""

    __slots__ = ()

    def derive(self, fixed: bytes, length: int, /, **options: Any) -> bytes:
        counter = counter_from(
            self._name, options, locations=ITERATION_LOCATIONS, default=DEFAULT, optional=True,
            accepted=OPTIONS,
        )  # fmt: skip
        n = block_count(self._name, length, self._h, counter)
        digest, message = self._prf.digest, counter.message
        chain = fixed
        blocks = []
        for i in counter.encodings(n):
            chain = digest(chain)
            blocks.append(digest(message(i, chain, fixed)))
        return b"".join(blocks)[:length]


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``kdf108dp(PRF)`` from the best (or the named) keyed PRF."""
    return kdf_instance("kdf108dp", lookup, args, DoublePipelineKdf)


TEMPLATE = Template("kdf108dp", create)
