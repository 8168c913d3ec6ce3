"""Checks several provider test files share: one driver against ``cryptography`` called
directly on the same random input."""

import random

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

from cryptoapi import Registry


def check_chacha20(
    registry: Registry, driver: str, rng: random.Random, length: int, counter_limit: int
) -> None:
    """``driver`` encrypts and decrypts as cryptography's ChaCha20, whose nonce is the
    kernel's IV: LE32 block counter (below ``counter_limit``) || 96-bit nonce."""
    key, data = rng.randbytes(32), rng.randbytes(length)
    iv = rng.randrange(counter_limit).to_bytes(4, "little") + rng.randbytes(12)
    tfm = registry.alloc_skcipher(driver)
    tfm.setkey(key)
    expected = Cipher(algorithms.ChaCha20(key, iv), None).encryptor().update(data)
    assert tfm.encrypt(iv, data) == expected
    assert tfm.decrypt(iv, expected) == data
