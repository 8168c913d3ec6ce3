"""OpenSSL's key derivations in one piece: HKDF (RFC 5869) and SP 800-108r1 §4.1 counter
mode (KBKDF) over HMAC-SHA-256 (priority 300), and counter mode over CMAC-AES (290).

The templates build the same names from the parts (``hkdf(hmac(sha256-openssl))``,
priority 300), running HMAC's two hashes per block in Python. The HMAC drivers here hand
each HMAC to OpenSSL whole: a short derivation (the keys a protocol derives) is one or a
few HMACs in C (HKDF: OpenSSL's HMAC, ``_hashlib.hmac_new``, what :func:`hmac.new` is
built on; counter mode: the hmac template's core on hashlib's OpenSSL states), a long one a
single call of ``cryptography``'s HKDFExpand or KBKDFHMAC, whichever
``bench/kdf.py`` measures faster for the length. They measure faster than the
compositions at every length, so they rank with them (300) and win the tie as one-piece
drivers do. CMAC-AES counter mode measures slower than its composition except for long
outputs, so it ranks just below (the manifest's ``ONE_PIECE``) and serves those who ask
for it by driver name. They take exactly the keys, options and
lengths the templates take, with the templates' errors (the shared checks of
:mod:`cryptoapi.templates._kdf108`): ``cryptography`` does every counter width r (8 to 32
bits) and location (before, after, middle at any split) of counter mode, so nothing is
left to another implementation. Feedback and double-pipeline modes (``kdf108fb``,
``kdf108dp``) have no one-piece driver: ``cryptography`` does counter mode only.

HKDF: ``setkey`` extracts (§2.2) in one HMAC call, keeping PRK; ``derive`` expands (§2.3):
one HMAC call for one block, HKDFExpand for more. Counter mode: ``setkey`` keys an HMAC
once; a derivation of up to ``LOOP_BLOCKS`` blocks with the default counter runs it per
block, a longer one is one KBKDFHMAC (cryptography's KDF objects are one-shot, so one is
made per derivation).
"""

import hashlib
from _hashlib import hmac_new  # OpenSSL's HMAC, which hmac.new() wraps in Python
from collections.abc import Callable
from typing import Any, Protocol

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import algorithms
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
from cryptography.hazmat.primitives.kdf.kbkdf import KBKDFCMAC, KBKDFHMAC, CounterLocation, Mode

from cryptoapi.alg import Algorithm, AlgType
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.templates._kdf108 import (
    AFTER,
    BEFORE,
    COUNTER_MODE_LOCATIONS,
    MIDDLE,
    Counter,
    block_count,
    counter_from,
    reject_unknown,
)
from cryptoapi.templates.hkdf import MAX_BLOCKS
from cryptoapi.templates.hmac import Hmac
from cryptoapi.templates.kdf108ctr import DEFAULT
from cryptoapi.transforms.shash import UnkeyedHash

PRIORITY = 300  # the compositions' over OpenSSL: a one-piece driver wins the tie
CMAC_PRIORITY = 290  # the manifest's ONE_PIECE (PARTIAL): below the composition's 300
LOOP_BLOCKS = 5
"""Up to this many blocks, counter mode runs the keyed HMAC per block; from six on one
KBKDFHMAC call is faster (bench/kdf.py). HKDF's expand switches after one block."""

