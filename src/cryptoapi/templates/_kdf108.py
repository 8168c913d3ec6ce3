"""What the SP 800-108r1 KDF templates (§4.1 counter, §4.2 feedback, §4.3 double-pipeline)
and ``hkdf`` share: the counter [i]_r and length [L]_32 encodings, the mode options, the
block-count limits of §4, which PRFs qualify, and the instance record.

Every mode computes n = ⌈L/h⌉ PRF blocks of h bytes each and returns the leftmost L bytes.
With a counter of r bits n may not exceed 2^r - 1; without a counter, 2^32 - 1
(:func:`block_count`, checked before the first PRF call). The output length as such is
capped once for every KDF by the transform (``cryptoapi.transforms.kdf.MAX_OUTPUT``). The
counters are produced as the blocks are computed, never listed up front: a 32-bit counter
numbers up to 2^32 - 1 blocks. Where the counter goes is a mode option, as NIST's CAVP
KBKDF tests vary it: relative to the fixed input (counter mode) or to the iteration value
K(i-1) / A(i) (feedback, double-pipeline).
"""

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from cryptoapi.alg import Algorithm, AlgType, InnerLookup, instance
from cryptoapi.errors import InvalidArgument
from cryptoapi.names import parse
from cryptoapi.transforms.cores import ShashCore

COUNTER_BITS = (8, 16, 24, 32)
MAX_BLOCKS_NO_COUNTER = 2**32 - 1

# Counter mode (§4.1) places [i] in the fixed input; CAVP's CTRLOCATION=BEFORE_FIXED etc.
BEFORE, AFTER, MIDDLE = "before", "after", "middle"
COUNTER_MODE_LOCATIONS = (BEFORE, AFTER, MIDDLE)
# Feedback (§4.2) and double-pipeline (§4.3) place it around the iteration value.
BEFORE_ITER, AFTER_ITER, AFTER_FIXED = "before_iter", "after_iter", "after_fixed"
ITERATION_LOCATIONS = (BEFORE_ITER, AFTER_ITER, AFTER_FIXED)

_COUNTER_DETAILS = ("counter_bits", "counter_location", "split")


class PrfKdf:
    """What every KDF core here starts from: a PRF core keyed once by ``setkey`` (so each
    derivation only runs the PRF), its output length h, and the instance name for errors."""

    __slots__ = ("_h", "_name", "_prf")

    def __init__(self, name: str, prf: Algorithm) -> None:
        self._name = name
        self._prf: ShashCore = prf.create()
        self._h = prf.digestsize

    def setkey(self, key: bytes, /, **options: Any) -> None:
        reject_unknown(self._name, options)
        self._prf.setkey(key)


@dataclass(frozen=True, slots=True)
class Counter:
    """The counter layout of one derivation: ``bits`` r (0: no counter), its location and,
    for ``middle``, the byte offset in the fixed input where it goes."""

    bits: int
    location: str
    split: int = 0

    def encodings(self, n: int) -> Iterable[bytes]:
        """[1]_r .. [n]_r, big-endian (empty strings without a counter), made as they are
        consumed so that no list of n counters is ever built; the first 256 of each width
        are made once and shared."""
        if not self.bits:
            return itertools.repeat(b"", n)
        table = self._table()
        if n <= len(table):
            return table[:n]
        width = self.bits >> 3
        rest = (i.to_bytes(width, "big") for i in range(len(table) + 1, n + 1))
        return itertools.chain(table, rest)

    def _table(self) -> tuple[bytes, ...]:
        """[1]_r .. [min(256, 2^r - 1)]_r, made on first use and shared by every layout."""
        table = _tables.get(self.bits)
        if table is None:
            size = min(_TABLE_SIZE, self.max_blocks)
            width = self.bits >> 3
            table = _tables[self.bits] = tuple(i.to_bytes(width, "big") for i in range(1, size + 1))
        return table

    def message(self, counter: bytes, iteration: bytes, fixed: bytes) -> bytes:
        """The PRF input of a block in feedback (§4.2) and double-pipeline (§4.3) modes: the
        iteration value K(i-1) or A(i), the fixed input, and [i]_r where the layout puts it."""
        if self.location == BEFORE_ITER:
            return counter + iteration + fixed
        if self.location == AFTER_ITER:
            return iteration + counter + fixed
        return iteration + fixed + counter  # AFTER_FIXED

    @property
    def max_blocks(self) -> int:
        return (1 << self.bits) - 1 if self.bits else MAX_BLOCKS_NO_COUNTER


