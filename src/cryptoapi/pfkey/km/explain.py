"""PF_KEY messages and refusals in words, for logs and for people (not for the wire).

:func:`describe` names the SA or flow a message is about, decoded with the wire codec
(``soft EXPIRE of ESP SA SPI 0x1001 192.0.2.1 -> 192.0.2.2 after 1000 bytes, 10
packets``); :func:`refusal` says what a reply's ``sadb_msg_errno`` means for the message it
answers. A PF_KEY reply carries only the errno (RFC 2367 §1.4), and ``strerror`` reads it
out of context: ESRCH is "No such process" where af_key.c means "no such SA", ENOENT "No
such file or directory" where it means "no such policy". The errno's name stays in
brackets, for whoever looks it up. Nothing here shows key material.
"""

import errno
import os

from cryptoapi.pfkey.wire.constants import ExtType, MsgType, SaType, name_of
from cryptoapi.pfkey.wire.extensions import Address, Lifetime, Sa
from cryptoapi.pfkey.wire.message import Message, scan

SA_LOOKUPS = (MsgType.UPDATE, MsgType.DELETE, MsgType.GET)
POLICY_LOOKUPS = (MsgType.X_SPDDELETE, MsgType.X_SPDDELETE2, MsgType.X_SPDGET)
POLICY_CHANGES = (MsgType.X_SPDADD, MsgType.X_SPDUPDATE)
NAMING = (
    ExtType.SA,
    ExtType.ADDRESS_SRC,
    ExtType.ADDRESS_DST,
    ExtType.LIFETIME_CURRENT,
    ExtType.LIFETIME_HARD,
    ExtType.LIFETIME_SOFT,
)
"""The extensions :func:`describe` reads."""

NO_SA = "no such SA (never added, or expired or deleted)"
POLICY_EXISTS = "a policy with this selector exists already"

BY_MESSAGE: dict[tuple[int, int], str] = {
    **{(int(k), errno.ESRCH): NO_SA for k in SA_LOOKUPS},
    (int(MsgType.ADD), errno.EEXIST): "an SA with this SPI and destination exists already",
    (int(MsgType.GETSPI), errno.EEXIST): "no free SPI is left in the range asked for",
    **{(int(k), errno.EEXIST): POLICY_EXISTS for k in POLICY_CHANGES},
    **{(int(k), errno.ENOENT): "no such policy" for k in POLICY_LOOKUPS},
    (int(MsgType.DUMP), errno.ENOENT): "no SAD entries",
    (int(MsgType.X_SPDDUMP), errno.ENOENT): "no SPD entries",
}
"""What af_key.c (and so the key manager) means by an errno in reply to that message."""

BY_ERRNO: dict[int, str] = {
    errno.EINVAL: "the key manager refused the message as invalid (a field, an extension or "
    "their combination; an encryption-only ESP SA without --allow-unauthenticated-esp)",
    errno.ENOSYS: "an algorithm is unknown or not available",
    errno.EOPNOTSUPP: "the key manager does not handle this message",
    errno.EMSGSIZE: "the message's length is wrong",
    errno.EAGAIN: "too many ACQUIREs are pending: try again later",
    errno.ELOOP: "the policy has too many IPsec requests",
    errno.ENOBUFS: "out of resources (no reqid left, or a queue is full)",
    errno.EBUSY: "the key manager is busy (a dump in progress)",
    errno.EPERM: "not permitted",
    errno.EACCES: "not permitted",
}
"""The same, whatever the message."""


def refusal(kind: int, code: int, reason: str = "") -> str:
    """Why a ``kind`` message was refused with errno ``code``, in words, then the errno's
    name: ``no such SA (never added, or expired or deleted) (ESRCH)``. ``reason`` is the
    key manager's own, when it is in this process (``LocalClient``'s answer has it): it says
    more."""
    words = reason or BY_MESSAGE.get((kind, code)) or BY_ERRNO.get(code) or os.strerror(code)
    return f"{words} ({errno.errorcode.get(code, f'errno {code}')})"


def message_name(kind: int) -> str:
    """``ADD``, ``X_SPDADD``, ... (the number for a type PF_KEY does not define)."""
    return name_of(kind, MsgType)


def satype_name(satype: int) -> str:
    """``ESP``, ``AH``, ... (``type N`` for another)."""
    return name_of(satype, SaType, f"type {satype}")


def endpoints(message: Message) -> str:
    """``SRC -> DST`` of a message's address extensions (``?`` for one it lacks)."""
    src = message.get(ExtType.ADDRESS_SRC, Address)
    dst = message.get(ExtType.ADDRESS_DST, Address)
    return f"{src.addr.ip if src else '?'} -> {dst.addr.ip if dst else '?'}"


def sa_name(message: Message) -> str:
    """``ESP SA SPI 0x1001 192.0.2.1 -> 192.0.2.2``: the SA a message is about."""
    sa = message.get(ExtType.SA, Sa)
    spi = f" SPI {sa.spi:#x}" if sa is not None else ""
    return f"{satype_name(message.satype)} SA{spi} {endpoints(message)}"


def describe(message: Message) -> str:
    """One line naming what ``message`` is about: an EXPIRE's SA, soft or hard, and what it
    had carried; an ACQUIRE's wanted SA; any other message's type and SA."""
    if message.type == MsgType.EXPIRE:
        return _expire(message)
    if message.type == MsgType.ACQUIRE:
        return f"ACQUIRE: no {satype_name(message.satype)} SA {endpoints(message)} yet"
    return f"{message_name(message.type)} of {sa_name(message)}"


def describe_data(data: bytes) -> str:
    """:func:`describe` of an encoded message, decoding only what it names: an ACQUIRE's
    proposal (3.6 kB, 0.25 ms to decode whole) is left alone. PfkeyError if it does not
    scan."""
    found = scan(data)
    exts = tuple(e for t in NAMING if (e := found.decode(t)) is not None)
    return describe(Message(found.type, found.satype, extensions=exts))


def _expire(message: Message) -> str:
    hard = message.get(ExtType.LIFETIME_HARD, Lifetime) is not None
    current = message.get(ExtType.LIFETIME_CURRENT, Lifetime)
    used = f" after {current.nbytes} bytes, {current.allocations} packets" if current else ""
    return f"{'hard' if hard else 'soft'} EXPIRE of {sa_name(message)}{used}"