# Only names with a known-answer test (selftest/vectors/kdf.json) are registered, so the
# manager checks every driver; SHA-384 and SHA-512 join when their KATs are added.
_HASHES: dict[str, type[hashes.HashAlgorithm]] = {"sha256": hashes.SHA256}
_LOCATIONS = {
    BEFORE: CounterLocation.BeforeFixed,
    AFTER: CounterLocation.AfterFixed,
    MIDDLE: CounterLocation.MiddleFixed,
}
_COUNTER_OPTIONS = ("counter_bits", "counter_location", "split")
_COUNTERS = tuple(i.to_bytes(DEFAULT.bits // 8, "big") for i in range(1, LOOP_BLOCKS + 1))
"""[1]_32 .. [LOOP_BLOCKS]_32: the counters of a derivation the keyed HMAC serves."""
_AES_KEYS = (16, 24, 32)


class OneShotKdf(Protocol):
    """A cryptography KDF object: it derives once."""

    def derive(self, key_material: bytes, /) -> bytes: ...


KbkdfFactory = Callable[[int, int, CounterLocation, bytes, int | None], OneShotKdf]
"""(length, rlen in bytes, location, fixed input, break location) -> a one-shot KBKDF."""


class Hkdf:
    """``hkdf(hmac(H))``: PRK from one OpenSSL HMAC; OKM from another (one block) or from
    ``HKDFExpand``."""

    __slots__ = ("_digest", "_hash", "_name", "_prk", "_size")

    def __init__(self, name: str, hash_name: str, hash_algorithm: hashes.HashAlgorithm) -> None:
        self._name = name
        self._digest = hash_name
        self._hash = hash_algorithm
        self._size = hash_algorithm.digest_size
        self._prk = b""

    def setkey(self, ikm: bytes, /, salt: bytes = b"", **options: Any) -> None:
        """Extract (§2.2): PRK = HMAC(salt, IKM); no salt (or an empty one) is HashLen zeros,
        which as an HMAC key is the same as an empty one."""
        if options:
            reject_unknown(self._name, options, ("salt",))
        self._prk = hmac_new(salt, ikm, self._digest).digest()

    def derive(self, info: bytes, length: int, /, **options: Any) -> bytes:
        """Expand (§2.3) PRK and ``info`` into ``length`` octets (at most 255·HashLen):
        T(1) = HMAC(PRK, info | 0x01) alone when one block will do."""
        if options:
            reject_unknown(self._name, options)
        size = self._size
        if length <= size:
            return hmac_new(self._prk, info + b"\x01", self._digest).digest()[:length]
        if length > MAX_BLOCKS * size:
            raise InvalidArgument(
                f"{self._name}: length {length} exceeds 255·HashLen = {MAX_BLOCKS * size}"
            )
        return HKDFExpand(self._hash, length, info).derive(self._prk)


class Prf(Protocol):
    """A keyed PRF: the MAC of one message."""

    def digest(self, data: bytes, /) -> bytes: ...


class CounterModeKdf:
    """``kdf108ctr(PRF)`` in one call of a cryptography KBKDF per derivation; ``keyed``
    (the PRF keyed with the key), when given, serves a derivation of at most
    ``LOOP_BLOCKS`` blocks with the default counter, one PRF call per block."""

    __slots__ = ("_check_key", "_h", "_kbkdf", "_key", "_keyed", "_name", "_prf")

    def __init__(
        self,
        name: str,
        kbkdf: KbkdfFactory,
        h: int,
        *,
        check_key: Callable[[str, bytes], None] | None = None,
        keyed: Callable[[bytes], Prf] | None = None,
    ) -> None:
        self._name = name
        self._kbkdf = kbkdf
        self._h = h
        self._check_key = check_key
        self._keyed = keyed
        self._key = b""
        self._prf: Prf | None = None

    def setkey(self, key: bytes, /, **options: Any) -> None:
        if options:
            reject_unknown(self._name, options)
        if self._check_key is not None:
            self._check_key(self._name, key)
        self._key = key
        self._prf = self._keyed(key) if self._keyed is not None else None

    def derive(self, fixed: bytes, length: int, /, **options: Any) -> bytes:
        prf = self._prf
        if prf is not None and not options:
            if length <= self._h:  # the common case: one block, [1]_32 first
                return prf.digest(_COUNTERS[0] + fixed)[:length]
            if length <= LOOP_BLOCKS * self._h:
                return self._blocks(fixed, length)
        counter = counter_from(
            self._name, options, locations=COUNTER_MODE_LOCATIONS, default=DEFAULT, optional=False,
            accepted=_COUNTER_OPTIONS,
        )  # fmt: skip
        block_count(self._name, length, self._h, counter)
        kdf = self._kbkdf(
            length, counter.bits // 8, _LOCATIONS[counter.location], fixed,
            self._split(counter, fixed),
        )  # fmt: skip
        return kdf.derive(self._key)

    def _blocks(self, fixed: bytes, length: int) -> bytes:
        """K(i) = PRF(key, [i]_32 || fixed) for i = 1..n (§4.1 with the default counter:
        32 bits, before the fixed input)."""
        assert self._prf is not None
        prf = self._prf.digest
        blocks = [prf(counter + fixed) for counter in _COUNTERS[: -(-length // self._h)]]
        return b"".join(blocks)[:length]

    def _split(self, counter: Counter, fixed: bytes) -> int | None:
        """The break location of a ``middle`` counter (None elsewhere), within ``fixed``."""
        if counter.location != MIDDLE:
            return None
        if counter.split > len(fixed):
            raise InvalidArgument(
                f"{self._name}: split {counter.split} is beyond the {len(fixed)}-byte fixed input"
            )
        return counter.split


def _hmac_kbkdf(hash_algorithm: hashes.HashAlgorithm) -> KbkdfFactory:
    def kbkdf(
        length: int, rlen: int, location: CounterLocation, fixed: bytes, split: int | None
    ) -> OneShotKdf:
        return KBKDFHMAC(
            hash_algorithm, Mode.CounterMode, length, rlen, None, location, None, None, fixed,
            break_location=split,
        )  # fmt: skip

    return kbkdf


def _cmac_kbkdf(
    length: int, rlen: int, location: CounterLocation, fixed: bytes, split: int | None
) -> OneShotKdf:
    return KBKDFCMAC(
        algorithms.AES, Mode.CounterMode, length, rlen, None, location, None, None, fixed,
        break_location=split,
    )  # fmt: skip


def _aes_key(name: str, key: bytes) -> None:
    """InvalidKey unless ``key`` is an AES key, as ``cmac(aes)`` refuses it."""
    if len(key) not in _AES_KEYS:
        raise InvalidKey(f"{name}: CMAC-AES takes a 16-, 24- or 32-byte key, not {len(key)} bytes")


def _kdf_record(
    name: str, driver: str, create: Callable[[], object], priority: int = PRIORITY
) -> Algorithm:
    return Algorithm(
        name=name,
        driver=driver,
        type=AlgType.KDF,
        priority=priority,
        provider="openssl",
        create=create,
        keyed=True,
    )


def _hkdf(hash_name: str) -> Algorithm:
    name = f"hkdf(hmac({hash_name}))"
    algorithm = _HASHES[hash_name]()
    return _kdf_record(
        name, f"hkdf-hmac-{hash_name}-openssl", lambda: Hkdf(name, hash_name, algorithm)
    )


def _kdf108ctr_hmac(hash_name: str) -> Algorithm:
    name = f"kdf108ctr(hmac({hash_name}))"
    algorithm = _HASHES[hash_name]()

    new = getattr(hashlib, hash_name)
    hash_core = UnkeyedHash(new)

    def keyed(key: bytes) -> Prf:
        """HMAC on hashlib's OpenSSL states (the hmac template's core): for a few blocks,
        two state copies per block beat copying an OpenSSL HMAC (bench/kdf.py)."""
        prf = Hmac(hash_core, new().block_size)
        prf.setkey(key)
        return prf

    kbkdf = _hmac_kbkdf(algorithm)
    return _kdf_record(
        name,
        f"kdf108ctr-hmac-{hash_name}-openssl",
        lambda: CounterModeKdf(name, kbkdf, algorithm.digest_size, keyed=keyed),
    )


def _kdf108ctr_cmac() -> Algorithm:
    name = "kdf108ctr(cmac(aes))"
    return _kdf_record(
        name,
        "kdf108ctr-cmac-aes-openssl",
        lambda: CounterModeKdf(
            name, _cmac_kbkdf, algorithms.AES.block_size // 8, check_key=_aes_key
        ),
        CMAC_PRIORITY,
    )


ALGORITHMS = (
    *(_hkdf(hash_name) for hash_name in _HASHES),
    *(_kdf108ctr_hmac(hash_name) for hash_name in _HASHES),
    _kdf108ctr_cmac(),
)
