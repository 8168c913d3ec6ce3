"""The ``hmac`` template: HMAC over any unkeyed hash (RFC 2104, FIPS 198-1).

    HMAC(K, m) = H((K0 ^ opad) || H((K0 ^ ipad) || m))

where K0 is the key hashed if longer than the block size, then zero-padded to it (§2).
setkey hashes the two padded keys once and keeps both states; each message then costs two
state copies, which is what makes HMAC on hashlib states faster than stdlib ``hmac``.
"""

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.errors import InvalidArgument
from cryptoapi.transforms.cores import HashState, ShashCore

IPAD = 0x36
OPAD = 0x5C
# K0 ^ ipad and K0 ^ opad byte by byte, done by bytes.translate in C.
_XOR_IPAD = bytes(b ^ IPAD for b in range(256))
_XOR_OPAD = bytes(b ^ OPAD for b in range(256))


class HmacState:
    """A running HMAC: the inner hash over the message, finished by the outer one."""

    __slots__ = ("_inner", "_outer")

    def __init__(self, inner: HashState, outer: HashState) -> None:
        self._inner = inner
        self._outer = outer

    def update(self, data: Buffer, /) -> None:
        self._inner.update(data)

    def digest(self) -> bytes:
        outer = self._outer.copy()
        outer.update(self._inner.digest())
        return outer.digest()

    def copy(self) -> "HmacState":
        return HmacState(self._inner.copy(), self._outer)


class Hmac:
    """The HMAC core over an inner hash core; keyed by :meth:`setkey` (the transform never
    lets ``init`` or ``digest`` run before it)."""

    _ipad: HashState  # the inner hash after (K0 ^ ipad), set by setkey
    _opad: HashState  # the outer hash after (K0 ^ opad)

    def __init__(self, hash_core: ShashCore, blocksize: int) -> None:
        self._hash = hash_core
        self._blocksize = blocksize

    def setkey(self, key: bytes, /) -> None:
        if len(key) > self._blocksize:
            key = self._hash.digest(key)
        padded = key.ljust(self._blocksize, b"\0")
        ipad = self._hash.init()
        ipad.update(padded.translate(_XOR_IPAD))
        opad = self._hash.init()
        opad.update(padded.translate(_XOR_OPAD))
        self._ipad, self._opad = ipad, opad

    def init(self) -> HmacState:
        return HmacState(self._ipad.copy(), self._opad)

    def digest(self, data: Buffer, /) -> bytes:
        inner = self._ipad.copy()
        inner.update(data)
        outer = self._opad.copy()
        outer.update(inner.digest())
        return outer.digest()


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``hmac(H)`` from the best (or the named) unkeyed hash H."""
    if len(args) != 1:
        raise InvalidArgument(f"hmac takes one hash, got {len(args)}")
    inner = lookup(args[0], AlgType.SHASH)
    if inner.keyed:
        raise InvalidArgument(f"hmac needs an unkeyed hash; {inner.driver} is keyed")
    return instance(
        "hmac",
        (inner,),
        type=AlgType.SHASH,
        create=lambda: Hmac(inner.create(), inner.blocksize),
        digestsize=inner.digestsize,
        blocksize=inner.blocksize,
        keyed=True,
    )


TEMPLATE = Template("hmac", create)