_TABLE_SIZE = 256
_tables: dict[int, tuple[bytes, ...]] = {}

NO_COUNTER = Counter(0, AFTER_ITER)  # [i] is empty: K(i-1) || FixedInput


def encode_length(length_bits: int) -> bytes:
    """[L]_32: the output length in bits as a 32-bit big-endian integer (TypeError unless an
    int; InvalidArgument unless 1 to 2^32 - 1)."""
    if not isinstance(length_bits, int) or isinstance(length_bits, bool):
        raise TypeError(f"L must be an int, not {type(length_bits).__name__}")
    if not 0 < length_bits < 2**32:
        raise InvalidArgument(f"L = {length_bits} bits does not fit [L]_32 (1 to 2^32 - 1)")
    return length_bits.to_bytes(4, "big")


def block_count(alg: str, length: int, blocksize: int, counter: Counter) -> int:
    """n = ⌈length / h⌉, or InvalidArgument when the counter (or 2^32 - 1) cannot number it
    (SP 800-108r1 §4.1-§4.3 step 2: "if n > 2^r - 1, then output an error indicator")."""
    n = -(-length // blocksize)
    if n > counter.max_blocks:
        why = f"a {counter.bits}-bit counter" if counter.bits else "SP 800-108 (no counter)"
        raise InvalidArgument(
            f"{alg}: {length} bytes need {n} PRF blocks of {blocksize} bytes; "
            f"{why} allows at most {counter.max_blocks}"
        )
    return n


def counter_from(
    alg: str,
    options: dict[str, Any],
    *,
    locations: tuple[str, ...],
    default: Counter,
    optional: bool,
    accepted: tuple[str, ...],
) -> Counter:
    """The counter layout a derivation's ``options`` ask for (``default`` when there are
    none); any option outside ``accepted`` is an InvalidArgument naming it."""
    if not options:
        return default
    counter = _take_counter(alg, options, locations=locations, default=default, optional=optional)
    reject_unknown(alg, options, accepted)
    return counter


def _take_counter(
    alg: str,
    options: dict[str, Any],
    *,
    locations: tuple[str, ...],
    default: Counter,
    optional: bool,
) -> Counter:
    """Take the counter options out of ``options`` (the caller's private dict).

    ``counter`` (True or False, where the mode makes the counter optional), ``counter_bits``
    (8, 16, 24 or 32), ``counter_location`` (one of ``locations``) and ``split`` (required
    with ``middle`` and only there: the counter's byte offset in the fixed input). A value of
    the wrong type is a TypeError, a wrong value of the right type an InvalidArgument.
    """
    given = [name for name in _COUNTER_DETAILS if name in options]
    if not _use_counter(alg, options.pop("counter", True), optional):
        if given:
            raise InvalidArgument(f"{alg}: {', '.join(given)} apply only with counter=True")
        return NO_COUNTER
    bits = _counter_bits(alg, options.pop("counter_bits", default.bits))
    location = options.pop("counter_location", default.location)
    split = options.pop("split", None)
    if location not in locations:
        raise InvalidArgument(
            f"{alg}: counter_location must be one of {', '.join(locations)}, not {shown(location)}"
        )
    if location == MIDDLE:
        return Counter(bits, location, _split(alg, split))
    if split is not None:
        raise InvalidArgument(f"{alg}: split applies only to counter_location='middle'")
    return Counter(bits, location)


def _use_counter(alg: str, use: object, optional: bool) -> bool:
    """The ``counter`` option: a bool, and True where the mode always counts (§4.1)."""
    expected = "True or False" if optional else "True (this mode always uses a counter)"
    if not isinstance(use, bool):
        raise TypeError(f"{alg}: counter must be {expected}, not {type(use).__name__}")
    if not use and not optional:
        raise InvalidArgument(f"{alg}: counter must be {expected}, not False")
    return use


def _counter_bits(alg: str, bits: object) -> int:
    """The ``counter_bits`` option r: an int (not a bool), one of the CAVP widths."""
    if type(bits) is not int:
        raise TypeError(
            f"{alg}: counter_bits must be one of 8, 16, 24, 32 (an int), not {type(bits).__name__}"
        )
    if bits not in COUNTER_BITS:
        raise InvalidArgument(
            f"{alg}: counter_bits must be one of 8, 16, 24, 32, not {shown(bits)}"
        )
    return bits


def _split(alg: str, split: object) -> int:
    """The ``split`` option of a ``middle`` counter: the byte offset, an int >= 0."""
    needs = (
        f"{alg}: counter_location='middle' needs split, the byte offset of the counter in the "
        "fixed input (an int >= 0)"
    )
    if split is None:
        raise InvalidArgument(needs)
    if type(split) is not int:
        raise TypeError(f"{needs}, not {type(split).__name__}")
    if split < 0:
        raise InvalidArgument(f"{needs}, not {split}")
    return split


def shown(value: object) -> str:
    """An option value for a message: small plain values as themselves, anything else (bytes
    that may be key material by mistake, large objects) by type and size only."""
    if value is None or (isinstance(value, bool | int | float) and len(repr(value)) <= 20):
        return repr(value)
    if isinstance(value, str) and len(value) <= 20 and value.isprintable():
        return repr(value)
    size = f"{len(value)}-byte " if isinstance(value, bytes | bytearray | memoryview) else ""
    return f"<{size}{type(value).__name__}>"


def reject_unknown(alg: str, options: dict[str, Any], accepted: tuple[str, ...] = ()) -> None:
    """InvalidArgument naming every option left over (values are never shown)."""
    if options:
        names = ", ".join(sorted(options))
        allowed = f" (accepted: {', '.join(accepted)})" if accepted else ""
        raise InvalidArgument(f"{alg}: unknown option(s) {names}{allowed}")


def buffer_option(alg: str, name: str, value: object) -> bytes:
    """A bytes-like option value as bytes; anything else (a str too) is a TypeError."""
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"{alg}: {name} must be bytes-like, not {type(value).__name__}")
    return bytes(value)


