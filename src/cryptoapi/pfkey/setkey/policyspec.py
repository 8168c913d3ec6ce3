"""The policy after ``-P``, as ipsec_set_policy(3) reads it, to a ``sadb_x_policy``.

    direction [priority] discard | none | ipsec [protocol/mode/src-dst/level ...] | entrust
    | bypass

``direction`` is ``in``, ``out`` or ``fwd``; a priority is ``prio[rity] [+|-]N`` (an offset
from the default, higher first) or ``prio[rity] low|def|high [+|-] N``; without one the
priority is libipsec's default, 0x80000000. A request is ``protocol/mode`` followed by
optional ``/src-dst`` (required in tunnel mode; each end may carry ``[port]``) and
``/level`` (``default``, ``use``, ``require``, ``unique`` or ``unique:N`` to bind SAs
added with ``-u N``, 1..32767). Errors point at the offending word.
"""

import re

from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.setkey import names
from cryptoapi.pfkey.setkey.tokens import Position, SetkeyError, quote
from cryptoapi.pfkey.wire.constants import IpsecLevel, IpsecMode, PolicyType
from cryptoapi.pfkey.wire.policy import IpsecRequest, Policy
from cryptoapi.pfkey.wire.sockaddr import SockAddr

_WORD = re.compile(r"\S+")
_PRIORITY = re.compile(r"(low|def|high)?([+-]?)(\d*)")
_ENDPOINT = re.compile(r"([^\[\]]+)(?:\[(\d+)\])?")
MAX_UNIQUE = 32767
MAX_PLUS = 0x40000000  # "up to 1073741824 for positive offsets" (setkey(8))
MAX_MINUS = 0x3FFFFFFF


def parse_policy(text: str, where: Position, *, delete: bool = False) -> Policy:
    """The ``sadb_x_policy`` for ``text`` (which starts at ``where``). With ``delete`` only
    the direction is required (``spddelete ... -P out``)."""
    words = [(m.group(), where.advance(text, m.start())) for m in _WORD.finditer(text)]
    if not words:
        raise SetkeyError(where, "-P needs a policy: in, out or fwd, then what to do")
    word, at = words[0]
    direction = names.DIRECTIONS.get(word)
    if direction is None:
        raise SetkeyError(at, f"policy direction {quote(word)} is not in, out or fwd")
    rest = words[1:]
    priority = names.PRIORITY_BASES["def"]
    if rest and rest[0][0] in ("prio", "priority"):
        spec = []
        for i, (word, _) in enumerate(rest[1:], 1):
            if word in names.ACTIONS:
                rest = rest[i:]
                break
            spec.append(word)
        else:
            rest = []
        priority = _priority("".join(spec), words[1][1] if len(words) > 1 else where)
    if not rest:
        if delete:
            return Policy(PolicyType.DISCARD, direction, 0, priority)
        raise SetkeyError(where, "the policy needs an action: discard, none, ipsec ...")
    word, at = rest[0]
    action = names.ACTIONS.get(word)
    if action is None:
        raise SetkeyError(at, f"{quote(word)} is not discard, none, ipsec, entrust or bypass")
    if action != PolicyType.IPSEC and len(rest) > 1:
        raise SetkeyError(rest[1][1], f"a {word} policy takes no IPsec requests")
    requests = tuple(_request(word, at) for word, at in rest[1:])
    return Policy(action, direction, 0, priority, requests)


def _priority(spec: str, at: Position) -> int:
    """libipsec's priority: an offset N is 0x80000000 - N; a base plus N is base - N."""
    found = _PRIORITY.fullmatch(spec)
    base, sign, digits = found.groups() if found else (None, "", "")
    if not (digits and (sign or not base) if digits else base and not sign):
        raise SetkeyError(at, f"priority {quote(spec)} is not [+|-]N or low|def|high [+|-] N")
    offset = int(digits or 0)
    if base:
        limit = MAX_PLUS if sign == "+" else MAX_MINUS
        if sign and offset > limit:
            raise SetkeyError(at, f"a priority offset from {base} is at most {limit}")
        return names.PRIORITY_BASES[base] + (-offset if sign == "+" else offset)
    value = -offset if sign == "-" else offset
    if not -0x7FFFFFFF <= value <= 0x80000000:
        raise SetkeyError(at, "a priority offset is in -2147483647..2147483648")
    return names.PRIORITY_BASES["def"] - value


