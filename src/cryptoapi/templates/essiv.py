"""The ``essiv`` template: Encrypted Salt-Sector IV (Fruhwirth, "New Methods in Hard Disk
Encryption", 2005, §4), as the kernel's ``crypto/essiv.c`` offers it over an skcipher:
``essiv(cbc(aes),sha256)``.

The key K keys the inner skcipher as it is; its hash s = H(K) keys a block cipher E of the
inner mode's cipher (``aes`` for ``cbc(aes)``), so H's digest must be a key size of E.
Each message's IV is the sector number (or any IV) enciphered under s:

    IV' = E_s(IV)        C = inner.encrypt(IV', P)        P = inner.decrypt(IV', C)

so IVs that follow each other (sector numbers) become unpredictable ones, as CBC needs.
Sizes are the inner skcipher's; its IV must be one cipher block. The block cipher is the
one under the inner skcipher where that is a template instance (``cbc(aes-generic)`` ->
``aes-generic``), else the best of the name in its argument (the kernel's
``essiv_get_cipher_name``), an inner algorithm too. The kernel's essiv also wraps an
``authenc`` AEAD; this one wraps skciphers only.
"""

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.errors import InvalidArgument
from cryptoapi.names import parse
from cryptoapi.templates._modes import require
from cryptoapi.transforms.cipher import CipherCore
from cryptoapi.transforms.cores import ShashCore
from cryptoapi.transforms.skcipher import SkcipherCore


class Essiv:
    """ESSIV over an skcipher core, a hash core and a block cipher core for the IV."""

    __slots__ = ("_hash", "_iv_cipher", "_skcipher")

    def __init__(self, skcipher: SkcipherCore, hash: ShashCore, iv_cipher: CipherCore) -> None:
        self._skcipher = skcipher
        self._hash = hash
        self._iv_cipher = iv_cipher

    def setkey(self, key: bytes, /) -> None:
        """K keys the skcipher; the salt s = H(K) keys the IV's cipher."""
        self._skcipher.setkey(key)
        self._iv_cipher.setkey(self._hash.digest(key))

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return self._skcipher.encrypt(self._iv_cipher.encrypt_block(iv), data)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return self._skcipher.decrypt(self._iv_cipher.encrypt_block(iv), data)


def _iv_cipher(lookup: InnerLookup, skcipher: Algorithm) -> Algorithm:
    """The block cipher under ``skcipher``: its own inner one, else the best of the name
    its name wraps (``cbc(aes)`` -> ``aes``)."""
    for inner in skcipher.inner:
        if inner.type is AlgType.CIPHER:
            return inner
    name = parse(skcipher.name)
    require(len(name.args) == 1, "essiv", skcipher, "a mode of one block cipher")
    return lookup(str(name.args[0]), AlgType.CIPHER)


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``essiv(S,H)`` from the best (or the named) skcipher S and unkeyed hash H."""
    if len(args) != 2:
        raise InvalidArgument(f"essiv takes an skcipher and a hash, got {len(args)}")
    skcipher = lookup(args[0], AlgType.SKCIPHER)
    hash = lookup(args[1], AlgType.SHASH)
    require(not hash.keyed, "essiv", hash, "an unkeyed hash")
    cipher = _iv_cipher(lookup, skcipher)
    require(skcipher.ivsize == cipher.blocksize, "essiv", skcipher, "an IV of one cipher block")
    fits = cipher.min_keysize <= hash.digestsize <= cipher.max_keysize
    require(fits, "essiv", hash, f"a digest that is a key of {cipher.name}")
    record = instance(
        "essiv",
        (skcipher, hash),
        type=AlgType.SKCIPHER,
        create=lambda: Essiv(skcipher.create(), hash.create(), cipher.create()),
        blocksize=skcipher.blocksize,
        ivsize=skcipher.ivsize,
        min_keysize=skcipher.min_keysize,
        max_keysize=skcipher.max_keysize,
        min_datasize=skcipher.min_datasize,
    )
    # Named after S and H, as the kernel's; the IV's cipher is an inner algorithm too.
    return record.replace(inner=(skcipher, hash, cipher))


TEMPLATE = Template("essiv", create)
