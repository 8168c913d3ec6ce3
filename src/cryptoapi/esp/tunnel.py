"""Tunnel mode's outer header (RFC 4301 §5.1.2) and what crosses it, both ways.

Encapsulation: the outer header's DSCP and TTL (hop limit) are the inner packet's; its ECN
field is copied from the inner one (RFC 6040 §4.1, normal mode), or left Not-ECT when the
SA has ``NOECN``; DF (RFC 4301 §8.1) is copied from an inner IPv4 packet and set for an
inner IPv6 one (which never fragments in transit), and cleared when the SA has
``NOPMTUDISC`` (as Linux's ``xfrm4_mode_tunnel`` does).

Decapsulation (RFC 6040 §4.2, Figure 4): an outer CE marks an ECN-capable inner packet CE
and drops a Not-ECT one; an outer ECT(1) turns an inner ECT(0) into ECT(1); otherwise the
inner field stands. The inner DSCP is never changed (Linux copies it only with
``DECAP_DSCP``).
"""

from cryptoapi.esp.ip import (
    AF_INET,
    ECN_CE,
    ECN_MASK,
    ECN_NOT_ECT,
    IPPROTO_IPIP,
    IPPROTO_IPV6,
    Flow,
    ipv4_header_summed,
    ipv6_header,
)
from cryptoapi.esp.state import EspState

ECT_0 = 0b10
ECT_1 = 0b01


def inner_protocol(flow: Flow) -> int:
    """The next header that says what a tunnel carries (IPv4 4, IPv6 41)."""
    return IPPROTO_IPIP if flow.family == AF_INET else IPPROTO_IPV6


def outer_header(state: EspState, proto: int, length: int, inner: Flow, ident: int) -> bytes:
    """The outer IP header of ``state``'s SA for ``length`` bytes of payload around
    ``inner``."""
    tos = inner.tos & ~ECN_MASK if state.noecn else inner.tos
    if state.family == AF_INET:
        df = not state.df_clear and inner.df
        return ipv4_header_summed(
            state.address_sum, state.src, state.dst, proto, length,
            tos=tos, ttl=inner.ttl, df=df, ident=ident,
        )  # fmt: skip
    return ipv6_header(state.src, state.dst, proto, length, tclass=tos, hops=inner.ttl)


def decapsulated_ecn(outer: int, inner: int) -> int | None:
    """The inner packet's ECN field after decapsulation, or None: drop it (RFC 6040 §4.2)."""
    if outer == ECN_CE:
        return None if inner == ECN_NOT_ECT else ECN_CE
    if outer == ECT_1 and inner == ECT_0:
        return ECT_1
    return inner
