"""The ``hkdf`` template: HKDF, RFC 5869, over an HMAC (``hkdf(hmac(sha256))``).

    §2.2 extract:  PRK := HMAC-Hash(salt, IKM)        (no salt: HashLen zero bytes)
    §2.3 expand:   N := ⌈L/HashLen⌉;  L <= 255·HashLen
                   T(0) := empty;  T(i) := HMAC-Hash(PRK, T(i-1) | info | i)   (i: one octet)
                   OKM := the first L octets of T(1) | ... | T(N)

``setkey(ikm, salt=b"")`` extracts, keying the HMAC with PRK once; ``derive(info, length)``
expands. HKDF takes no mode options.
"""

from typing import Any

from cryptoapi.alg import Algorithm, InnerLookup, Template
from cryptoapi.errors import InvalidArgument
from cryptoapi.names import parse
from cryptoapi.templates._kdf108 import PrfKdf, kdf_instance, reject_unknown

MAX_BLOCKS = 255


class Hkdf(PrfKdf):
    """The core of ``hkdf(hmac(H))``: the HMAC keyed with PRK after ``setkey``."""

    __slots__ = ()

    def setkey(self, ikm: bytes, /, **options: Any) -> None:
        """Extract (§2.2): PRK = HMAC(salt or HashLen zeros, IKM); then key HMAC with PRK."""
        salt = options.pop("salt", b"")
        reject_unknown(self._name, options, ("salt",))
        self._prf.setkey(salt or bytes(self._h))
        self._prf.setkey(self._prf.digest(ikm))

    def derive(self, info: bytes, length: int, /, **options: Any) -> bytes:
        """Expand (§2.3) PRK and ``info`` into ``length`` octets."""
        if options:
            reject_unknown(self._name, options)
        digest = self._prf.digest
        if length <= self._h:
            return digest(info + b"\x01")[:length]
        if length > MAX_BLOCKS * self._h:
            raise InvalidArgument(
                f"{self._name}: length {length} exceeds 255·HashLen = {MAX_BLOCKS * self._h}"
            )
        block = b""
        blocks = []
        for i in range(1, -(-length // self._h) + 1):
            block = digest(block + info + bytes((i,)))
            blocks.append(block)
        return b"".join(blocks)[:length]


def _needs_hmac(prf: Algorithm) -> str | None:
    if parse(prf.name).word != "hmac":
        return "RFC 5869 defines HKDF over HMAC only"
    return None


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``hkdf(hmac(H))`` from the best (or the named) HMAC."""
    return kdf_instance("hkdf", lookup, args, Hkdf, needs=_needs_hmac)


TEMPLATE = Template("hkdf", create)
