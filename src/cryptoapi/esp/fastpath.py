"""The per-SA fast path of the ESP data path: what every packet of a tunnel-mode SA with a
counter or a random IV repeats, done once when the SA's state is made, and the per-packet
work in two flat functions (RFC 4303 §3.3 and §3.4, RFC 4301 §5.1.2, RFC 3948 §2).

Per SA (:class:`FastSa`, as Linux keeps ``x->type``, ``x->props`` and ``x->outer_mode`` on
the state): the AEAD's own native call and its nonce prefix (the salt, RFC 4106 §4,
RFC 7634 §2) when the transform offers one (:meth:`~cryptoapi.transforms.aead.EspAead.
esp_native`), else the transform's checked ``encrypt``/``decrypt``; the AAD as an integer
(SPI shifted past the sequence number, RFC 4303 §2.2.1 and RFC 4106 §5); the padding
trailers by payload length modulo the alignment (§2.4), for an inner IPv4 and IPv6
packet; and the outer IPv4 header's constant part of the checksum (RFC 1624's
incremental form) with the ESP-in-UDP ports (RFC 3948 §2.1). One ``struct`` call then
writes the outer IPv4 header, the UDP header, SPI, sequence number and IV of a packet. The
IV is the sequence number xored with the salt for the counter modes, as the readable path
makes it, or the SA's random one (``EspCrypto.iv``, CBC: RFC 3602 §3), whose
encrypt-then-MAC ``seal`` and ``open`` are the transform's checked calls.

The readable path (:mod:`~cryptoapi.esp.encap`, :mod:`~cryptoapi.esp.tunnel`) stays the
reference: these functions make the same bytes and refuse the same packets, under the same
counter names (``tests/esp/test_fastpath.py`` runs both on every transform). Anything else
(transport mode, NULL encryption's empty IV) has no :class:`FastSa` and takes the readable
path, and so does ``Datapath.output`` for an IPv6 outer header (``output_esp`` and input
take any). The data path
keeps the sequence numbers, floors, lifetimes and SPD checks; these functions do one
packet's framing and cryptography and nothing else.
"""

import struct
from collections.abc import Callable, Sequence

from cryptoapi.errors import CryptoError
from cryptoapi.esp.crypto import BAD_PADDING, ESP_HEADER, PAD, EspCrypto
from cryptoapi.esp.ip import (
    AF_INET,
    DF,
    ECN_MASK,
    IPPROTO_ESP,
    IPPROTO_IPIP,
    IPPROTO_IPV6,
    IPPROTO_UDP,
    IPV4_HEADER,
    UDP_HEADER,
    Flow,
)
from cryptoapi.esp.replay import ReplayWindow
from cryptoapi.transforms.aead import EspRuns

COUNTER_IV = 8
"""The IV of every counter mode ESP uses (RFC 3686 §3.1, 4106 §3.1, 4309 §3.1, 4543 §3.1,
7634 §2)."""
_RAW = ">BBHHHBBH8s4sI{}s"  # outer IPv4 header, then SPI, sequence, IV (of its length)
_UDP = ">BBHHHBBH8sHHHH4sI{}s"  # ... with the UDP header between (RFC 3948)
_ESP = ">4sI{}s"  # SPI, sequence number (low 32 bits), IV
_TEMPLATE_RAW = struct.Struct(">BBHHHBBH8s")  # an outer IPv4 header, length and sum 0
_TEMPLATE_UDP = struct.Struct(">BBHHHBBH8sHHHH")  # ... and the UDP header, length 0

Call = Callable[[bytes, bytes, bytes], bytes]


