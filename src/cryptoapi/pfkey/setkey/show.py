"""Listings of SAs and policies, as ``setkey -D`` / ``setkey -DP`` print them, and as JSON.

The text is ipsec-tools 0.8.2's, field for field (``src/libipsec/pfkey_dump.c``:
``pfkey_sadump1``, ``pfkey_spdump1``, ``str_time``, ``str_prefport``, ``str_upperspec``,
``str_lifetime_byte``; ``ipsec_dump_policy.c``; ``key_debug.c``'s ``ipsec_hexdump``),
trailing spaces included, so that a script that reads real ``setkey -D`` output reads this.
Dates are ``ctime`` without the weekday, in local time (``Dec  1 12:00:00 2026``; 20 spaces
for 0); ``current:``/``diff:`` use ``now``, the time the listing is made (setkey's
``time(0)``; passed in, so a test can fix it). ``refcnt=`` is ``sadb_msg_reserved``, as
pfkey_dump.c reads it (Linux puts the policy's reference count there).

Deliberate differences: an SA's keys are shown only when ``show_keys`` is true (otherwise
``<N-bit key hidden>`` stands where the hex would be); algorithms that ipsec-tools 0.8.2
has no name for (AES-GCM, AES-CCM, ChaCha20-Poly1305; it prints their number) are named as
setkey's ``-E`` takes them; ``replay=`` is the window in packets, FreeBSD's ``SA_REPLAY``
when the reply has one (a window above 255), else ``sadb_sa_replay``, as FreeBSD's
``pfkey_sadump`` picks it; ``diff:`` is 0 rather than a wrapped negative number when
``now`` is before the SA's creation.

Works on decoded GET/DUMP/SPDDUMP replies (any message with the extensions), so the same
code lists the daemon's database and an in-process one.
"""

import time
from typing import Any

from cryptoapi.pfkey.setkey import names
from cryptoapi.pfkey.wire.constants import (
    AF_INET,
    IPSEC_PROTO_ANY,
    ExtType,
    MsgType,
    SaType,
)
from cryptoapi.pfkey.wire.extensions import Address, Key, Lifetime, Sa
from cryptoapi.pfkey.wire.message import Message
from cryptoapi.pfkey.wire.policy import IpsecRequest, Policy
from cryptoapi.pfkey.wire.x_extensions import NatTPort, NatTType, Sa2, SaReplay

STATES = ("larval", "mature", "dying", "dead")
MODES = ("any", "transport", "tunnel", "beet")
DUMP_MODES = MODES[:3]
"""pfkey_dump.c's ``str_mode``: a mode past ``tunnel`` is printed as its number."""
SATYPES = ("unspec", "unknown", "ah", "esp", "unknown", "rsvp", "ospfv2", "ripv2", "mip")
"""pfkey_dump.c's ``str_satype`` (by ``sadb_msg_satype``)."""
DIRECTIONS = {1: "in", 2: "out", 3: "fwd"}
ACTIONS: dict[int, str] = {int(value): name for name, value in names.ACTIONS.items()}
LEVELS: dict[int, str] = {int(value): name for name, value in names.LEVELS.items()}
REQUEST_PROTOCOLS: dict[int, str] = {value: name for name, value in names.REQUEST_PROTOCOLS.items()}
PROTOCOL_NAMES = {
    1: "icmp", 4: "ipencap", 6: "tcp", 17: "udp", 41: "ipv6", 47: "gre", 50: "esp", 51: "ah",
    58: "ipv6-icmp", 89: "ospf", 108: "ipcomp", 115: "l2tp", 132: "sctp", 135: "mobility-header",
}  # fmt: skip
"""What ``getprotobynumber`` names in Linux's /etc/protocols (netbase), which
``str_upperspec`` prints; 255 (any) has no entry there, so it is printed as ``255``."""
MANUAL_REQID_MAX = 0x3FFF
"""``IPSEC_MANUAL_REQID_MAX``: a larger reqid was allocated, and is shown after ``#``."""
NO_PORTS = frozenset({*names.ICMP_LIKE, names.GRE})
"""Upper-layer protocols whose selectors ``str_prefport`` shows without ``[port]``."""
PRIORITY_HIGH_BELOW = names.PRIORITY_BASES["def"] // 4 * 3
PRIORITY_LOW_FROM = names.PRIORITY_BASES["def"] // 4 * 5
"""``ipsec_dump_policy1``: the bounds between ``prio high``, ``prio def`` and ``prio low``."""


