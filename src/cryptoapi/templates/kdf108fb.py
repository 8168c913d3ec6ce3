"""The ``kdf108fb`` template: KDF in Feedback Mode, NIST SP 800-108r1 §4.2, over any HMAC or CMAC
PRF (``hmac(sha256)``, ``hmac(sha3-256)``, ``cmac(aes)``).

    n := ⌈L/h⌉;  if n > 2^r - 1 (with a counter) or 2^32 - 1 (without), error
    K(0) := IV
    K(i) := PRF(K_IN, K(i-1) {|| [i]_r} || FixedInput)          for i = 1 .. n
    K_OUT := the leftmost L bits of K(1) || ... || K(n)

``derive(fixed_input, length, **options)`` takes ``iv`` (bytes, default empty), ``counter``
(default True), ``counter_bits`` r ∈ {8, 16, 24, 32} (default 32) and
``counter_location``: ``after_iter`` (the default, as above), ``before_iter`` or
``after_fixed``, the three positions NIST's CAVP feedback-mode tests use.
"""

from typing import Any

from cryptoapi.alg import Algorithm, InnerLookup, Template
from cryptoapi.templates._kdf108 import (
    AFTER_ITER,
    ITERATION_LOCATIONS,
    Counter,
    PrfKdf,
    block_count,
    buffer_option,
    counter_from,
    kdf_instance,
)

DEFAULT = Counter(32, AFTER_ITER)
OPTIONS = ("iv", "counter", "counter_bits", "counter_location")


class FeedbackModeKdf(PrfKdf):
    """The core of ``kdf108fb(PRF)``: each block feeds the next."""

    __slots__ = ()

    def derive(self, fixed: bytes, length: int, /, **options: Any) -> bytes:
        block = buffer_option(self._name, "iv", options.pop("iv", b""))
        counter = counter_from(
            self._name, options, locations=ITERATION_LOCATIONS, default=DEFAULT, optional=True,
            accepted=OPTIONS,
        )  # fmt: skip
        n = block_count(self._name, length, self._h, counter)
        digest, message = self._prf.digest, counter.message
        blocks = []
        for i in counter.encodings(n):
            block = digest(message(i, block, fixed))
            blocks.append(block)
        return b"".join(blocks)[:length]


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``kdf108fb(PRF)`` from the best (or the named) keyed PRF."""
    return kdf_instance("kdf108fb", lookup, args, FeedbackModeKdf)


TEMPLATE = Template("kdf108fb", create)
