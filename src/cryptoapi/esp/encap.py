"""The ESP packet itself (RFC 4303 §2): build it from a payload, take a payload out of it.

    SPI (4) || sequence number, low 32 bits (4) || IV || ciphertext || ICV

    plaintext = payload || padding 1, 2, 3 ... || pad length (1) || next header (1)

Padding brings the plaintext to a multiple of the cipher's block size and at least 4 bytes
(§2.4); TFC padding (§2.7) is not added. With extended sequence numbers (§2.2.1) the high
32 bits are not sent: the transform authenticates them (see :mod:`cryptoapi.esp.crypto`)
and the receiver infers them (Appendix A2, :mod:`cryptoapi.esp.replay`).

Inbound processing follows §3.4 in its order: SA, length, replay check (§3.4.3), ICV and
decryption (§3.4.4), padding, and only then the replay window moves. A failure returns the
Linux counter it is counted under (or ``BAD_PADDING``, which Linux counts as
``XfrmInStateProtoError`` but which, after a good ICV, says something else: the peer's ESP
is broken, not its keys), never an exception and never any plaintext.
"""

import struct

from cryptoapi.errors import CryptoError
from cryptoapi.esp.crypto import BAD_PADDING, ESP_HEADER, PAD
from cryptoapi.esp.state import EspState

__all__ = ["BAD_PADDING", "ESP_HEADER", "PAD", "open_esp", "seal"]
_HEADER = struct.Struct(">4sI").pack  # SPI, low 32 bits of the sequence number
_ESN_AAD = struct.Struct(">4sII").pack  # SPI, high and low bits: the AAD with ESN
_TRAILERS: dict[int, bytes] = {}
"""The padding and trailer by pad length << 8 | next header, made on first use."""


def _trailer(key: int) -> bytes:
    pad = key >> 8
    return _TRAILERS.setdefault(key, PAD[:pad] + bytes((pad, key & 0xFF)))


def seal(state: EspState, seq: int, payload: bytes, next_header: int) -> bytes:
    """The ESP packet carrying ``payload`` as number ``seq``, which the caller took for it
    (atomically, under the state's lock, within the room the floor left).
    A counter-mode IV is the sequence number xored with the state's random salt (see
    :func:`~cryptoapi.esp.state.iv_salt` and :mod:`~cryptoapi.esp.seqfloor`)."""
    crypto = state.crypto
    low = seq & 0xFFFFFFFF
    header = _HEADER(state.spi, low)
    iv = (seq ^ state.iv_salt).to_bytes(8, "big") if crypto.counter_iv else crypto.iv()
    key = (-(len(payload) + 2) % crypto.align) << 8 | next_header
    trailer = _TRAILERS.get(key) or _trailer(key)
    assoc = _ESN_AAD(state.spi, seq >> 32, low) if state.esn else header
    return header + iv + crypto.seal(iv, payload + trailer, assoc)


def open_esp(state: EspState, esp: bytes) -> tuple[bytes, int] | str:
    """(payload, next header) of an inbound ESP packet, or why it is dropped (a counter's
    name, or ``BAD_PADDING``)."""
    crypto = state.crypto
    start = ESP_HEADER + crypto.ivlen
    body = len(esp) - start - crypto.icvlen
    if body < 2 or body % crypto.align:
        return "XfrmInHdrError"  # §2.4: the padded plaintext is whole blocks, 4-aligned
    replay = state.replay
    header = esp[:ESP_HEADER]
    if state.esn:
        seq = replay.full_sequence(int.from_bytes(esp[4:8], "big"))
        assoc = _ESN_AAD(state.spi, seq >> 32, seq & 0xFFFFFFFF)
    else:
        seq = int.from_bytes(esp[4:8], "big")
        assoc = header
    if not replay.check(seq):
        return "XfrmInStateSeqError"
    try:
        plain = crypto.open(esp[ESP_HEADER:start], esp[start:], assoc)
    except CryptoError:
        return "XfrmInStateProtoError"
    pad = plain[-2]
    if pad + 2 > len(plain) or plain[-2 - pad : -2] != PAD[:pad]:
        return BAD_PADDING  # §2.4: the receiver checks the padding
    replay.accept(seq)
    return plain[: -2 - pad], plain[-1]
