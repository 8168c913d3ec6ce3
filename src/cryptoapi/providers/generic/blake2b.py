"""BLAKE2b, RFC 7693: 64-bit words, 12 rounds, G's rotations 32, 24, 16, 63 (§2.1), and
the kernel's four digest sizes, blake2b-160/256/384/512, each keyed with an optional key of
up to 64 bytes (empty: unkeyed). The construction is in :mod:`._blake2`.
"""

from functools import partial

from cryptoapi.alg import PRIORITY_GENERIC
from cryptoapi.providers.generic._blake2 import Blake2Core, Blake2Params, initial_value
from cryptoapi.providers.records import BLAKE2B_SIZES, record

BLAKE2B = Blake2Params(
    name="BLAKE2b",
    word_bits=64,
    rounds=12,
    rotations=(32, 24, 16, 63),
    max_digest=64,
    iv=initial_value(64),
)

ALGORITHMS = tuple(
    record(
        name,
        f"{name}-generic",
        partial(Blake2Core, BLAKE2B, size),
        provider="generic",
        priority=PRIORITY_GENERIC,
    )
    for name, size in BLAKE2B_SIZES.items()
)
