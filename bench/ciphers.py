"""Ciphers and AEADs through cryptoapi against ``cryptography`` called directly, side by
side, at 64 B, 1400 B (an IPsec packet) and 16 KiB; then what the generic (pure-Python)
implementations cost relative to OpenSSL's, which is what a fallback costs.

Run: ``python -m bench.ciphers``.
"""

import os
from collections.abc import Callable

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

from bench.common import report, side_by_side
from cryptoapi import Registry

SIZES = (64, 1400, 16384)
KEY = bytes(range(32))
registry = Registry("off")


def cases(data: bytes) -> list[tuple[str, Callable[[], object], Callable[[], object]]]:
    """(label, ours, cryptography's) per algorithm, keyed and ready."""
    gcm = registry.alloc_aead("gcm(aes)")
    gcm.setkey(KEY[:16])
    esp = registry.alloc_aead("rfc4106(gcm(aes))")
    esp.setkey(KEY[:16] + b"salt")
    chachapoly = registry.alloc_aead("rfc7539(chacha20,poly1305)")
    chachapoly.setkey(KEY)
    cbc = registry.alloc_skcipher("cbc(aes)")
    cbc.setkey(KEY[:16])
    nonce, iv8, iv16, aad = bytes(12), bytes(8), bytes(16), bytes(8)
    aesgcm, chacha = AESGCM(KEY[:16]), ChaCha20Poly1305(KEY)
    aes = algorithms.AES(KEY[:16])

    blocks = data[: len(data) - len(data) % 16]  # CBC takes whole blocks: 1400 -> 1392 B

    def direct_cbc() -> bytes:
        encryptor = Cipher(aes, modes.CBC(iv16)).encryptor()
        return encryptor.update(blocks) + encryptor.finalize()

    return [
        (
            "gcm(aes)",
            lambda: gcm.encrypt(nonce, data, aad),
            lambda: aesgcm.encrypt(nonce, data, aad),
        ),
        (
            "rfc4106(gcm(aes))",
            lambda: esp.encrypt(iv8, data, aad),
            lambda: aesgcm.encrypt(b"salt" + iv8, data, aad),
        ),
        (
            "rfc7539(chacha20,poly1305)",
            lambda: chachapoly.encrypt(nonce, data, aad),
            lambda: chacha.encrypt(nonce, data, aad),
        ),
        ("cbc(aes)", lambda: cbc.encrypt(iv16, blocks), direct_cbc),
    ]


def generic_vs_openssl() -> None:
    data = os.urandom(1400)
    pairs = [
        ("gcm(aes-generic)", "gcm-aes-openssl", "aead"),
        ("rfc7539(chacha20-generic,poly1305-generic)", "rfc7539-chacha20-poly1305-openssl", "aead"),
        ("cbc(aes-generic)", "cbc-aes-openssl", "skcipher"),
        ("xts(aes-generic)", "xts-aes-openssl", "skcipher"),
    ]
    for generic, openssl, kind in pairs:
        slow, fast = (_encrypting(name, kind, data) for name in (generic, openssl))
        ours, peer = side_by_side(slow, fast, 20, rounds=3)
        report(f"{generic} 1400 B", ours, peer, "OpenSSL")


def _encrypting(driver: str, kind: str, data: bytes) -> Callable[[], object]:
    if kind == "aead":
        aead = registry.alloc_aead(driver)
        aead.setkey(KEY[: aead.max_keysize] if aead.max_keysize < 32 else KEY)
        iv = bytes(aead.ivsize)
        return lambda: aead.encrypt(iv, data)
    cipher = registry.alloc_skcipher(driver)
    cipher.setkey(KEY if cipher.min_keysize >= 32 else KEY[:16])
    iv = bytes(cipher.ivsize)
    whole = data[: len(data) - len(data) % cipher.blocksize]  # cbc takes whole blocks
    return lambda: cipher.encrypt(iv, whole)


def main() -> None:
    for size in SIZES:
        data = os.urandom(size)
        for label, ours, peer in cases(data):
            goal = "<= 1.3x" if size == 1400 else ""
            mine, theirs = side_by_side(ours, peer, max(200, 200_000 // size))
            report(f"{label} encrypt {size} B", mine, theirs, "cryptography", goal)
    print("generic (pure Python) against OpenSSL, the cost of a fallback:")
    generic_vs_openssl()


if __name__ == "__main__":
    main()
