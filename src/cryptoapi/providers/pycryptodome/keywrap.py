"""pycryptodome's AES Key Wrap (RFC 3394 §2.2 = SP 800-38F §6.2, ``AES.MODE_KW``, new in
pycryptodome 3.23; priority 200): ``kw(aes)`` as the ``kw`` template defines it
(:mod:`cryptoapi.templates.kw`): ``encrypt(iv, P)`` returns C_0 || C_1 ... C_n, and
``decrypt`` checks that C_0 unwraps to ``iv``.

``MODE_KW`` wraps with the default check value A6A6A6A6A6A6A6A6 only, so another ``iv``
(RFC 3394 §2.2.3.2's alternatives) raises :class:`NeedFallback` and the transform asks the
next implementation that serves it (the generic template). A release without ``MODE_KW``
has no key wrap: the provider then offers nothing.
"""

from Crypto.Cipher import AES

from cryptoapi.alg import PRIORITY_PURE, Buffer
from cryptoapi.errors import BadMessage
from cryptoapi.providers.pycryptodome.ciphers import check_aes_key
from cryptoapi.providers.records import record
from cryptoapi.templates.kw import DEFAULT_IV, check_lengths
from cryptoapi.transforms.base import NeedFallback

if not hasattr(AES, "MODE_KW"):  # the registry takes a ModuleNotFoundError for "absent"
    raise ModuleNotFoundError("pycryptodome has no AES.MODE_KW before 3.23", name="Crypto")


class KwAes:
    """``kw(aes)`` with the default check value; other IVs are left to the next one."""

    def setkey(self, key: bytes, /) -> None:
        check_aes_key(key, "kw(aes)")
        self._key = key

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        _default_only(iv)
        check_lengths("kw(aes)", data, wrapped=False)
        return AES.new(self._key, AES.MODE_KW).seal(bytes(data))

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        _default_only(iv)
        check_lengths("kw(aes)", data, wrapped=True)
        try:
            return AES.new(self._key, AES.MODE_KW).unseal(bytes(data))
        except ValueError:  # "Incorrect integrity check value"
            raise BadMessage(
                "kw(aes): the wrapped key data does not unwrap to its check value"
            ) from None


def _default_only(iv: bytes) -> None:
    if iv != DEFAULT_IV:
        raise NeedFallback(
            "pycryptodome's kw(aes) takes the default check value A6A6A6A6A6A6A6A6 only"
        )


ALGORITHMS = (
    record(
        "kw(aes)", "kw-aes-pycryptodome", KwAes, provider="pycryptodome", priority=PRIORITY_PURE
    ),
)
