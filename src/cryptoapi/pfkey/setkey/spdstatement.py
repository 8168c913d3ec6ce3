"""``spdadd``, ``spdupdate`` and ``spddelete``: a selector and a policy to one message.

    spdadd [-46n] src_range dst_range upperspec [misc] [-ctx doi alg "name"] -P policy ;

``src_range`` and ``dst_range`` are ``address[/prefixlen][[port]]`` (the full prefix and
any port by default); ``upperspec`` is ``any``, a protocol number or name; for ICMP, ICMPv6
and MH a ``type[,code]`` and for GRE a key (``a.b.c.d`` or a number) may follow, and go in
the selector's ports as setkey puts them. The message is ``<base, policy, address(SD),
(sec_ctx)>`` as setkey sends it, both addresses carrying the upper-layer protocol.
"""

from cryptoapi.pfkey.setkey import names
from cryptoapi.pfkey.setkey.options import read_ctx
from cryptoapi.pfkey.setkey.policyspec import parse_policy
from cryptoapi.pfkey.setkey.reader import Reader
from cryptoapi.pfkey.setkey.tokens import Kind, SetkeyError, Token, quote
from cryptoapi.pfkey.wire.constants import ExtType, MsgType
from cryptoapi.pfkey.wire.extensions import Address
from cryptoapi.pfkey.wire.framing import Extension
from cryptoapi.pfkey.wire.message import Message
from cryptoapi.pfkey.wire.sockaddr import SockAddr


def spd_statement(reader: Reader, type_: int) -> Message:
    """The SPDADD, SPDUPDATE or SPDDELETE message of one statement."""
    family = reader.family_flags()
    src, src_prefix, _ = reader.selector(family)
    dst, dst_prefix, dst_at = reader.selector(family)
    if src.family != dst.family:
        raise SetkeyError(dst_at, "source and destination are of different families")
    upper = reader.word("an upper-layer protocol (any, tcp, udp, icmp6, a number ...)")
    proto = names.upper_protocol(upper.text)
    if proto is None:
        raise SetkeyError(upper.where, f"{quote(upper.text)} is not an upper-layer protocol")
    following = reader.peek()
    takes_misc = proto in names.ICMP_LIKE or proto == names.GRE
    if takes_misc and following.kind is Kind.WORD and not following.text.startswith("-"):
        sport, dport = _misc(reader.take(), proto)
        src = SockAddr(src.family, src.addr, sport)
        dst = SockAddr(dst.family, dst.addr, dport)
    exts: list[Extension] = []
    if reader.peek().kind is Kind.WORD and reader.peek().text == "-ctx":
        reader.take()
        exts.append(read_ctx(reader))
    flag = reader.peek()
    if flag.kind is not Kind.WORD or flag.text != "-P":
        raise reader.expected("-P and the policy")
    reader.take()
    text = reader.take()  # the tokenizer makes the text after -P one POLICY token
    policy = parse_policy(text.text, text.where, delete=type_ == MsgType.X_SPDDELETE)
    reader.end()
    exts[:0] = [
        policy,
        Address(ExtType.ADDRESS_SRC, src, proto, src_prefix),
        Address(ExtType.ADDRESS_DST, dst, proto, dst_prefix),
    ]
    return Message(type_, 0, 0, 0, 0, tuple(exts))


def _misc(token: Token, proto: int) -> tuple[int, int]:
    """The selector ports for an ICMP ``type[,code]`` or a GRE key (setkey ``fix_portstr``)."""
    text = token.text
    if proto in names.ICMP_LIKE:
        parts = text.split(",")
        if len(parts) in (1, 2) and all(p.isdigit() and int(p) <= 255 for p in parts):
            return int(parts[0]), int(parts[1]) if len(parts) == 2 else 0
        raise SetkeyError(token.where, f"{quote(text)} is not type[,code]")
    octets = text.split(".")
    if len(octets) == 4 and all(o.isdigit() and int(o) <= 255 for o in octets):
        a, b, c, d = (int(o) for o in octets)
        return (a << 8) + b, (c << 8) + d
    if text.isdigit() and int(text) <= 0xFFFFFFFF:
        return int(text) >> 16, int(text) & 0xFFFF
    raise SetkeyError(token.where, f"{quote(text)} is not a GRE key: a.b.c.d or a number")
