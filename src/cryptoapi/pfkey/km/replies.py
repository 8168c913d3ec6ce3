"""The messages the key manager sends, built from SA records (RFC 2367 §3.1).

- the state message (:func:`full`), as Linux's ``pfkey_xfrm_state2msg`` builds it:
  ``<base, SA, lifetime(HSC), address(SD), (key(AE),) sa2, (sa_replay,) (kept
  extensions)>``; the hard and soft lifetimes are always there, all zero when the SA has
  none (``_X2KEY`` turns "no limit" into 0); ``sa_replay`` (FreeBSD's
  ``sadb_x_sa_replay``) only for a window above 255, which ``sadb_sa_replay`` cannot hold
  (it then says 255), so a window Linux could have is sent as Linux sends it. GET and DUMP
  (§3.1.5, §3.1.10) carry the keys; the reply to GETSPI (Linux ``pfkey_getspi``: a LARVAL
  SA whose hard lifetime is the time it waits for its UPDATE) and the ADD, UPDATE and
  DELETE notifications (``key_notify_sa``) do not: Linux broadcasts the keys to every
  PF_KEY socket, keyd to none (RFC 2367 §3.1.2-3: "minus keys"). A DELETE shows the SA
  DYING, as Linux's does (``__xfrm_state_delete`` leaves it ``XFRM_STATE_DEAD``, which the
  builder shows as ``SADB_SASTATE_DYING``);
- EXPIRE (§3.1.8): ``<base, SA, lifetime(one of HS, then C), address(SD), sa2, (kept
  extensions)>``, no keys, the SA DYING: Linux's ``key_notify_sa_expire``
  (``__pfkey_xfrm_state2msg`` with ``hsc`` 2 or 1), whose SA2 gives mode and reqid to key
  managers that read them;
- an error (§1.4): the sender's header alone, with ``sadb_msg_errno`` set.

Addresses and kept extensions are the validated bytes the SA was created from (Linux
rebuilds the addresses: protocol 0, the full prefix, port 0; setkey and racoon send them so,
save the protocol, which setkey sends as 255). The messages of a DUMP are a :class:`Dump`,
each built when it is taken.
"""

from collections.abc import Callable, Sequence

from cryptoapi.pfkey.db.sad import SecurityAssociation
from cryptoapi.pfkey.wire.constants import (
    PF_KEY_V2,
    SADB_SA_REPLAY_MAX,
    ExtType,
    MsgType,
    SaState,
)
from cryptoapi.pfkey.wire.extensions import SADB_KEY, SADB_LIFETIME, SADB_SA, Lifetime
from cryptoapi.pfkey.wire.message import HEADER
from cryptoapi.pfkey.wire.x_extensions import SA2_RECEIVED, SADB_X_SA2, SaReplay

# packed directly (not through the extension classes): these are the per-SA paths of GET
# and DUMP
_SA_WORDS = SADB_SA.size // 8
_LIFETIME_WORDS = SADB_LIFETIME.size // 8
_SA2_WORDS = SADB_X_SA2.size // 8
_SA_TYPE = int(ExtType.SA)
SEQ_MASK = 0xFFFFFFFF


