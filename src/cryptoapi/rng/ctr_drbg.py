"""CTR_DRBG with AES and a derivation function, SP 800-90A Rev. 1 §10.2.1, over the
registry's best ``ctr(aes)`` and ``cbc(aes)``.

    Update(provided_data):                                                   §10.2.1.2
        temp := E(Key, V+1) || E(Key, V+2) || ...  (seedlen = keylen + 16 bytes)
        temp := temp ⊕ provided_data;  Key := leftmost keylen bytes;  V := the rest
    Block_Cipher_df(input, L):                                                 §10.3.2
        S := [len(input)]_32 || [L]_32 || input || 0x80, zero-padded to 16 bytes
        temp := BCC(K0, [0]_32 || 0^96 || S) || BCC(K0, [1]_32 || 0^96 || S) || ...
            with K0 = 0x00 0x01 0x02 ...;  K := leftmost keylen bytes;  X := the next 16
        output := E(K, X) || E(K, E(K, X)) || ...   (L bytes)
    Instantiate(seed_material):  Key := 0;  V := 0;  Update(df(seed_material))
    Reseed(seed_material):       Update(df(seed_material))
    Generate(n, additional):                                                   §10.2.1.5.2
        additional := df(additional) and Update(additional) if given, else 0^seedlen
        output := E(Key, V+1) || E(Key, V+2) ...  (n bytes);  Update(additional)

The counter is the whole 128-bit block (ctr_len = blocklen), so the E(Key, V+i) sequences
are exactly ``ctr(aes)`` keystream from IV V+1, the way the kernel generates; BCC is the
last block of ``cbc(aes)`` with a zero IV, and the df's output chain is ``cbc(aes)`` of
zeros from IV X. Security strength: the AES key length.
"""

from cryptoapi.alg import AlgType, InnerLookup
from cryptoapi.transforms.skcipher import SkcipherCore

BLOCK = 16
_COUNTER = 1 << (8 * BLOCK)
_ZERO_IV = bytes(BLOCK)


class CtrDrbg:
    """The mechanism's working state: Key in the keyed ``ctr(aes)`` core, V here."""

    __slots__ = ("_cbc", "_ctr", "_keylen", "_seedlen", "_v")

    def __init__(self, lookup: InnerLookup, *, keylen: int) -> None:
        self._ctr: SkcipherCore = lookup("ctr(aes)", AlgType.SKCIPHER).create()
        self._cbc: SkcipherCore = lookup("cbc(aes)", AlgType.SKCIPHER).create()
        self._keylen = keylen
        self._seedlen = keylen + BLOCK
        self._v = 0

    def instantiate(self, seed_material: bytes, /) -> None:
        self._ctr.setkey(bytes(self._keylen))
        self._v = 0
        self._update(self._df(seed_material))

    def reseed(self, seed_material: bytes, /) -> None:
        self._update(self._df(seed_material))

    def generate(self, n: int, additional: bytes, reseed_counter: int, /) -> bytes:
        if additional:
            additional = self._df(additional)
            self._update(additional)
        else:
            additional = bytes(self._seedlen)
        output = self._keystream(n)
        self._update(additional)
        return output

    def _keystream(self, n: int) -> bytes:
        """E(Key, V+1) || E(Key, V+2) || ..., n bytes; V advances by the blocks used."""
        blocks = -(-n // BLOCK)
        first = ((self._v + 1) % _COUNTER).to_bytes(BLOCK, "big")
        self._v = (self._v + blocks) % _COUNTER
        return self._ctr.encrypt(first, bytes(blocks * BLOCK))[:n]

    def _update(self, provided: bytes) -> None:
        """§10.2.1.2 CTR_DRBG_Update (``provided`` is seedlen bytes)."""
        temp = int.from_bytes(self._keystream(self._seedlen), "big")
        temp ^= int.from_bytes(provided, "big")
        state = temp.to_bytes(self._seedlen, "big")
        self._ctr.setkey(state[: self._keylen])
        self._v = int.from_bytes(state[self._keylen :], "big")

    def _df(self, data: bytes) -> bytes:
        """§10.3.2 Block_Cipher_df, returning seedlen bytes."""
        s = len(data).to_bytes(4, "big") + self._seedlen.to_bytes(4, "big") + data + b"\x80"
        s += bytes(-len(s) % BLOCK)
        self._cbc.setkey(bytes(range(self._keylen)))
        temp = b"".join(
            self._bcc(i.to_bytes(4, "big") + bytes(BLOCK - 4) + s)
            for i in range(-(-self._seedlen // BLOCK))
        )
        self._cbc.setkey(temp[: self._keylen])
        x = temp[self._keylen : self._seedlen]
        return self._cbc.encrypt(x, bytes(-(-self._seedlen // BLOCK) * BLOCK))[: self._seedlen]

    def _bcc(self, data: bytes) -> bytes:
        """§10.3.3 BCC: the CBC-MAC of ``data`` under the cbc core's key."""
        return self._cbc.encrypt(_ZERO_IV, data)[-BLOCK:]
