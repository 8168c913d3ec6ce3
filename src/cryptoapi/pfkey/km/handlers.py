"""The SA messages of RFC 2367 §3.1: GETSPI, UPDATE, ADD, DELETE, GET, FLUSH, DUMP.

Each handler validates the whole message before it changes anything, so a refused message
leaves the database exactly as it was; it returns the replies, the one to the sender first.
A reply is the SA as it is now, built as Linux's handlers build theirs
(:func:`~cryptoapi.pfkey.km.replies.full`, without keys; GET: with them); FLUSH's is the
header alone (``key_notify_sa_flush``).
"""

import errno
import hmac
from dataclasses import replace

from cryptoapi.pfkey.db.sad import SaKey, SecurityAssociation
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km import replies
from cryptoapi.pfkey.km.admit import admit, lifetime, sa2_mode, sa_type
from cryptoapi.pfkey.km.interface import KeyManagerCore
from cryptoapi.pfkey.wire.constants import (
    E_EMPTY,
    E_EXISTS,
    E_NOT_FOUND,
    SPI_MAX_DEFAULT,
    SPI_MIN_DEFAULT,
    ExtType,
    MsgType,
    SaState,
    SaType,
)
from cryptoapi.pfkey.wire.extensions import Lifetime, SpiRange, address_ip, key_at, sa_fields
from cryptoapi.pfkey.wire.framing import invalid
from cryptoapi.pfkey.wire.message import Scan, addresses
from cryptoapi.pfkey.wire.x_extensions import Sa2

RANDOM_TRIES = 16


def _lookup_key(scan: Scan) -> SaKey:
    """The (satype, destination, SPI) a DELETE, GET or UPDATE names (§3.1.2, 3.1.4, 3.1.5)."""
    sa_type(scan.satype)
    span = scan.spans.get(ExtType.SA)
    if span is None:
        raise invalid("the message needs an SA extension")
    _, _, dst = addresses(scan)
    return (scan.satype, dst, sa_fields(scan.data, span[0])[0])


def _find(km: KeyManagerCore, key: SaKey) -> SecurityAssociation:
    sa = km.sad.by_key.get(key)
    if sa is None:
        raise PfkeyError(E_NOT_FOUND, f"no SA of type {key[0]} with SPI {key[2]:#x}")
    return sa


