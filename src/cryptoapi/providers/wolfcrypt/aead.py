"""wolfCrypt's AES-GCM (SP 800-38D) through ``wolfcrypt.ciphers.AesGcmStream``, priority 200.

wolfSSL's GCM takes IVs of 1 to ``GCM_NONCE_MAX_SZ`` (16) bytes; SP 800-38D allows any
non-empty IV, so longer ones raise :class:`NeedFallback` and the transform serves them from
the next implementation. Every tag size of the name (4 to 16 bytes) is wolfSSL's. A forged
message raises :class:`BadMessage` and releases no plaintext: the stream's plaintext is
returned only after its final tag check.
"""

from wolfcrypt.ciphers import AesGcmStream
from wolfcrypt.exceptions import WolfCryptError

from cryptoapi.alg import PRIORITY_PURE, Buffer
from cryptoapi.providers.records import record
from cryptoapi.providers.wolfcrypt.ciphers import check_aes_key
from cryptoapi.transforms.aead import forged
from cryptoapi.transforms.base import NeedFallback

GCM_NONCE_MAX = 16  # wolfSSL's GCM_NONCE_MAX_SZ: a longer IV is BAD_FUNC_ARG


class AesGcm:
    """``gcm(aes)``: a fresh stream per message, the associated data set first."""

    def __init__(self) -> None:
        self._authsize = 16

    def setkey(self, key: bytes, /) -> None:
        check_aes_key(key, "gcm(aes)")
        self._key = key

    def setauthsize(self, authsize: int, /) -> None:
        self._authsize = authsize

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        stream = self._stream(iv, assoc)
        body: bytes = stream.encrypt(bytes(plaintext))
        tag: bytes = stream.final()
        return body + tag

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        data = bytes(data)
        body, tag = data[: -self._authsize], data[-self._authsize :]
        stream = self._stream(iv, assoc)
        plaintext: bytes = stream.decrypt(body)
        try:
            stream.final(tag)
        except WolfCryptError:
            raise forged("gcm(aes)") from None
        return plaintext

    def _stream(self, iv: bytes, assoc: Buffer) -> AesGcmStream:
        if len(iv) > GCM_NONCE_MAX:
            raise NeedFallback
        stream = AesGcmStream(self._key, iv, self._authsize)
        stream.set_aad(bytes(assoc))
        return stream


ALGORITHMS = (
    record("gcm(aes)", "gcm-aes-wolfcrypt", AesGcm, provider="wolfcrypt", priority=PRIORITY_PURE),
)
