"""BLAKE2s-256, RFC 7693: 32-bit words, 10 rounds, G's rotations 16, 12, 8, 7 (§2.1), a
32-byte digest, keyed with an optional key of up to 32 bytes (empty: unkeyed). The
construction is in :mod:`._blake2`.
"""

from cryptoapi.alg import PRIORITY_GENERIC
from cryptoapi.providers.generic._blake2 import Blake2Core, Blake2Params, initial_value
from cryptoapi.providers.records import record

BLAKE2S = Blake2Params(
    name="BLAKE2s",
    word_bits=32,
    rounds=10,
    rotations=(16, 12, 8, 7),
    max_digest=32,
    iv=initial_value(32),
)

ALGORITHMS = (
    record(
        "blake2s-256",
        "blake2s-256-generic",
        lambda: Blake2Core(BLAKE2S, 32),
        provider="generic",
        priority=PRIORITY_GENERIC,
    ),
)