def getspi(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """§3.1.1: pick an unused SPI in the range (default 0x100-0x0fffffff) and create a
    LARVAL SA with it; EEXIST when the range has none left."""
    sa_type(scan.satype)
    src_ext, dst_ext, dst = addresses(scan)
    low, high = SPI_MIN_DEFAULT, SPI_MAX_DEFAULT
    found = scan.decode(ExtType.SPIRANGE)
    if isinstance(found, SpiRange):
        low, high = max(found.min_spi, 1), found.max_spi
        if low > high:
            raise invalid(f"SPI range {found.min_spi:#x}-{found.max_spi:#x} is empty")
    mode, reqid = sa2_mode(scan)  # Linux pfkey_getspi: transport without an sa2 too
    spi = _free_spi(km, scan.satype, dst, low, high)
    km.acquires.pop(scan.seq, None)
    sa = SecurityAssociation(
        satype=scan.satype, spi=spi, dst=dst, state=SaState.LARVAL, replay=0,
        auth=0, encrypt=0, flags=0, auth_key=b"", auth_bits=0, encrypt_key=b"",
        encrypt_bits=0, mode=mode, reqid=reqid, src_ext=src_ext, dst_ext=dst_ext,
        hard=None, soft=None, extra=b"", added=now, seq=scan.seq,
    )  # fmt: skip
    km.sad.add(sa)
    km.larval(sa)
    waits = Lifetime(ExtType.LIFETIME_HARD, addtime=int(km.larval_timeout))  # XFRM_ACQ_EXPIRES
    return [replies.full(sa, MsgType.GETSPI, scan.seq, scan.pid, keys=False, hard=waits)]


def _free_spi(km: KeyManagerCore, satype: int, dst: bytes, low: int, high: int) -> int:
    """An SPI in [low, high] no SA of ``satype`` to ``dst`` uses: a few random picks, then
    a scan from a random point, which meets a free SPI within (SAs + 1) steps if any."""
    taken = km.sad.by_key
    span = high - low + 1
    for _ in range(RANDOM_TRIES):
        spi = low + km.rng.randrange(span)
        if (satype, dst, spi) not in taken:
            return spi
    first = km.rng.randrange(span)
    for step in range(min(span, len(taken) + 1)):
        spi = low + (first + step) % span
        if (satype, dst, spi) not in taken:
            return spi
    raise PfkeyError(E_EXISTS, f"no free SPI in {low:#x}-{high:#x}")


def add(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """§3.1.3: add a MATURE SA; EEXIST if (type, destination, SPI) is taken."""
    if km.probe.reprobe:
        km.probe.reprobe_all()
    sa = admit(scan, km.probe, now, allow_unauthenticated=km.allow_unauthenticated)
    key = (sa.satype, sa.dst, sa.spi)
    if key in km.sad.by_key:
        raise PfkeyError(E_EXISTS, f"an SA of type {sa.satype} with SPI {sa.spi:#x} exists")
    km.sad.add(sa)
    if sa.hard is not None or sa.soft is not None:
        km.timers.added(sa)
    return [replies.full(sa, MsgType.ADD, scan.seq, scan.pid, keys=False)]


def update(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """§3.1.2: complete a LARVAL SA (it becomes MATURE, and the newest, as in Linux) or
    change a MATURE one's lifetimes (it keeps its place).

    The source address cannot change; a MATURE SA keeps its algorithms and keys (a message
    repeating them is accepted, one changing them gets EINVAL). ESRCH if there is no SA.
    """
    old = _find(km, _lookup_key(scan))
    src_ext, _, _ = addresses(scan)
    if address_ip(src_ext) != address_ip(old.src_ext):  # (the length tells the family)
        raise invalid("UPDATE cannot change an SA's source address")
    larval = old.state == SaState.LARVAL
    if larval:
        if km.probe.reprobe:
            km.probe.reprobe_all()
        new = admit(scan, km.probe, now, allow_unauthenticated=km.allow_unauthenticated)
        new.seq = old.seq
    else:
        new = _relifed(km, old, scan)
    new.epoch = old.epoch + 1
    km.sad.replace(old, new, newest=larval)  # Linux xfrm_state_update
    old.epoch += 1  # its timers are stale now
    km.timers.added(new)
    if new.used:
        km.timers.first_use(new)
    return [replies.full(new, MsgType.UPDATE, scan.seq, scan.pid, keys=False)]


def _relifed(km: KeyManagerCore, old: SecurityAssociation, scan: Scan) -> SecurityAssociation:
    span = scan.spans[ExtType.SA]
    _, _, _, auth, encrypt, _ = sa_fields(scan.data, span[0])
    if (auth, encrypt) != (old.auth, old.encrypt):
        raise invalid("UPDATE of a MATURE SA cannot change its algorithms (RFC 2367 §3.1.2)")
    for exttype, key in ((ExtType.KEY_AUTH, old.auth_key), (ExtType.KEY_ENCRYPT, old.encrypt_key)):
        given = scan.spans.get(exttype)
        if given is not None:
            material = key_at(scan.data, given[0])[1]
            if not hmac.compare_digest(material, key):
                raise invalid("UPDATE of a MATURE SA cannot change its keys (RFC 2367 §3.1.2)")
    hard = lifetime(scan, ExtType.LIFETIME_HARD)
    soft = lifetime(scan, ExtType.LIFETIME_SOFT)
    return replace(
        old,
        hard=old.hard if hard is None else hard,
        soft=old.soft if soft is None else soft,
    )


def delete(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """§3.1.4: remove the SA; ESRCH if there is none."""
    sa = _find(km, _lookup_key(scan))
    km.remove(sa)
    return [replies.full(sa, MsgType.DELETE, scan.seq, scan.pid, keys=False, state=SaState.DYING)]


def get(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """§3.1.5: the whole SA, keys included; ESRCH if there is none."""
    sa = _find(km, _lookup_key(scan))
    return [replies.full(sa, MsgType.GET, scan.seq, scan.pid, keys=True)]


def _of_type(km: KeyManagerCore, satype: int) -> list[SecurityAssociation]:
    if satype == SaType.UNSPEC:
        return list(km.sad.by_key.values())
    sa_type(satype)
    return [sa for sa in km.sad.by_key.values() if sa.satype == satype]


def flush(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """§3.1.9: remove every SA of the type (all of them for UNSPEC)."""
    for sa in _of_type(km, scan.satype):
        km.remove(sa)
    return [replies.base(MsgType.FLUSH, scan.satype, scan.seq, scan.pid, b"")]


def dump_lazily(km: KeyManagerCore, scan: Scan) -> replies.Dump:
    """§3.1.10: one message per SA of the type (all for UNSPEC), newest first, as Linux's
    ``pfkey_dump_sa`` walks ``xfrm_state_walk`` (``__xfrm_state_insert`` puts each new
    state at the head of the list); numbered as :class:`~replies.Dump` says; ENOENT when
    there is none (as Linux). Which SAs, and their numbering, are fixed now; each message
    is built when it is taken (a daemon's bounded queue)."""
    found = _of_type(km, scan.satype)  # the selection FLUSH uses too
    if not found:
        raise PfkeyError(E_EMPTY, "the database has no SA of that type")
    found.reverse()
    return replies.dump(found, scan.pid)


def dump(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """DUMP with every message built at once (:func:`dump_lazily`)."""
    return list(dump_lazily(km, scan))


def reported_expire(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """An EXPIRE from a client: a data path in another process (``cryptoapi espd``) reached
    an SA's soft or hard byte or packet limit, or ran out of sequence numbers, and says so
    as the kernel would (§3.1.8: ``<base, SA, lifetime(C and one of HS), address(SD)>``).

    Not Linux's (an EXPIRE only goes from the kernel to key managers there; EOPNOTSUPP):
    here the SAD and the data path can live in different processes. The usage in the
    current lifetime is recorded (never lowered), a soft limit makes the SA DYING and a
    hard one deletes it, and the EXPIRE goes to the registered listeners as if keyd had
    reached the limit itself. ESRCH for an SA keyd does not have (its own timer may have
    ended it first); EINVAL without a soft or hard lifetime.
    """
    sa = _find(km, _lookup_key(scan))
    used = lifetime(scan, ExtType.LIFETIME_CURRENT)
    if used is not None:
        _record_usage(km, sa, used)
    hard = lifetime(scan, ExtType.LIFETIME_HARD)
    if hard is not None:
        return km.expire(sa, hard)
    if lifetime(scan, ExtType.LIFETIME_SOFT) is None:
        raise invalid("an EXPIRE needs a hard or soft lifetime")
    return km.soft_expire(sa)


def reported_usage(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """An X_USAGE from a client (see ``MsgType.X_USAGE``): a data path in another process
    (``cryptoapi espd``) says how much an SA has carried, every few seconds while it
    moves, as ``ip -s xfrm state`` shows the kernel's counters:
    ``<base, SA, lifetime(C), address(SD)[, sa2]>``.

    Recorded in place, never lowered (a report that is older, or from an espd restarted
    with fresh counters, cannot undo usage keyd has), and written by the state store's
    usage writer like the counters of an SA used in-process. The first use starts the SA's
    use-time lifetimes, as :meth:`~cryptoapi.pfkey.km.manager.KeyManager.account` does. The
    reply is the same message with keyd's usage, for the sender only (no broadcast: usage
    is not a change of the SA). Refused, the SA unchanged: ESRCH for an SA keyd does not
    have; EINVAL for a LARVAL SA, another source address, a message without its current
    lifetime or with keys or limits (a report changes usage, nothing else), or a first use
    in the future.
    """
    sa = _find(km, _lookup_key(scan))
    used = lifetime(scan, ExtType.LIFETIME_CURRENT)
    _check_report(scan, sa, used, now)
    assert used is not None  # _check_report refused a report without it
    _record_usage(km, sa, used)
    found = scan.decode(ExtType.X_SA2)
    if isinstance(found, Sa2) and _raise_checkpoint(sa, found) and km.on_checkpoint is not None:
        km.on_checkpoint(sa)
    return [replies.usage(sa, scan.seq, scan.pid)]


def _raise_checkpoint(sa: SecurityAssociation, reported: Sa2) -> bool:
    """Take a report's checkpoint (the last number sent, or with ``received`` the highest
    received), never lowering it (:mod:`cryptoapi.pfkey.daemon.checkpoint`); whether it
    rose."""
    field = "received" if reported.received else "sequence"
    if reported.sequence <= getattr(sa, field):
        return False
    setattr(sa, field, reported.sequence)
    return True


REPORT_REFUSES = tuple(
    int(t)
    for t in (ExtType.KEY_AUTH, ExtType.KEY_ENCRYPT, ExtType.LIFETIME_HARD, ExtType.LIFETIME_SOFT)
)
"""What a usage report may not carry: it changes usage, never keys or limits."""
CLOCK_SLACK = 60.0
"""Seconds a reported first use may lie ahead of keyd's clock (two processes' clocks)."""


def _check_report(scan: Scan, sa: SecurityAssociation, used: Lifetime | None, now: float) -> None:
    """EINVAL for a usage report keyd does not take (see :func:`reported_usage`)."""
    if sa.state == SaState.LARVAL:
        raise invalid("a LARVAL SA carries no traffic: no usage to report")
    src_ext, _, _ = addresses(scan)
    if address_ip(src_ext) != address_ip(sa.src_ext):
        raise invalid("a usage report names the SA's source address")
    if used is None:
        raise invalid("a usage report needs a current lifetime")
    if any(exttype in scan.spans for exttype in REPORT_REFUSES):
        raise invalid("a usage report carries no keys and no hard or soft lifetime")
    if used.usetime > now + CLOCK_SLACK:
        raise invalid(f"a usage report's first use ({used.usetime}) is in the future")


def _record_usage(km: KeyManagerCore, sa: SecurityAssociation, used: Lifetime) -> None:
    """Take a data path's reported usage into ``sa``, never lowering it; a first use
    starts the SA's use-time lifetimes."""
    sa.nbytes = max(sa.nbytes, used.nbytes)
    sa.allocations = max(sa.allocations, used.allocations)
    if used.usetime and not sa.used:
        sa.used = float(used.usetime)
        km.timers.first_use(sa)


def unsupported(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """Messages not handled here (PROMISC, MIGRATE,
    SPDACQUIRE, SPDSETIDX, SPDEXPIRE): EOPNOTSUPP, as Linux answers the ones it does not
    handle. The SPD messages are in :mod:`~cryptoapi.pfkey.km.spd_handlers`."""
    raise PfkeyError(errno.EOPNOTSUPP, f"message type {scan.type} is not supported")
