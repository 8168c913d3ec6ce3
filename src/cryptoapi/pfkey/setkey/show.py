"""Listings of SAs and policies, as ``setkey -D`` / ``setkey -DP`` print them, and as JSON.

An SA's keys are shown only when ``show_keys`` is true; otherwise only their length is.
Works on decoded GET/DUMP/SPDDUMP replies (any message with the extensions), so the same
code lists the daemon's database and an in-process one.

``replay=`` is the window in packets: FreeBSD's ``SA_REPLAY`` when the reply has one (a
window above 255), else ``sadb_sa_replay``, as FreeBSD's ``pfkey_sadump`` picks it (it
prints bytes, its ``-r`` unit; here packets, ours and Linux's). Flags are shown as hex
only, ESN (``0x00000400``) too, as both ipsec-tools' and FreeBSD's ``pfkey_sadump`` do.
"""

import time
from typing import Any

from cryptoapi.pfkey.setkey import names
from cryptoapi.pfkey.wire.constants import IPSEC_PROTO_ANY, ExtType, IpsecLevel, MsgType, SaType
from cryptoapi.pfkey.wire.extensions import Address, Key, Lifetime, Sa
from cryptoapi.pfkey.wire.message import Message
from cryptoapi.pfkey.wire.policy import IpsecRequest, Policy
from cryptoapi.pfkey.wire.x_extensions import NatTType, Sa2, SaReplay

STATES = ("larval", "mature", "dying", "dead")
MODES = ("any", "transport", "tunnel", "beet")
DIRECTIONS = {1: "in", 2: "out", 3: "fwd"}
ACTIONS: dict[int, str] = {int(value): name for name, value in names.ACTIONS.items()}
LEVELS: dict[int, str] = {int(value): name for name, value in names.LEVELS.items()}
REQUEST_PROTOCOLS: dict[int, str] = {value: name for name, value in names.REQUEST_PROTOCOLS.items()}


def _pick(seq: tuple[str, ...], index: int) -> str:
    return seq[index] if 0 <= index < len(seq) else str(index)


def _when(seconds: int) -> str:
    return time.strftime("%b %d %H:%M:%S %Y", time.localtime(seconds)) if seconds else "never"


def _key(key: Key | None, show: bool) -> str:
    if key is None:
        return ""
    return key.key.hex() if show else f"<{key.bits}-bit key hidden>"


def replay_window(msg: Message) -> int:
    """The SA's replay window in packets: SA_REPLAY's if the reply has it, else the SA's."""
    window = msg.get(ExtType.SA_REPLAY, SaReplay)
    if window is not None:
        return window.replay
    sa = msg.get(ExtType.SA, Sa)
    return sa.replay if sa is not None else 0


def sa_dict(msg: Message, *, show_keys: bool = False) -> dict[str, Any]:
    """The SA of a GET or DUMP reply as plain values (keys as hex only if ``show_keys``)."""
    sa = msg.get(ExtType.SA, Sa) or Sa(0)
    sa2 = msg.get(ExtType.X_SA2, Sa2) or Sa2()
    src, dst = msg.get(ExtType.ADDRESS_SRC, Address), msg.get(ExtType.ADDRESS_DST, Address)
    natt = msg.get(ExtType.X_NAT_T_TYPE, NatTType) is not None
    protocol = "ah" if msg.satype == SaType.AH else "esp-udp" if natt else "esp"
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
            out[label] = {"bytes": life.nbytes, "addtime": life.addtime, "usetime": life.usetime}
    return out


