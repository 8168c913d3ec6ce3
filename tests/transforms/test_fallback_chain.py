"""A fallback may be partial too: the transform passes over each implementation that
raises NeedFallback until one serves (or says, in the last one's words, that none can)."""

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from cryptoapi import Algorithm, AlgType, InvalidArgument, NeedFallback, Registry

SERVED: list[str] = []
"""The drivers of this file that served an encryption, in order."""


def partial_gcm(ivsizes: range, label: str):
    """An AES-GCM core (cryptography's) that leaves IVs outside ``ivsizes`` to others."""

    class Core:
        def setkey(self, key):
            self.aead = AESGCM(key)

        def setauthsize(self, n):
            assert n == 16

        def _check(self, iv):
            if len(iv) not in ivsizes:
                raise NeedFallback(f"{label} takes IVs of {ivsizes.start}-{ivsizes.stop - 1}")

        def encrypt(self, iv, data, assoc):
            self._check(iv)
            SERVED.append(label)
            return self.aead.encrypt(iv, bytes(data), bytes(assoc))

        def decrypt(self, iv, data, assoc):
            self._check(iv)
            return self.aead.decrypt(iv, bytes(data), bytes(assoc))

    return Core


def register(
    registry: Registry, driver: str, priority: int, ivsizes: range, name: str = "gcm(aes)"
) -> None:
    registry.register(Algorithm(
        name=name, driver=driver, type=AlgType.AEAD, priority=priority, provider="user",
        create=partial_gcm(ivsizes, driver), ivsize=12, ivsizes=(1, 2**32), maxauthsize=16,
        authsizes=(16,), min_keysize=16, max_keysize=32,
    ))  # fmt: skip


@pytest.fixture
def registry():
    registry = Registry("off")
    register(registry, "gcm-aes-twelve", 900, range(12, 13))
    register(registry, "gcm-aes-short", 800, range(1, 17))
    return registry


@pytest.mark.parametrize("ivlen", [12, 16, 64, 200])
def test_each_partial_fallback_is_passed_over_until_one_serves(registry, ivlen):
    tfm = registry.alloc_aead("gcm(aes)")
    assert tfm.driver_name == "gcm-aes-twelve"
    SERVED.clear()
    key, iv = bytes(range(16)), bytes(i * 7 % 256 for i in range(ivlen))
    tfm.setkey(key)
    sealed = tfm.encrypt(iv, b"message", b"assoc")
    reference = registry.alloc_aead("gcm(aes-generic)")
    reference.setkey(key)
    assert sealed == reference.encrypt(iv, b"message", b"assoc")
    assert tfm.decrypt(iv, sealed, b"assoc") == b"message"
    # served by the first in priority order that takes the IV; longer ones by the project's
    expected = {12: ["gcm-aes-twelve"], 16: ["gcm-aes-short"]}.get(ivlen, [])
    assert SERVED[-len(expected) :] == expected if expected else SERVED == []


def test_when_no_implementation_serves_the_caller_gets_the_last_reason():
    registry = Registry("off")
    for driver, priority in (("mine-a", 900), ("mine-b", 800)):
        register(registry, driver, priority, range(12, 13), name="mine")
    tfm = registry.alloc_aead("mine")
    tfm.setkey(bytes(16))
    with pytest.raises(InvalidArgument, match="mine-b takes IVs of 12-12"):
        tfm.encrypt(bytes(13), b"x")