def base(type_: int, satype: int, seq: int, pid: int, body: bytes) -> bytes:
    """``body`` behind a ``sadb_msg`` of the given fields (version 2, length computed)."""
    return HEADER.pack(PF_KEY_V2, type_, 0, satype, 2 + len(body) // 8, 0, seq, pid) + body


def error(data: bytes, errno: int) -> bytes:
    """The header-only error reply to ``data`` (RFC 2367 §1.4), whatever ``data`` holds:
    its header fields are kept, version, reserved and length made valid."""
    fields = list(HEADER.unpack_from(data[:16].ljust(16, b"\0")))
    fields[0], fields[2], fields[4], fields[5] = PF_KEY_V2, errno, 2, 0
    return HEADER.pack(*fields)


def sa_ext(sa: SecurityAssociation, state: int | None = None) -> bytes:
    """The ``sadb_sa`` extension of ``sa`` (its own state unless ``state`` is given); a
    window above 255 is sent as 255 (as FreeBSD sends it), and in full by
    :func:`full`'s SA_REPLAY."""
    return SADB_SA.pack(
        _SA_WORDS,
        _SA_TYPE,
        sa.spi.to_bytes(4, "big"),
        sa.replay if sa.replay <= SADB_SA_REPLAY_MAX else SADB_SA_REPLAY_MAX,
        sa.state if state is None else state,
        sa.auth,
        sa.encrypt,
        sa.flags,
    )


def lifetime_ext(lifetime: Lifetime) -> bytes:
    return SADB_LIFETIME.pack(
        _LIFETIME_WORDS,
        lifetime.exttype,
        lifetime.allocations,
        lifetime.nbytes,
        lifetime.addtime,
        lifetime.usetime,
    )


_NO_HARD = lifetime_ext(Lifetime(ExtType.LIFETIME_HARD))
_NO_SOFT = lifetime_ext(Lifetime(ExtType.LIFETIME_SOFT))
"""The lifetimes of an SA without limits, as Linux sends them: all zero."""


def current_ext(sa: SecurityAssociation) -> bytes:
    """The current lifetime (§2.3.2): usage so far, add and first-use times in seconds."""
    return SADB_LIFETIME.pack(
        _LIFETIME_WORDS,
        ExtType.LIFETIME_CURRENT,
        sa.allocations,
        sa.nbytes,
        int(sa.added),
        int(sa.used),
    )


def key_ext(exttype: int, bits: int, key: bytes) -> bytes:
    pad = -len(key) % 8
    return SADB_KEY.pack(1 + (len(key) + pad) // 8, exttype, bits, 0) + key + bytes(pad)


def sa2_ext(
    sa: SecurityAssociation, sequence: int | None = None, *, received: bool = False
) -> bytes:
    """``sadb_x_sa2``: mode, reqid and, as KAME's dumps fill it, ``sadb_x_sa2_sequence``:
    ``sequence`` if given (``received``: a number received, :class:`~.Sa2`), else the SA's
    checkpoint, the highest number received for an inbound SA whose data path said so,
    the last one sent otherwise; its low 32 bits (the field is a u32; Linux leaves it 0)."""
    if sequence is None:
        received = sa.received > 0
        sequence = sa.received if received else sa.sequence
    flags = SA2_RECEIVED if received else 0
    return SADB_X_SA2.pack(
        _SA2_WORDS, ExtType.X_SA2, sa.mode, flags, 0, sequence & SEQ_MASK, sa.reqid
    )


def full(
    sa: SecurityAssociation,
    type_: int,
    seq: int,
    pid: int,
    *,
    keys: bool,
    state: int | None = None,
    hard: Lifetime | None = None,
) -> bytes:
    """The whole SA (``pfkey_xfrm_state2msg``): lifetimes, addresses, keys if ``keys``,
    sa2, the rest; ``state`` and ``hard`` in place of the SA's own if given."""
    hard = sa.hard if hard is None else hard
    parts = [
        sa_ext(sa, state),
        _NO_HARD if hard is None else lifetime_ext(hard),
        _NO_SOFT if sa.soft is None else lifetime_ext(sa.soft),
        current_ext(sa),
        sa.src_ext,
        sa.dst_ext,
    ]
    if keys and sa.auth_bits:
        parts.append(key_ext(ExtType.KEY_AUTH, sa.auth_bits, sa.auth_key))
    if keys and sa.encrypt_bits:
        parts.append(key_ext(ExtType.KEY_ENCRYPT, sa.encrypt_bits, sa.encrypt_key))
    parts.append(sa2_ext(sa))
    if sa.replay > SADB_SA_REPLAY_MAX:
        parts.append(SaReplay(sa.replay).encode())
    parts.append(sa.extra)
    return base(type_, sa.satype, seq, pid, b"".join(parts))


def expire(sa: SecurityAssociation, which: Lifetime) -> bytes:
    """The EXPIRE message for ``sa`` reaching its ``which`` (soft or hard) lifetime, in
    the order of Linux's ``__pfkey_xfrm_state2msg``: SA (DYING, soft or hard: Linux's
    state is dying or dead, and it shows both so), the lifetime reached, the current one,
    addresses, SA2 (mode, reqid), then NAT-T and the other kept extensions."""
    body = (
        sa_ext(sa, SaState.DYING)
        + lifetime_ext(which)
        + current_ext(sa)
        + sa.src_ext
        + sa.dst_ext
        + sa2_ext(sa)
        + sa.extra
    )
    return base(MsgType.EXPIRE, sa.satype, 0, 0, body)


def usage(
    sa: SecurityAssociation,
    seq: int,
    pid: int,
    sequence: int | None = None,
    *,
    received: bool = False,
) -> bytes:
    """``<base, SA, lifetime(C), address(SD), sa2>``: an SA's usage, as a data path reports
    it (``sequence``: its last sequence number sent, or with ``received`` the highest
    received) and as keyd answers the report."""
    sa2 = sa2_ext(sa, sequence, received=received)
    body = sa_ext(sa) + current_ext(sa) + sa.src_ext + sa.dst_ext + sa2
    return base(MsgType.X_USAGE, sa.satype, seq, pid, body)


class Dump:
    """The messages of one DUMP or SPDDUMP not taken yet, each built by ``build(i)`` when it
    is taken: a reader that stops reading holds a daemon to what it has queued, not to a
    copy of the database (Linux ``pfkey_do_dump`` too walks the database only as the
    reader's receive buffer drains). Message ``i`` of ``count`` has ``sadb_msg_seq``
    ``i + 1``, and the last has 0 (§3.1.10: 0 ends the dump), as Linux numbers them
    (``dump_sa`` and ``dump_sp`` give ``count + 1``; ``pfkey_do_dump`` sets the last one's
    to 0)."""

    __slots__ = ("_build", "_count", "_next")

    def __init__(self, count: int, build: Callable[[int], bytes]) -> None:
        self._count = count
        self._build = build
        self._next = 0

    def __len__(self) -> int:
        """How many messages are left."""
        return self._count - self._next

    def __iter__(self) -> "Dump":
        return self

    def __next__(self) -> bytes:
        i = self._next
        if i >= self._count:
            raise StopIteration
        self._next = i + 1
        return self._build(i)


def dump_seq(i: int, count: int) -> int:
    """The ``sadb_msg_seq`` of message ``i`` of a dump of ``count`` (see :class:`Dump`)."""
    return i + 1 if i + 1 < count else 0


def dump(sas: Sequence[SecurityAssociation], pid: int) -> Dump:
    """The DUMP messages for ``sas``, in that order, keys included, numbered as
    :class:`Dump` says. Each SA is shown as it is when its message is built; which SAs, and
    their numbers, are fixed now."""
    count = len(sas)
    return Dump(count, lambda i: full(sas[i], MsgType.DUMP, dump_seq(i, count), pid, keys=True))