def _pick(seq: tuple[str, ...], index: int) -> str:
    return seq[index] if 0 <= index < len(seq) else str(index)


def ctime_text(seconds: int) -> str:
    """pfkey_dump.c's ``str_time``: ``ctime`` without weekday and newline, or 20 spaces."""
    return time.asctime(time.localtime(seconds))[4:24] if seconds else " " * 20


def _hexdump(key: Key | None, show: bool) -> str:
    """``ipsec_hexdump``: 4-byte groups, each after a space, a newline every 32 bytes."""
    if key is None:
        return ""
    if not show:
        return f" <{key.bits}-bit key hidden>"
    raw = key.key[: key.bits // 8]
    return "".join(
        ("\n" if i and i % 32 == 0 else "") + (" " if i % 4 == 0 else "") + f"{byte:02x}"
        for i, byte in enumerate(raw)
    )


def replay_window(msg: Message) -> int:
    """The SA's replay window in packets: SA_REPLAY's if the reply has it, else the SA's."""
    window = msg.get(ExtType.SA_REPLAY, SaReplay)
    if window is not None:
        return window.replay
    sa = msg.get(ExtType.SA, Sa)
    return sa.replay if sa is not None else 0


def _natt(msg: Message) -> bool:
    natt = msg.get(ExtType.X_NAT_T_TYPE, NatTType)
    return natt is not None and natt.type != 0


def sa_dict(msg: Message, *, show_keys: bool = False) -> dict[str, Any]:
    """The SA of a GET or DUMP reply as plain values (keys as hex only if ``show_keys``)."""
    sa = msg.get(ExtType.SA, Sa) or Sa(0)
    sa2 = msg.get(ExtType.X_SA2, Sa2) or Sa2()
    src, dst = msg.get(ExtType.ADDRESS_SRC, Address), msg.get(ExtType.ADDRESS_DST, Address)
    protocol = "ah" if msg.satype == SaType.AH else "esp-udp" if _natt(msg) else "esp"
    out: dict[str, Any] = {
        "src": str(src.addr) if src else "?",
        "dst": str(dst.addr) if dst else "?",
        "protocol": protocol,
        "spi": sa.spi,
        "mode": _pick(MODES, sa2.mode),
        "reqid": sa2.reqid,
        "state": _pick(STATES, sa.state),
        "replay": replay_window(msg),
        "flags": sa.flags,
    }
    if sa.encrypt:
        out["encrypt"] = names.first_name(names.ENCRYPT_NAMES, sa.encrypt)
    if sa.auth:
        out["auth"] = names.first_name(names.AUTH_NAMES, sa.auth)
    for exttype, label in ((ExtType.KEY_ENCRYPT, "encrypt_key"), (ExtType.KEY_AUTH, "auth_key")):
        key = msg.get(exttype, Key)
        if key is not None:
            out[label + "_bits"] = key.bits
            if show_keys:
                out[label] = key.key.hex()
    for exttype, label in (
        (ExtType.LIFETIME_CURRENT, "current"),
        (ExtType.LIFETIME_HARD, "hard"),
        (ExtType.LIFETIME_SOFT, "soft"),
    ):
        life = msg.get(exttype, Lifetime)
        if life is not None:
            out[label] = {
                "bytes": life.nbytes,
                "allocations": life.allocations,
                "addtime": life.addtime,
                "usetime": life.usetime,
            }
    return out


def _sa_end(msg: Message, address: ExtType, port: ExtType) -> str:
    """An SA's address, with its NAT-T port in brackets when it has one (``pfkey_sadump1``)."""
    found = msg.get(address, Address)
    text = str(found.addr.ip) if found else "?"
    natt_port = msg.get(port, NatTPort)
    return f"{text}[{natt_port.port}]" if natt_port and _natt(msg) else text


def _sa_protocol(msg: Message) -> str:
    if _natt(msg):
        return "esp-udp" if msg.satype == SaType.ESP else "natt+" + _pick(SATYPES, msg.satype)
    return _pick(SATYPES, msg.satype)


def _key_lines(msg: Message, sa: Sa, show_keys: bool) -> list[str]:
    """``E:`` (ESP) and ``A:`` lines, each only when the reply has that key."""
    lines = []
    encrypt, auth = msg.get(ExtType.KEY_ENCRYPT, Key), msg.get(ExtType.KEY_AUTH, Key)
    if msg.satype == SaType.ESP and encrypt is not None:
        name = names.first_name(names.ENCRYPT_NAMES, sa.encrypt)
        lines.append(f"\tE: {name} {_hexdump(encrypt, show_keys)}")
    if auth is not None:
        name = names.first_name(names.AUTH_NAMES, sa.auth)
        lines.append(f"\tA: {name} {_hexdump(auth, show_keys)}")
    return lines


def _lifetime_lines(msg: Message, now: float) -> list[str]:
    """The ``created``/``diff``/``last``/``current``/``allocated`` rows (only with a
    current lifetime; an absent hard or soft one reads as 0)."""
    current = msg.get(ExtType.LIFETIME_CURRENT, Lifetime)
    if current is None:
        return []
    hard = msg.get(ExtType.LIFETIME_HARD, Lifetime) or Lifetime(ExtType.LIFETIME_HARD)
    soft = msg.get(ExtType.LIFETIME_SOFT, Lifetime) or Lifetime(ExtType.LIFETIME_SOFT)
    diff = max(0, int(now) - current.addtime) if current.addtime else 0
    return [
        f"\tcreated: {ctime_text(current.addtime)}\tcurrent: {ctime_text(int(now))}",
        f"\tdiff: {diff}(s)\thard: {hard.addtime}(s)\tsoft: {soft.addtime}(s)",
        f"\tlast: {ctime_text(current.usetime)}\thard: {hard.usetime}(s)\tsoft: {soft.usetime}(s)",
        f"\tcurrent: {current.nbytes}(bytes)\thard: {hard.nbytes}(bytes)\t"
        f"soft: {soft.nbytes}(bytes)",
        f"\tallocated: {current.allocations}\thard: {hard.allocations}\tsoft: {soft.allocations}",
    ]


def format_sa(msg: Message, *, show_keys: bool = False, now: float | None = None) -> str:
    """One SA as ``setkey -D`` prints it (``pfkey_sadump1``); ``now`` defaults to the time."""
    sa = msg.get(ExtType.SA, Sa) or Sa(0)
    sa2 = msg.get(ExtType.X_SA2, Sa2) or Sa2()
    src = _sa_end(msg, ExtType.ADDRESS_SRC, ExtType.X_NAT_T_SPORT)
    dst = _sa_end(msg, ExtType.ADDRESS_DST, ExtType.X_NAT_T_DPORT)
    lines = [
        f"{src} {dst} ",
        f"\t{_sa_protocol(msg)} mode={_pick(DUMP_MODES, sa2.mode)} "
        f"spi={sa.spi}({sa.spi:#010x}) reqid={sa2.reqid}({sa2.reqid:#010x})",
        *_key_lines(msg, sa, show_keys),
        f"\tseq={sa2.sequence:#010x} replay={replay_window(msg)} flags={sa.flags:#010x} "
        f"state={_pick(STATES, sa.state)} ",
        *_lifetime_lines(msg, time.time() if now is None else now),
        f"\tsadb_seq={msg.seq} pid={msg.pid} refcnt={msg.reserved}",
    ]
    return "\n".join(lines)


def _range(addr: Address, proto: int) -> str:
    """``str_ipaddr`` and ``str_prefport``: a full-length prefix is left out; no port
    brackets for ICMP, ICMPv6, MH and GRE, whose "ports" are type and code or a key."""
    full = 32 if addr.addr.family == AF_INET else 128
    prefix = "" if addr.prefixlen == full else f"/{addr.prefixlen}"
    port = "" if proto in NO_PORTS else f"[{addr.addr.port or 'any'}]"
    return f"{addr.addr.ip}{prefix}{port}"


def _upper(proto: int, sport: int, dport: int) -> str:
    """``str_upperspec``: the protocol's /etc/protocols name, then ICMP type,code or a GRE key."""
    text = PROTOCOL_NAMES.get(proto, str(proto))
    if not (sport or dport):
        return text
    if proto in names.ICMP_LIKE:
        return f"{text} {sport},{dport}"
    return f"{text} {(sport << 16) + dport}" if proto == names.GRE else text


def priority_text(priority: int) -> str:
    """``def``, or a base and an offset that ``-P dir prio ...`` reads back; "" for 0
    (``ipsec_dump_policy1`` shows no ``prio`` then)."""
    if priority == 0:
        return ""
    base_name = (
        "high"
        if priority < PRIORITY_HIGH_BELOW
        else "def"
        if priority < PRIORITY_LOW_FROM
        else "low"
    )
    base = names.PRIORITY_BASES[base_name]
    if priority == base:
        return base_name
    return (
        f"{base_name} + {base - priority}"
        if priority < base
        else f"{base_name} - {priority - base}"
    )


def request_text(request: IpsecRequest) -> str:
    """A request as ``protocol/mode/src-dst/level`` (``ipsec_dump_ipsecrequest``), with
    ``:reqid`` after the level, or ``#reqid`` for an allocated one."""
    ends = ""
    if request.tunnel is not None:
        ends = f"{request.tunnel[0].ip}-{request.tunnel[1].ip}"
    level = LEVELS.get(request.level, str(request.level))
    if request.reqid:
        mark = "#" if request.reqid > MANUAL_REQID_MAX else ":"
        level = f"{level}{mark}{request.reqid}"
    proto = REQUEST_PROTOCOLS.get(request.proto, str(request.proto))
    return f"{proto}/{_pick(DUMP_MODES, request.mode)}/{ends}/{level}"


def policy_dict(msg: Message) -> dict[str, Any]:
    """The policy of an SPD reply as plain values."""
    policy = msg.get(ExtType.X_POLICY, Policy) or Policy()
    src, dst = msg.get(ExtType.ADDRESS_SRC, Address), msg.get(ExtType.ADDRESS_DST, Address)
    proto = src.proto if src else IPSEC_PROTO_ANY
    return {
        "src": _range(src, proto) if src else "?",
        "dst": _range(dst, proto) if dst else "?",
        "upper": "any" if proto == IPSEC_PROTO_ANY else _upper(proto, 0, 0),
        "dir": DIRECTIONS.get(policy.dir, str(policy.dir)),
        "priority": priority_text(policy.priority),
        "action": ACTIONS.get(policy.type, str(policy.type)),
        "requests": [request_text(r) for r in policy.requests],
        "id": policy.id,
    }


def _selectors(msg: Message, policy: Policy) -> str:
    """The first line of ``pfkey_spdump1``: the selectors and the upper-layer protocol."""
    if policy.id % 8 >= 3:  # Linux numbers a socket's policies past the 3 directions
        return "(per-socket policy) "
    src, dst = msg.get(ExtType.ADDRESS_SRC, Address), msg.get(ExtType.ADDRESS_DST, Address)
    if src is None or dst is None:
        return "(no selector, probably per-socket policy) "
    proto = src.proto
    upper = _upper(proto, src.addr.port, dst.addr.port)
    return f"{_range(src, proto)} {_range(dst, proto)} {upper}"


def _policy_text(policy: Policy) -> str:
    """``ipsec_dump_policy1`` with ``\\n\\t`` between the parts: direction, priority and
    action, then each request."""
    priority = priority_text(policy.priority)
    head = [
        DIRECTIONS.get(policy.dir, str(policy.dir)),
        *(("prio", priority) if priority else ()),
        ACTIONS.get(policy.type, str(policy.type)),
    ]
    return "\n\t".join([" ".join(head), *(request_text(r) for r in policy.requests)])


def format_policy(msg: Message) -> str:
    """One policy as ``setkey -DP`` prints it (``pfkey_spdump1``)."""
    policy = msg.get(ExtType.X_POLICY, Policy) or Policy()
    lines = [_selectors(msg, policy), f"\t{_policy_text(policy)}"]
    current = msg.get(ExtType.LIFETIME_CURRENT, Lifetime)
    if current is not None:
        created, used = ctime_text(current.addtime), ctime_text(current.usetime)
        lines.append(f"\tcreated: {created}  lastused: {used}")
    hard = msg.get(ExtType.LIFETIME_HARD, Lifetime)
    if hard is not None:
        lines.append(f"\tlifetime: {hard.addtime}(s) validtime: {hard.usetime}(s)")
    lines.append(f"\tspid={policy.id} seq={msg.seq} pid={msg.pid}")
    lines.append(f"\trefcnt={msg.reserved}")
    return "\n".join(lines)


def format_reply(msg: Message, *, show_keys: bool = False, now: float | None = None) -> str:
    """A GET, DUMP or SPD reply (or anything else, briefly) for people."""
    if msg.get(ExtType.X_POLICY, Policy) is not None:
        return format_policy(msg)
    if msg.type == MsgType.GETSPI:
        sa = msg.get(ExtType.SA, Sa)
        return f"getspi: spi={sa.spi}({sa.spi:#010x})" if sa else "getspi"
    return format_sa(msg, show_keys=show_keys, now=now)
