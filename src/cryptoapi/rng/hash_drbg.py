"""Hash_DRBG, SP 800-90A Rev. 1 §10.1.1, over the registry's best hash.

    Hash_df(input, seedlen):  Hash(i || [seedlen in bits]_32 || input), i = 1, 2 ...   §10.3.1
    Instantiate(seed_material):  V := Hash_df(seed_material);  C := Hash_df(0x00 || V)
    Reseed(seed_material):       V := Hash_df(0x01 || V || seed_material);  C := Hash_df(0x00 || V)
    Generate(n, additional):                                                         §10.1.1.4
        if additional:  V := V + Hash(0x02 || V || additional)
        output := Hash(V) || Hash(V + 1) || ...   (Hashgen, n bytes)
        V := V + Hash(0x03 || V) + C + reseed_counter

All additions are modulo 2^seedlen; seedlen is 440 bits for SHA-256 and 888 bits for
SHA-384 and SHA-512 (Table 2).
"""

from collections.abc import Callable

from cryptoapi.alg import AlgType, InnerLookup


class HashDrbg:
    """The mechanism's working state V and C, as integers below 2^seedlen."""

    __slots__ = ("_c", "_hash", "_modulus", "_outlen", "_seedlen", "_v")

    def __init__(self, lookup: InnerLookup, *, hash_name: str, seedlen: int) -> None:
        alg = lookup(hash_name, AlgType.SHASH)
        self._hash: Callable[[bytes], bytes] = alg.create().digest
        self._outlen = alg.digestsize
        self._seedlen = seedlen
        self._modulus = 1 << (8 * seedlen)
        self._v = self._c = 0

    def instantiate(self, seed_material: bytes, /) -> None:
        self._set_v(self._hash_df(seed_material))

    def reseed(self, seed_material: bytes, /) -> None:
        self._set_v(self._hash_df(b"\x01" + self._bytes(self._v) + seed_material))

    def generate(self, n: int, additional: bytes, reseed_counter: int, /) -> bytes:
        hash, v = self._hash, self._v
        if additional:
            w = hash(b"\x02" + self._bytes(v) + additional)
            v = (v + int.from_bytes(w, "big")) % self._modulus
        output = b"".join(
            hash(self._bytes((v + i) % self._modulus)) for i in range(-(-n // self._outlen))
        )
        h = int.from_bytes(hash(b"\x03" + self._bytes(v)), "big")
        self._v = (v + h + self._c + reseed_counter) % self._modulus
        return output[:n]

    def _set_v(self, seed: bytes) -> None:
        """V := seed;  C := Hash_df(0x00 || V)  (§10.1.1.2 steps 3-5, §10.1.1.3 steps 3-5)."""
        self._v = int.from_bytes(seed, "big")
        self._c = int.from_bytes(self._hash_df(b"\x00" + seed), "big")

    def _hash_df(self, data: bytes) -> bytes:
        """§10.3.1 Hash_df, returning seedlen bytes."""
        bits = (8 * self._seedlen).to_bytes(4, "big")
        count = -(-self._seedlen // self._outlen)
        return b"".join(self._hash(bytes((i,)) + bits + data) for i in range(1, count + 1))[
            : self._seedlen
        ]

    def _bytes(self, value: int) -> bytes:
        return value.to_bytes(self._seedlen, "big")
