"""The ChaCha20-Poly1305 AEAD construction, RFC 8439 §2.8, written once for everything that
uses it: the ``rfc7539`` and ``rfc7539esp`` templates (over any chacha20 and poly1305
implementations) and the generic ``xchacha20poly1305`` (draft-irtf-cfrg-xchacha-03 §2.3,
which runs this construction under an HChaCha20 subkey).

Given a key and a 96-bit nonce (§2.8):

1. the Poly1305 one-time key is the first 32 bytes of ChaCha20 block 0 (§2.6);
2. the ciphertext is the plaintext XOR the keystream from block counter 1 (§2.4);
3. the tag is Poly1305 over  AAD || pad16(AAD) || C || pad16(C) || le64(len AAD) || le64(len C).

The caller binds key and nonce into ``keystream_xor(counter, data)`` and supplies
``new_mac(one_time_key)``, a running Poly1305; this module only arranges the pieces.
Decryption verifies the tag (in constant time) before it decrypts anything.

It sits here, beside the transforms' core protocols it is written against, so that the
templates and the generic provider both import it from below (as :mod:`.dh_secret` is
shared); it was ``cryptoapi.providers.generic._chachapoly``, which made the templates
import a provider.
"""

import hmac
import struct
from collections.abc import Callable

from cryptoapi.alg import Buffer
from cryptoapi.transforms.aead import forged
from cryptoapi.transforms.cores import HashState

TAG_SIZE = 16
ONE_TIME_KEY_SIZE = 32

KeystreamXor = Callable[[int, Buffer], bytes]
"""``(first block counter, data) -> data XOR ChaCha20 keystream``, key and nonce bound."""

NewMac = Callable[[bytes], HashState]
"""``one-time key -> running Poly1305``."""

_ZEROS = bytes(15)


def _tag(keystream_xor: KeystreamXor, new_mac: NewMac, ciphertext: Buffer, assoc: Buffer) -> bytes:
    """§2.8 steps 1 and 3: the Poly1305 key from block 0, then the MAC over the padded data."""
    assoc = bytes(assoc)  # lengths in bytes whatever the buffer's item format
    mac = new_mac(keystream_xor(0, bytes(ONE_TIME_KEY_SIZE)))
    mac.update(assoc)
    mac.update(_ZEROS[: -len(assoc) % 16])
    mac.update(ciphertext)
    mac.update(_ZEROS[: -len(ciphertext) % 16])
    mac.update(struct.pack("<QQ", len(assoc), len(ciphertext)))
    return mac.digest()


def chachapoly_encrypt(
    keystream_xor: KeystreamXor, new_mac: NewMac, plaintext: Buffer, assoc: Buffer
) -> bytes:
    """AEAD_CHACHA20_POLY1305 encryption (§2.8): ciphertext || 16-byte tag."""
    ciphertext = keystream_xor(1, plaintext)
    return ciphertext + _tag(keystream_xor, new_mac, ciphertext, assoc)


def chachapoly_decrypt(
    keystream_xor: KeystreamXor, new_mac: NewMac, data: Buffer, assoc: Buffer, name: str
) -> bytes:
    """AEAD_CHACHA20_POLY1305 decryption (§2.8): the plaintext of ciphertext || tag, or
    BadMessage (naming algorithm ``name``) and nothing decrypted if the tag is wrong."""
    data = bytes(data)
    ciphertext, tag = data[:-TAG_SIZE], data[-TAG_SIZE:]
    if len(tag) != TAG_SIZE or not hmac.compare_digest(
        _tag(keystream_xor, new_mac, ciphertext, assoc), tag
    ):
        raise forged(name)
    return keystream_xor(1, ciphertext)