class FastSa:
    """What every packet of one SA repeats (see the module doc); read-only once made."""

    __slots__ = (
        "aad_len", "aad_spi", "addresses", "align", "df", "dport", "esp", "forged", "head",
        "icvlen", "ipv4", "open", "outbound", "prefix", "proto", "random_iv", "raw", "runs",
        "seal", "spi", "sport", "tos_mask", "trailers", "udp", "words",
    )  # fmt: skip

    def __init__(
        self,
        crypto: EspCrypto,
        *,
        spi: bytes,
        esn: bool,
        family: int,
        src: bytes,
        dst: bytes,
        ports: tuple[int, int],
        address_sum: int,
        df_clear: bool,
        noecn: bool,
    ) -> None:
        native = crypto.native
        self.seal: Call = crypto.seal if native is None else native.seal
        self.open: Call = crypto.open if native is None else native.open
        self.forged: type[Exception] = CryptoError if native is None else native.forged
        self.prefix = b"" if native is None else native.prefix
        self.runs = crypto.runs
        """The SA's calls for whole runs of packets (:func:`seal_run`), if it has them."""
        if self.runs is not None:
            self.runs.bind(spi, esn, crypto.align)
        self.spi = spi
        self.aad_spi = int.from_bytes(spi, "big") << (64 if esn else 32)
        self.aad_len = 12 if esn else 8  # SPI || (high ||) low bits (RFC 4303 §2.2.1)
        self.icvlen = crypto.icvlen
        self.align = align = crypto.align
        self.head = ESP_HEADER + crypto.ivlen
        self.random_iv = None if crypto.counter_iv else crypto.iv
        """None: the IV is the sequence number xored with the salt; else where IVs come from."""
        self.raw, self.udp, self.esp = (
            struct.Struct(layout.format(crypto.ivlen)) for layout in (_RAW, _UDP, _ESP)
        )
        self.trailers = (_trailers(align, IPPROTO_IPV6), _trailers(align, IPPROTO_IPIP))
        self.ipv4 = family == AF_INET
        self.addresses = src + dst
        self.sport, self.dport = ports
        self.proto = IPPROTO_UDP if self.dport else IPPROTO_ESP
        self.words = address_sum + 0x4500 + self.proto  # the checksum's constant words
        self.tos_mask = 0xFF & ~ECN_MASK if noecn else 0xFF  # RFC 6040 §4.1 or NOECN
        self.df = 0 if df_clear else DF  # RFC 4301 §8.1, unless NOPMTUDISC
        self.outbound = (family, src, dst, self.sport, self.dport)


def serves(crypto: EspCrypto, *, tunnel: bool) -> bool:
    """Whether an SA takes the fast path: tunnel mode with the 8-byte counter IV or a random
    one (transport mode and NULL encryption, which has no IV, take the readable path)."""
    return tunnel and (crypto.ivlen == COUNTER_IV if crypto.counter_iv else crypto.ivlen > 0)


def _trailers(align: int, next_header: int) -> tuple[bytes, ...]:
    """The padding and trailer (§2.4) by payload length modulo ``align``."""
    pads = [-(size + 2) % align for size in range(align)]
    return tuple(PAD[:pad] + bytes((pad, next_header)) for pad in pads)


def seal(fast: FastSa, seq: int, salt: int, packet: bytes, flow: Flow, *, ident: int) -> bytes:
    """The ESP packet carrying the inner ``packet`` (whose ``flow`` it is) as number
    ``seq``, the IV ``seq`` xored with ``salt`` (as :func:`cryptoapi.esp.encap.seal`); with
    ``ident`` >= 0 inside its outer IPv4 (and UDP) header as
    :func:`cryptoapi.esp.tunnel.outer_header` writes it (the caller checked ``fast.ipv4``).
    Flat on purpose: one frame per packet for framing, IV, AAD and headers."""
    size = len(packet)
    trailer = fast.trailers[flow.header == IPV4_HEADER][size % fast.align]
    iv = (seq ^ salt).to_bytes(8, "big") if fast.random_iv is None else fast.random_iv()
    sealed = fast.seal(
        fast.prefix + iv,
        packet + trailer,
        (fast.aad_spi | seq).to_bytes(fast.aad_len, "big"),
    )
    if ident < 0:
        return fast.esp.pack(fast.spi, seq & 0xFFFFFFFF, iv) + sealed
    tos = flow.tos & fast.tos_mask
    flags = fast.df if flow.df else 0
    ident &= 0xFFFF
    length = fast.head + len(sealed)  # of ESP
    total = IPV4_HEADER + (UDP_HEADER if fast.dport else 0) + length
    words = fast.words + tos + total + ident + flags + (flow.ttl << 8)
    words = (words & 0xFFFF) + (words >> 16)
    words = (words & 0xFFFF) + (words >> 16)
    if fast.dport:
        return fast.udp.pack(
            0x45, tos, total, ident, flags, flow.ttl, IPPROTO_UDP, 0xFFFF - words,
            fast.addresses, fast.sport, fast.dport, UDP_HEADER + length, 0,
            fast.spi, seq & 0xFFFFFFFF, iv,
        ) + sealed  # fmt: skip
    return fast.raw.pack(
        0x45, tos, total, ident, flags, flow.ttl, IPPROTO_ESP, 0xFFFF - words,
        fast.addresses, fast.spi, seq & 0xFFFFFFFF, iv,
    ) + sealed  # fmt: skip


