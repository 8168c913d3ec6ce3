"""The ``essiv`` template: Encrypted Salt-Sector IV (Fruhwirth, "New Methods in Hard Disk
Encryption", 2005, §4), as the kernel's ``crypto/essiv.c`` offers it, over an skcipher
(``essiv(cbc(aes),sha256)``) or over an ``authenc`` AEAD
(``essiv(authenc(hmac(sha256),cbc(aes)),sha256)``, dm-crypt's authenticated sectors).

The key K keys the inner algorithm as it is; a salt s hashed from it keys a block cipher E
of the inner mode's cipher (``aes`` for ``cbc(aes)``), so H's digest must be a key size of
E. Each message's IV is the sector number (or any IV) enciphered under s:

    skcipher:  s = H(K)                 IV' = E_s(IV)
               C = inner.encrypt(IV', P)            P = inner.decrypt(IV', C)
    AEAD:      s = H(enckey || authkey)   (K = enckeylen || authkey || enckey, authenc's)
               IV' = E_s(IV)           C || T = authenc.encrypt(IV', P, A)

so IVs that follow each other (sector numbers) become unpredictable ones, as CBC needs.

The AEAD form is the kernel's (``essiv_aead_setkey``, ``essiv_aead_crypt``) in this
package's convention for associated data, ``assoc`` without the IV (as for authenc and
rfc4106): dm-crypt hands the kernel A || IV, and the kernel writes IV' over that last IV
before authenc authenticates A || IV' || C; here the caller passes A alone, and authenc
authenticates A || IV' || C, the same bytes and the same tag. The salt hashes both key
parts, enckey first (the kernel's testmgr vectors pin this).

Sizes are the inner algorithm's; its IV must be one cipher block. The block cipher is the
one under the inner skcipher (or under the skcipher authenc wraps) where that is a template
instance (``cbc(aes-generic)`` -> ``aes-generic``), else the best of the name in its
argument (the kernel's ``essiv_get_cipher_name``), an inner algorithm too.
"""

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.errors import InvalidArgument
from cryptoapi.names import parse
from cryptoapi.templates._modes import require
from cryptoapi.templates.authenc import extract_keys
from cryptoapi.transforms.aead import AeadCore
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


class EssivAead:
    """ESSIV over an authenc AEAD core: the AEAD runs under IV' = E_s(IV)."""

    __slots__ = ("_aead", "_hash", "_iv_cipher", "_mode", "_name")

    def __init__(
        self, aead: AeadCore, mode: Algorithm, hash: ShashCore, iv_cipher: CipherCore, name: str
    ) -> None:
        self._aead = aead
        self._mode = mode  # the skcipher authenc wraps: the key sizes its enckey may have
        self._hash = hash
        self._iv_cipher = iv_cipher
        self._name = name

    def setkey(self, key: bytes, /) -> None:
        """K keys the AEAD (which checks it first); s = H(enckey || authkey) the IV's cipher."""
        self._aead.setkey(key)
        authkey, enckey = extract_keys(key, self._mode, self._name)
        self._iv_cipher.setkey(self._hash.digest(enckey + authkey))

    def setauthsize(self, authsize: int, /) -> None:
        self._aead.setauthsize(authsize)

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        return self._aead.encrypt(self._iv_cipher.encrypt_block(iv), plaintext, assoc)

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        return self._aead.decrypt(self._iv_cipher.encrypt_block(iv), data, assoc)


def _iv_cipher(lookup: InnerLookup, skcipher: Algorithm) -> Algorithm:
    """The block cipher under ``skcipher``: its own inner one, else the best of the name
    its name wraps (``cbc(aes)`` -> ``aes``)."""
    for inner in skcipher.inner:
        if inner.type is AlgType.CIPHER:
            return inner
    name = parse(skcipher.name)
    require(len(name.args) == 1, "essiv", skcipher, "a mode of one block cipher")
    return lookup(str(name.args[0]), AlgType.CIPHER)


def _authenc_mode(lookup: InnerLookup, aead: Algorithm) -> Algorithm:
    """The skcipher an ``authenc(A,E)`` wraps: its inner E, else the best of E's name."""
    for inner in aead.inner:
        if inner.type is AlgType.SKCIPHER:
            return inner
    return lookup(str(parse(aead.name).args[-1]), AlgType.SKCIPHER)


def _check(inner: Algorithm, hash: Algorithm, cipher: Algorithm) -> None:
    """The kernel's ``essiv_supported_algorithms``: an IV of one block of E, and H's digest
    a key of E."""
    require(not hash.keyed, "essiv", hash, "an unkeyed hash")
    require(inner.ivsize == cipher.blocksize, "essiv", inner, "an IV of one cipher block")
    fits = cipher.min_keysize <= hash.digestsize <= cipher.max_keysize
    require(fits, "essiv", hash, f"a digest that is a key of {cipher.name}")


def _skcipher_form(skcipher: Algorithm, hash: Algorithm, cipher: Algorithm) -> Algorithm:
    return instance(
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


def _aead_form(aead: Algorithm, mode: Algorithm, hash: Algorithm, cipher: Algorithm) -> Algorithm:
    name = f"essiv({aead.name},{hash.name})"
    return instance(
        "essiv",
        (aead, hash),
        type=AlgType.AEAD,
        create=lambda: EssivAead(aead.create(), mode, hash.create(), cipher.create(), name),
        blocksize=aead.blocksize,
        ivsize=aead.ivsize,
        min_keysize=aead.min_keysize,
        max_keysize=aead.max_keysize,
        maxauthsize=aead.maxauthsize,
        authsizes=aead.authsizes,
    )


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``essiv(S,H)`` from the best (or the named) skcipher S, or authenc AEAD S
    (``authenc(...)``: the kernel's essiv takes no other AEAD), and unkeyed hash H."""
    if len(args) != 2:
        raise InvalidArgument(f"essiv takes an skcipher or authenc and a hash, got {len(args)}")
    hash = lookup(args[1], AlgType.SHASH)
    if parse(args[0]).word == "authenc":
        inner = lookup(args[0], AlgType.AEAD)
        mode = _authenc_mode(lookup, inner)
        cipher = _iv_cipher(lookup, mode)
        _check(inner, hash, cipher)
        record = _aead_form(inner, mode, hash, cipher)
    else:
        inner = lookup(args[0], AlgType.SKCIPHER)
        cipher = _iv_cipher(lookup, inner)
        _check(inner, hash, cipher)
        record = _skcipher_form(inner, hash, cipher)
    # Named after S and H, as the kernel's; the IV's cipher is an inner algorithm too.
    return record.replace(inner=(inner, hash, cipher))


TEMPLATE = Template("essiv", create)
