"""The ``xcbc`` template: the XCBC MAC of RFC 3566 (AES-XCBC-MAC-96 for IPsec, whose ESP and
AH use the first 96 bits) over a 128-bit block cipher with 128-bit keys: ``xcbc(aes)``.

From the 16-byte key K: K1 = E(K, 0x01^16), K2 = E(K, 0x02^16), K3 = E(K, 0x03^16). The
message is CBC-MACed under K1 starting from zero; the last block is XORed with K2 if it is
complete, or padded with 10^j and XORed with K3 if not (an empty message is one padded
block). The result is the full 128-bit E[n]; truncating it to 96 bits is the user's
part (``authenc`` does it with ``setauthsize(12)``).

The running state is CMAC's :class:`~cryptoapi.templates.cmac.CbcMacState`: only the keys
differ (CMAC chains under K and XORs K1/K2; XCBC chains under K1 and XORs K2/K3).
"""

from cryptoapi.alg import Algorithm, AlgType, InnerLookup, Template
from cryptoapi.errors import InvalidKey
from cryptoapi.templates._modes import inner_of, mac_instance, require
from cryptoapi.templates.cmac import Cmac, MacKeys

BLOCK_SIZE = 16
KEY_SIZE = 16


class Xcbc(Cmac):
    """The XCBC core: ``setkey`` derives K1, K2, K3 and keys the chain's cipher with K1."""

    __slots__ = ()

    def _derive(self, key: bytes) -> MacKeys:
        if len(key) != KEY_SIZE:
            raise InvalidKey(f"xcbc takes a 16-byte key, got {len(key)} bytes")
        deriver = self._new_cipher()
        deriver.setkey(key)
        k1, k2, k3 = (deriver.encrypt_block(bytes([i]) * BLOCK_SIZE) for i in (1, 2, 3))
        chain = self._new_cipher()
        chain.setkey(k1)
        return MacKeys(chain, BLOCK_SIZE, int.from_bytes(k2, "big"), int.from_bytes(k3, "big"))


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``xcbc(C)`` from the best (or the named) 128-bit block cipher C."""
    cipher = inner_of("xcbc", lookup, args, AlgType.CIPHER)
    require(
        cipher.blocksize == BLOCK_SIZE and cipher.min_keysize <= KEY_SIZE <= cipher.max_keysize,
        "xcbc",
        cipher,
        "a 16-byte block cipher taking 16-byte keys",
    )
    return mac_instance(
        "xcbc",
        cipher,
        lambda: Xcbc(cipher.create, BLOCK_SIZE),
        digestsize=BLOCK_SIZE,
        keysizes=(KEY_SIZE, KEY_SIZE),  # RFC 3566: a 128-bit key K
    )


TEMPLATE = Template("xcbc", create)
