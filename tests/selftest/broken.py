"""Broken drivers for the replay tests (``test_replay.py``): OpenSSL's GCM core misbehaving
only once given data that is not ``bytes``. The known-answer tests pass bytes, so they pass;
the fuzzer also passes bytearrays and memoryviews, and must catch each way of misbehaving.

``python -m tests.selftest.broken CORE ARGS...`` runs ``cryptoapi ARGS...`` with the core
named CORE registered as ``gcm-aes-broken`` in every registry the command makes: a shell's
replay of a printed command, in a process of its own.
"""

import sys
from collections.abc import Callable
from typing import Any

from cryptoapi import InvalidArgument, Registry
from cryptoapi.alg import Buffer
from cryptoapi.cli import fuzz as cli_fuzz
from cryptoapi.cli import main
from cryptoapi.providers.openssl.aead import AesGcm
from cryptoapi.providers.records import record
from cryptoapi.transforms.base import NeedFallback

DRIVER = "gcm-aes-broken"
MakeRegistry = Callable[..., Registry]


class Misbehaving:
    """``gcm(aes)`` by OpenSSL, remembering whether the last message to seal was given as
    something other than bytes (``viewed``), which the subclasses misbehave on."""

    def __init__(self) -> None:
        self.gcm = AesGcm()
        self.authsize = 16
        self.viewed = False

    def setkey(self, key: bytes, /) -> None:
        self.gcm.setkey(key)

    def setauthsize(self, authsize: int, /) -> None:
        self.authsize = authsize
        self.gcm.setauthsize(authsize)

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        self.viewed = not isinstance(plaintext, bytes)
        return self.gcm.encrypt(iv, plaintext, assoc)

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        return self.gcm.decrypt(iv, data, assoc)


class OtherOutputs(Misbehaving):
    """Authenticates one more byte of associated data than it was given, both ways: it
    agrees with itself, not with the reference."""

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        sealed = super().encrypt(iv, plaintext, assoc)
        return self.gcm.encrypt(iv, plaintext, bytes(assoc) + b"!") if self.viewed else sealed

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        return super().decrypt(iv, data, bytes(assoc) + b"!" if self.viewed else assoc)


class RaisesAnError(Misbehaving):
    """Refuses what it should serve (or hand to a fallback), as libsodium's GCM under
    ``rfc4106`` seemed to in issue 26."""

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        if not isinstance(plaintext, bytes):
            raise InvalidArgument("gcm-aes-broken: no views")
        return super().encrypt(iv, plaintext, assoc)


class Crashes(Misbehaving):
    """Lets a library's own exception out."""

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        if not isinstance(plaintext, bytes):
            raise ValueError("the library choked")
        return super().encrypt(iv, plaintext, assoc)


class LosesAByte(Misbehaving):
    """Decrypts to one byte less than it encrypted."""

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        opened = super().decrypt(iv, data, assoc)
        return opened[:-1] if self.viewed else opened


class AcceptsForgeries(Misbehaving):
    """Opens a forged message instead of raising BadMessage."""

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        try:
            return super().decrypt(iv, data, assoc)
        except Exception:
            if not self.viewed:
                raise
            return bytes(len(data) - self.authsize)


class SixteenByteTagsOnly(Misbehaving):
    """A partial ``gcm(aes)`` as libsodium's: NeedFallback for any tag but 16 bytes."""

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        self._check()
        return super().encrypt(iv, plaintext, assoc)

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        self._check()
        return super().decrypt(iv, data, assoc)

    def _check(self) -> None:
        if self.authsize != 16:
            raise NeedFallback(f"gcm-aes-broken: 16-byte tags only, not {self.authsize}")


CORES: dict[str, type[Misbehaving]] = {
    core.__name__: core
    for core in (OtherOutputs, RaisesAnError, Crashes, LosesAByte, AcceptsForgeries,
                 SixteenByteTagsOnly)
}  # fmt: skip


def registry_with(core: type[Misbehaving]) -> MakeRegistry:
    """Registries (as ``Registry(selftests)`` makes them) with ``core`` as ``gcm-aes-broken``,
    ranked below every real ``gcm(aes)``."""

    def make(selftests: str | None = None, **options: Any) -> Registry:
        registry = Registry(selftests, workers=1, **options)
        registry.register(record("gcm(aes)", DRIVER, core, provider="user", priority=1))
        return registry

    return make


def run_with(core: str, argv: list[str]) -> int:
    """``cryptoapi argv...`` with ``CORES[core]`` in its registries."""
    cli_fuzz.Registry = registry_with(CORES[core])  # every registry the command makes
    return main(argv)


if __name__ == "__main__":
    sys.exit(run_with(sys.argv[1], sys.argv[2:]))