SP800_108_PRFS = ("hmac", "cmac")


def sp800_108_prf(prf: Algorithm) -> str | None:
    """Why ``prf`` cannot serve SP 800-108, if it cannot: §4 takes HMAC, CMAC or KMAC (no
    KMAC is offered here); a one-time MAC such as poly1305 is no PRF."""
    if parse(prf.name).word not in SP800_108_PRFS:
        return "SP 800-108r1 §4 takes HMAC or CMAC as its PRF"
    return None


def kdf_instance(
    template: str,
    lookup: InnerLookup,
    args: tuple[str, ...],
    core: Callable[[str, Algorithm], object],
    *,
    needs: Callable[[Algorithm], str | None] = sp800_108_prf,
) -> Algorithm:
    """The record of ``template(PRF)``: a KDF over the best (or the named) keyed shash PRF,
    with its priority. ``core(name, prf)`` makes the per-transform core: it must not run the
    PRF (a KDF costs nothing until it derives; its self-test is the manager's business).
    ``needs(prf)`` returns a reason to refuse the PRF, or None."""
    if len(args) != 1:
        raise InvalidArgument(f"{template} takes one PRF, got {len(args)}")
    prf = lookup(args[0], AlgType.SHASH)
    if not prf.keyed:
        raise InvalidArgument(
            f"{template} needs a keyed PRF such as hmac(sha256) or cmac(aes); "
            f"{prf.driver} is unkeyed"
        )
    refusal = needs(prf)
    if refusal:
        raise InvalidArgument(f"{template} cannot use {prf.driver}: {refusal}")
    name = f"{template}({prf.name})"
    return instance(
        template,
        (prf,),
        type=AlgType.KDF,
        create=lambda: core(name, prf),
        keyed=True,
    )