def _request(word: str, at: Position) -> IpsecRequest:
    """One ``protocol/mode[/src-dst[/level]]`` request."""
    parts, offsets, start = word.split("/"), [], 0
    for part in parts:
        offsets.append(start)
        start += len(part) + 1
    spot = [at.advance(word, o) for o in offsets]
    proto = names.REQUEST_PROTOCOLS.get(parts[0])
    if proto is None:
        raise SetkeyError(at, f"request protocol {parts[0]!r} is not esp, ah or ipcomp")
    if len(parts) < 2 or not parts[1]:
        raise SetkeyError(at, "a request is protocol/mode[/src-dst[/level]]")
    if parts[1] not in ("transport", "tunnel"):
        raise SetkeyError(spot[1], f"request mode {parts[1]!r} is not transport or tunnel")
    if len(parts) > 4:
        raise SetkeyError(spot[4], "a request has at most four parts separated by '/'")
    mode = IpsecMode.TUNNEL if parts[1] == "tunnel" else IpsecMode.TRANSPORT
    tunnel = _tunnel(parts[2], spot[2]) if len(parts) > 2 and parts[2] else None
    if mode == IpsecMode.TUNNEL and tunnel is None:
        raise SetkeyError(at, "tunnel mode needs the tunnel's ends: esp/tunnel/src-dst/...")
    level, reqid = int(IpsecLevel.DEFAULT), 0
    if len(parts) > 3 and parts[3]:
        level, reqid = _level(parts[3], spot[3])
    return IpsecRequest(proto, mode, level, reqid, tunnel)


def _tunnel(text: str, at: Position) -> tuple[SockAddr, SockAddr]:
    if text in ("me-any", "any-me"):
        raise SetkeyError(at, f"{quote(text)} is not supported: give both ends' addresses")
    ends = text.split("-")
    if len(ends) != 2 or not all(ends):
        raise SetkeyError(at, f"{quote(text)} is not src-dst (two addresses joined by '-')")
    src = _endpoint(ends[0], at)
    dst = _endpoint(ends[1], at.advance(text, len(ends[0]) + 1))
    if src.family != dst.family:
        raise SetkeyError(at, "the tunnel's ends are of different address families")
    return src, dst


def _endpoint(text: str, at: Position) -> SockAddr:
    found = _ENDPOINT.fullmatch(text)
    if found is None:
        raise SetkeyError(at, f"{quote(text)} is not address or address[port]")
    port = int(found.group(2) or 0)
    if port > 0xFFFF:
        raise SetkeyError(at, f"port {port} is not in 0..65535")
    return address(found.group(1), at, port)


def address(text: str, at: Position, port: int = 0) -> SockAddr:
    """The sockaddr of a numeric address (host names are not resolved)."""
    if "%" in text:
        raise SetkeyError(at, f"{quote(text)}: scoped addresses (%zone) are not supported")
    try:
        return SockAddr.of(text, port)
    except PfkeyError:
        raise SetkeyError(
            at, f"{quote(text)} is not a numeric IPv4 or IPv6 address (names are not resolved)"
        ) from None


def _level(text: str, at: Position) -> tuple[int, int]:
    if text.startswith("unique:"):
        number = text[len("unique:") :]
        if not number.isdigit() or not 1 <= int(number) <= MAX_UNIQUE:
            raise SetkeyError(at, f"unique:N takes N in 1..{MAX_UNIQUE}")
        return int(IpsecLevel.UNIQUE), int(number)
    level = names.LEVELS.get(text)
    if level is None:
        raise SetkeyError(at, f"level {quote(text)} is not default, use, require or unique[:N]")
    return level, 0