def seal_run(
    fast: FastSa,
    runs: EspRuns,
    packets: Sequence[bytes],
    *,
    seq: int,
    salt: int,
    flow: Flow,
    ident: int,
) -> list[bytes]:
    """:func:`seal` for ``packets`` (all of ``flow``), numbered from ``seq``, in one call of
    the SA's ``runs`` (CBC's random IVs drawn here for the whole run); with ``ident`` >= 0
    (the first packet's), behind their outer headers. The run shares its outer header's
    every field but length, identification and checksum, so its template is made here
    once, with the first identification."""
    header = b""
    if ident >= 0:
        tos = flow.tos & fast.tos_mask
        flags = fast.df if flow.df else 0
        ident &= 0xFFFF
        if fast.dport:
            header = _TEMPLATE_UDP.pack(
                0x45, tos, 0, ident, flags, flow.ttl, IPPROTO_UDP, 0, fast.addresses,
                fast.sport, fast.dport, 0, 0,
            )  # fmt: skip
        else:
            header = _TEMPLATE_RAW.pack(
                0x45, tos, 0, ident, flags, flow.ttl, IPPROTO_ESP, 0, fast.addresses
            )
    ivs = b"" if fast.random_iv is None else fast.random_iv(len(packets))
    return runs.seal_run(packets, seq, salt, ivs, header)


RUN_CAUSES = ("", "XfrmInHdrError", "XfrmInStateProtoError", BAD_PADDING)
"""Why a key's ``open_run`` stopped, by its cause number (:class:`~cryptoapi.transforms.
aead.EspRuns`), named as :func:`open_esp` names it ("": at a packet that is not a drop)."""


def open_run(
    runs: EspRuns,
    replay: ReplayWindow,
    payloads: Sequence[bytes],
    start: int,
    *,
    packets: float,
    octets: float,
) -> tuple[list[bytes], bytes, str]:
    """(payloads, next headers, why it stopped) of the ESP packets from ``payloads[start]``
    on that carry the numbers after the window's top in turn, at most ``packets`` of them
    and below ``octets`` bytes, in one call of the SA's ``runs``: :func:`open_esp` for
    each, whose checks come in the same order, the window moved past them. The run stops
    before any other packet (why: "") or at one §3.4 rejects (why: as :func:`open_esp`)."""
    opened, next_headers, cause = runs.open_run(payloads, start, replay.top + 1, packets, octets)
    replay.accept_next(len(opened))
    return opened, next_headers, RUN_CAUSES[cause]


def open_next(
    fast: FastSa,
    replay: ReplayWindow,
    payloads: Sequence[bytes],
    start: int,
    *,
    packets: float,
    octets: float,
) -> tuple[Sequence[bytes], bytes, str]:
    """(payloads, next headers, why it stopped) from ``payloads[start]`` on, which is the
    SA's: the packets that follow the window's top by :func:`open_run` if the SA takes
    runs and one does, else that one packet by :func:`open_esp`, any number the window
    allows."""
    runs = fast.runs
    if runs is not None:
        opened = open_run(runs, replay, payloads, start, packets=packets, octets=octets)
        if opened[0] or opened[2]:
            return opened
    one = open_esp(fast, replay, payloads[start])
    if isinstance(one, str):
        return (), b"", one
    return (one[0],), bytes((one[1],)), ""


def open_esp(fast: FastSa, replay: ReplayWindow, esp: bytes) -> tuple[bytes, int] | str:
    """(payload, next header) of an inbound ESP packet, or why it is dropped, exactly as
    :func:`cryptoapi.esp.encap.open_esp` (§3.4 in its order: length, replay check, ICV,
    padding, and only then the window moves). The replay check is inline for the common
    case, a number above the highest seen (§3.4.3); the window checks the rest."""
    start = fast.head
    body = len(esp) - start - fast.icvlen
    if body < 2 or body % fast.align:
        return "XfrmInHdrError"
    seq = int.from_bytes(esp[4:ESP_HEADER], "big")
    if fast.aad_len != 8:  # ESN: the high bits inferred (Appendix A2)
        seq = replay.full_sequence(seq)
    if (seq <= replay.top or not seq) and not replay.check(seq):
        return "XfrmInStateSeqError"
    try:
        plain = fast.open(
            fast.prefix + esp[ESP_HEADER:start],
            esp[start:],
            (fast.aad_spi | seq).to_bytes(fast.aad_len, "big"),
        )
    except fast.forged:
        return "XfrmInStateProtoError"
    pad = plain[-2]
    if pad + 2 > len(plain) or plain[-2 - pad : -2] != PAD[:pad]:
        return BAD_PADDING
    replay.accept(seq)
    return plain[: -2 - pad], plain[-1]