def format_sa(msg: Message, *, show_keys: bool = False) -> str:
    """One SA in the shape of ``setkey -D``."""
    d = sa_dict(msg, show_keys=False)
    sa = msg.get(ExtType.SA, Sa) or Sa(0)
    lines = [
        f"{d['src']} {d['dst']}",
        f"\t{d['protocol']} mode={d['mode']} spi={sa.spi}({sa.spi:#010x}) "
        f"reqid={d['reqid']}({d['reqid']:#010x})",
    ]
    if "encrypt" in d:
        key = _key(msg.get(ExtType.KEY_ENCRYPT, Key), show_keys)
        lines.append(f"\tE: {d['encrypt']}  {key}".rstrip())
    if "auth" in d:
        key = _key(msg.get(ExtType.KEY_AUTH, Key), show_keys)
        lines.append(f"\tA: {d['auth']}  {key}".rstrip())
    lines.append(f"\treplay={d['replay']} flags={sa.flags:#010x} state={d['state']}")
    current = msg.get(ExtType.LIFETIME_CURRENT, Lifetime)
    if current is not None:
        lines.append(f"\tcreated: {_when(current.addtime)}\tcurrent: {current.nbytes}(bytes)")
    for label in ("hard", "soft"):
        life = msg.get(
            ExtType.LIFETIME_HARD if label == "hard" else ExtType.LIFETIME_SOFT, Lifetime
        )
        if life is not None:
            lines.append(f"\t{label}: {life.addtime}(s)\t{life.nbytes}(bytes)")
    return "\n".join(lines)


def _range(addr: Address) -> str:
    port = addr.addr.port or "any"
    return f"{addr.addr.ip}/{addr.prefixlen}[{port}]"


def _upper(proto: int) -> str:
    if proto == IPSEC_PROTO_ANY:
        return "any"
    for name, number in names.UPPER_PROTOCOLS.items():
        if number == proto:
            return name
    return str(proto)


def priority_text(priority: int) -> str:
    """``def``, or a base and an offset that ``-P dir prio ...`` reads back."""
    base_name, base = min(names.PRIORITY_BASES.items(), key=lambda kv: abs(priority - kv[1]))
    if priority == base:
        return base_name
    return (
        f"{base_name} + {base - priority}"
        if priority < base
        else f"{base_name} - {priority - base}"
    )


def request_text(request: IpsecRequest) -> str:
    """A request as ``protocol/mode/src-dst/level``."""
    ends = ""
    if request.tunnel is not None:
        ends = f"{request.tunnel[0]}-{request.tunnel[1]}"
    level = LEVELS.get(request.level, str(request.level))
    if request.level == IpsecLevel.UNIQUE and request.reqid:
        level = f"unique:{request.reqid}"
    proto = REQUEST_PROTOCOLS.get(request.proto, str(request.proto))
    return f"{proto}/{_pick(MODES, request.mode)}/{ends}/{level}"


def policy_dict(msg: Message) -> dict[str, Any]:
    """The policy of an SPD reply as plain values."""
    policy = msg.get(ExtType.X_POLICY, Policy) or Policy()
    src, dst = msg.get(ExtType.ADDRESS_SRC, Address), msg.get(ExtType.ADDRESS_DST, Address)
    return {
        "src": _range(src) if src else "?",
        "dst": _range(dst) if dst else "?",
        "upper": _upper(dst.proto) if dst else "any",
        "dir": DIRECTIONS.get(policy.dir, str(policy.dir)),
        "priority": priority_text(policy.priority),
        "action": ACTIONS.get(policy.type, str(policy.type)),
        "requests": [request_text(r) for r in policy.requests],
        "id": policy.id,
    }


def format_policy(msg: Message) -> str:
    """One policy in the shape of ``setkey -DP``."""
    d = policy_dict(msg)
    lines = [
        f"{d['src']} {d['dst']} {d['upper']}",
        f"\t{d['dir']} prio {d['priority']} {d['action']}",
    ]
    lines += [f"\t{r}" for r in d["requests"]]
    lines.append(f"\tspid={d['id']} seq={msg.seq} pid={msg.pid}")
    return "\n".join(lines)


def format_reply(msg: Message, *, show_keys: bool = False) -> str:
    """A GET, DUMP or SPD reply (or anything else, briefly) for people."""
    if msg.get(ExtType.X_POLICY, Policy) is not None:
        return format_policy(msg)
    if msg.type == MsgType.GETSPI:
        sa = msg.get(ExtType.SA, Sa)
        return f"getspi: spi={sa.spi}({sa.spi:#010x})" if sa else "getspi"
    return format_sa(msg, show_keys=show_keys)
