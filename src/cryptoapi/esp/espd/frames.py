"""Outer IP (and UDP) headers rebuilt around an ESP payload, for the packet capture only.

A socket builds the outer header of what espd sends, and takes it off what it receives
(UDP always, raw IPv6 too), so the capture (:mod:`.pcap`) would otherwise hold bare ESP.
:func:`outer_packet` puts back a header with the addresses and ports the socket reported:
IPv4 (RFC 791: no options, identification 0, DF clear, TTL 64) or IPv6 (RFC 8200: traffic
class and flow label 0, hop limit 64), then UDP (RFC 768, RFC 3948 §2.1) or protocol 50
(RFC 4303). Checksums are computed (RFC 1071), so Wireshark shows them as good. The header
is a faithful reconstruction of what was sent, not a copy of the wire bytes: TTL, DSCP and
the IPv4 identification may differ from what the kernel put on the link. The headers are
the data path's own (:mod:`cryptoapi.esp.ip`).
"""

from cryptoapi.esp import ip

TTL = 64


def outer_packet(src: bytes, dst: bytes, sport: int, dport: int, payload: bytes) -> bytes:
    """The IP packet carrying ``payload`` from ``src`` to ``dst`` (packed, 4 or 16 bytes):
    UDP from ``sport`` to ``dport`` when they are set, else protocol 50 (raw ESP)."""
    family = ip.AF_INET if len(src) == 4 else ip.AF_INET6
    if sport > 0 and dport > 0:
        head = ip.udp_header(
            family, src, dst, sport=sport, dport=dport, payload=payload, ipv4_checksum=True
        )
        proto, body = ip.IPPROTO_UDP, head + payload
    else:
        proto, body = ip.IPPROTO_ESP, payload
    if family == ip.AF_INET:
        header = ip.ipv4_header(src, dst, proto, len(body), tos=0, ttl=TTL, df=False, ident=0)
    else:
        header = ip.ipv6_header(src, dst, proto, len(body), tclass=0, hops=TTL)
    return header + body
