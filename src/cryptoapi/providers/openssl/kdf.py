"""OpenSSL's key derivations in one piece through ``cryptography`` (priority 290): HKDF
(RFC 5869) and SP 800-108r1 §4.1 counter mode (KBKDF) over HMAC-SHA-256, and counter mode
over CMAC-AES.

The templates build the same names from the parts (``hkdf(hmac(sha256-openssl))``,
priority 300), running the PRF block loop in Python; these drivers hand the whole
derivation to OpenSSL, which ``bench/kdf.py`` measures faster only for long outputs (about
1 KiB and more), so they rank just below the compositions (the manifest's ``ONE_PIECE``)
and serve those who ask for them by driver name. They take exactly the keys, options and
lengths the templates take, with the templates' errors (the shared checks of
:mod:`cryptoapi.templates._kdf108`): ``cryptography`` does every counter width r (8 to 32
bits) and location (before, after, middle at any split) of counter mode, so nothing is
left to another implementation. Feedback and double-pipeline modes (``kdf108fb``,
``kdf108dp``) have no one-piece driver: ``cryptography`` does counter mode only.

HKDF: ``setkey`` extracts (§2.2) in one call, keeping PRK; ``derive`` expands (§2.3) in
another. Counter mode: ``setkey`` keeps the key (cryptography's KDF objects are one-shot,
so one is made per derivation); a derivation of one block with the default counter is a
single one-shot HMAC, which is cheaper than building the KDF object.
"""

import hmac
from collections.abc import Callable
from typing import Any, Protocol

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import algorithms
from cryptography.hazmat.primitives.kdf.hkdf import HKDF, HKDFExpand
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
from cryptoapi.templates.kdf108ctr import DEFAULT

PRIORITY = 290  # the manifest's ONE_PIECE: below the compositions over OpenSSL (300)

# Only names with a known-answer test (selftest/vectors/kdf.json) are registered, so the
# manager checks every driver; SHA-384 and SHA-512 join when their KATs are added.
_HASHES: dict[str, type[hashes.HashAlgorithm]] = {"sha256": hashes.SHA256}
_LOCATIONS = {
    BEFORE: CounterLocation.BeforeFixed,
    AFTER: CounterLocation.AfterFixed,
    MIDDLE: CounterLocation.MiddleFixed,
}
_COUNTER_OPTIONS = ("counter_bits", "counter_location", "split")
_FIRST = (1).to_bytes(DEFAULT.bits // 8, "big")  # [1]_32, the first block's counter
_AES_KEYS = (16, 24, 32)


class OneShotKdf(Protocol):
    """A cryptography KDF object: it derives once."""

    def derive(self, key_material: bytes, /) -> bytes: ...


KbkdfFactory = Callable[[int, int, CounterLocation, bytes, int | None], OneShotKdf]
"""(length, rlen in bytes, location, fixed input, break location) -> a one-shot KBKDF."""


class Hkdf:
    """``hkdf(hmac(H))``: PRK from ``HKDF.extract``, OKM from ``HKDFExpand``."""

    __slots__ = ("_hash", "_name", "_prk")

    def __init__(self, name: str, hash_algorithm: hashes.HashAlgorithm) -> None:
        self._name = name
        self._hash = hash_algorithm
        self._prk = b""

    def setkey(self, ikm: bytes, /, **options: Any) -> None:
        """Extract (§2.2): PRK = HMAC(salt, IKM); no salt (or an empty one) is HashLen zeros,
        which as an HMAC key is the same as an empty one."""
        salt = options.pop("salt", b"")
        reject_unknown(self._name, options, ("salt",))
        self._prk = HKDF.extract(self._hash, salt or None, ikm)

    def derive(self, info: bytes, length: int, /, **options: Any) -> bytes:
        """Expand (§2.3) PRK and ``info`` into ``length`` octets (at most 255·HashLen)."""
        if options:
            reject_unknown(self._name, options)
        limit = MAX_BLOCKS * self._hash.digest_size
        if length > limit:
            raise InvalidArgument(f"{self._name}: length {length} exceeds 255·HashLen = {limit}")
        return HKDFExpand(self._hash, length, info).derive(self._prk)


class CounterModeKdf:
    """``kdf108ctr(PRF)`` in one call of a cryptography KBKDF per derivation; ``one_block``
    (the PRF of a message under the key), when given, serves a derivation of at most one
    block with the default counter."""

    __slots__ = ("_check_key", "_h", "_kbkdf", "_key", "_name", "_one_block")

    def __init__(
        self,
        name: str,
        kbkdf: KbkdfFactory,
        h: int,
        *,
        check_key: Callable[[str, bytes], None] | None = None,
        one_block: Callable[[bytes, bytes], bytes] | None = None,
    ) -> None:
        self._name = name
        self._kbkdf = kbkdf
        self._h = h
        self._check_key = check_key
        self._one_block = one_block
        self._key = b""

    def setkey(self, key: bytes, /, **options: Any) -> None:
        reject_unknown(self._name, options)
        if self._check_key is not None:
            self._check_key(self._name, key)
        self._key = key

    def derive(self, fixed: bytes, length: int, /, **options: Any) -> bytes:
        if not options and length <= self._h and self._one_block is not None:
            return self._one_block(self._key, _FIRST + fixed)[:length]
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


def _kdf_record(name: str, driver: str, create: Callable[[], object]) -> Algorithm:
    return Algorithm(
        name=name,
        driver=driver,
        type=AlgType.KDF,
        priority=PRIORITY,
        provider="openssl",
        create=create,
        keyed=True,
    )


def _hkdf(hash_name: str) -> Algorithm:
    name = f"hkdf(hmac({hash_name}))"
    algorithm = _HASHES[hash_name]()
    return _kdf_record(name, f"hkdf-hmac-{hash_name}-openssl", lambda: Hkdf(name, algorithm))


def _kdf108ctr_hmac(hash_name: str) -> Algorithm:
    name = f"kdf108ctr(hmac({hash_name}))"
    algorithm = _HASHES[hash_name]()

    def one_block(key: bytes, message: bytes) -> bytes:
        return hmac.digest(key, message, hash_name)

    kbkdf = _hmac_kbkdf(algorithm)
    return _kdf_record(
        name,
        f"kdf108ctr-hmac-{hash_name}-openssl",
        lambda: CounterModeKdf(name, kbkdf, algorithm.digest_size, one_block=one_block),
    )


def _kdf108ctr_cmac() -> Algorithm:
    name = "kdf108ctr(cmac(aes))"
    return _kdf_record(
        name,
        "kdf108ctr-cmac-aes-openssl",
        lambda: CounterModeKdf(
            name, _cmac_kbkdf, algorithms.AES.block_size // 8, check_key=_aes_key
        ),
    )


ALGORITHMS = (
    *(_hkdf(hash_name) for hash_name in _HASHES),
    *(_kdf108ctr_hmac(hash_name) for hash_name in _HASHES),
    _kdf108ctr_cmac(),
)
