"""HMAC_DRBG, SP 800-90A Rev. 1 §10.1.2, over the registry's best ``hmac(H)``.

    Update(provided_data):                                                    §10.1.2.2
        K := HMAC(K, V || 0x00 || provided_data);  V := HMAC(K, V)
        if provided_data is not Null:
            K := HMAC(K, V || 0x01 || provided_data);  V := HMAC(K, V)
    Instantiate(seed_material):  K := 0x00...00;  V := 0x01...01;  Update   §10.1.2.3
    Reseed(seed_material):       Update(seed_material)                        §10.1.2.4
    Generate(n, additional):                                                  §10.1.2.5
        if additional: Update(additional)
        temp := V := HMAC(K, V) ... until n bytes;  Update(additional)

The HMAC core is keyed once per new K (twice or four times a request), never per block.
"""

from cryptoapi.alg import AlgType, InnerLookup
from cryptoapi.transforms.cores import ShashCore


class HmacDrbg:
    """The mechanism's working state (K lives in the keyed HMAC core, V here)."""

    __slots__ = ("_hmac", "_outlen", "_v")

    def __init__(self, lookup: InnerLookup, *, hmac_name: str) -> None:
        alg = lookup(hmac_name, AlgType.SHASH)
        self._hmac: ShashCore = alg.create()
        self._outlen = alg.digestsize
        self._v = b""

    def instantiate(self, seed_material: bytes, /) -> None:
        self._hmac.setkey(bytes(self._outlen))
        self._v = b"\x01" * self._outlen
        self._update(seed_material)

    def reseed(self, seed_material: bytes, /) -> None:
        self._update(seed_material)

    def generate(self, n: int, additional: bytes, reseed_counter: int, /) -> bytes:
        if additional:
            self._update(additional)
        digest = self._hmac.digest
        blocks = []
        v = self._v
        for _ in range(-(-n // self._outlen)):
            v = digest(v)
            blocks.append(v)
        self._v = v
        self._update(additional)
        return b"".join(blocks)[:n]

    def _update(self, provided: bytes) -> None:
        """§10.1.2.2 HMAC_DRBG_Update."""
        hmac = self._hmac
        hmac.setkey(hmac.digest(self._v + b"\x00" + provided))
        self._v = hmac.digest(self._v)
        if provided:
            hmac.setkey(hmac.digest(self._v + b"\x01" + provided))
            self._v = hmac.digest(self._v)
