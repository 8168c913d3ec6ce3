"""OpenSSL's AES Key Wrap (RFC 3394) through ``cryptography``'s ``aes_key_wrap`` (priority
300): ``kw(aes)`` as the ``kw`` template defines it (:mod:`cryptoapi.templates.kw`):
``encrypt(iv, P)`` returns C_0 || C_1 ... C_n, ``decrypt`` checks C_0 against ``iv``.

cryptography wraps with the default check value A6A6A6A6A6A6A6A6 only (RFC 3394 §2.2.3.1);
any other IV raises :class:`NeedFallback`, so the transform hands that call to the next
implementation. Its ``InvalidUnwrap`` becomes :class:`BadMessage`, its ``ValueError`` (key
data shorter than two semiblocks) :class:`InvalidArgument`.
"""

from cryptography.hazmat.primitives import keywrap

from cryptoapi.alg import PRIORITY_OPENSSL, Buffer
from cryptoapi.errors import BadMessage, InvalidArgument, InvalidKey
from cryptoapi.providers.records import record
from cryptoapi.templates.kw import DEFAULT_IV, check_lengths
from cryptoapi.transforms.base import NeedFallback

AES_KEY_SIZES = (16, 24, 32)
SEMIBLOCK = 8


def _default_iv_only(iv: bytes) -> None:
    if iv != DEFAULT_IV:
        raise NeedFallback("kw(aes): OpenSSL wraps with the default IV A6A6A6A6A6A6A6A6 only")


class KwAes:
    """``kw(aes)`` (RFC 3394 §2.2) on OpenSSL."""

    def setkey(self, key: bytes, /) -> None:
        if len(key) not in AES_KEY_SIZES:
            raise InvalidKey(f"kw(aes) takes a 16-, 24- or 32-byte key, not {len(key)} bytes")
        self._key = key

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        _default_iv_only(iv)
        try:
            return keywrap.aes_key_wrap(self._key, bytes(data))
        except ValueError as error:  # too short: fewer than two semiblocks
            raise InvalidArgument(f"kw(aes): {error}") from None

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        _default_iv_only(iv)
        check_lengths("kw(aes)", data, wrapped=True)  # cryptography: "a failed unwrap"
        try:
            return keywrap.aes_key_unwrap(self._key, bytes(data))
        except keywrap.InvalidUnwrap:
            raise BadMessage(
                "kw(aes): the wrapped key data does not unwrap to its check value"
            ) from None


ALGORITHMS = (
    record("kw(aes)", "kw-aes-openssl", KwAes, provider="openssl", priority=PRIORITY_OPENSSL),
)
