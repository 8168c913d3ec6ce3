"""Sequence-number checkpoints: no outbound ESP sequence number is sent twice across a
takeover (issue 23, item 3).

An outbound SA's sequence number is its AEAD nonce (RFC 4106 §3.1, RFC 7634 §2): under
AES-GCM or ChaCha20-Poly1305 a number sent twice under one key leaks the authentication
key. Linux publishes an SA's replay state to a key manager every ``replay-maxdiff``
packets or ``replay-maxage`` time (``XFRMA_REPLAY_VAL`` in its async events); firewall
clusters jump outbound numbers on failover. Here:

- **The checkpoint is espd's usage report** (``X_USAGE``, :mod:`cryptoapi.esp.espd.reports`),
  whose ``sadb_x_sa2_sequence`` is the SA's last sequence number sent (or received). espd
  sends it every T = 2 s (``REPORT_INTERVAL``) and also at once after each N = 65,536
  packets of an SA (:data:`CHECKPOINT_PACKETS`: the step of espd's local sequence floors,
  :mod:`cryptoapi.esp.seqfloor`, whose durable reservation each step already makes; the
  same event makes the report due, so the trigger costs nothing per packet).
- **keyd keeps it durably**: the report raises the SA's ``sequence`` (never lowers it,
  :func:`~cryptoapi.pfkey.km.handlers.reported_usage`) and asks the state store, through
  ``KeyManager.on_checkpoint``, to write it at the next commit, which follows the round that
  took the report, not the 5 s usage interval. Both schemas keep the column ``sequence``
  (SQLite version 3, PostgreSQL version 2) and every statement that writes it keeps the
  greater of the stored and the written value.
- **On becoming active** (a takeover, or a start as the active on PostgreSQL), keyd raises
  every SA's checkpoint by :data:`MARGIN`, in the database first (one statement), then in
  memory, before it
  acknowledges anything, and takes the raised values the database returns: :func:`jump`.
  The dump's ``sadb_x_sa2_sequence`` (as KAME fills
  it) hands the raised number to the espd that follows, which sends its next packet on the
  SA above it (``Datapath`` starts a state at the greater of its local floor and the SA's
  ``sequence``). A second takeover before any report raises it again: jumps accumulate in
  the database, so no two actives ever start from the same number.

The margin. What the database's checkpoint can lag the last number sent is at most N
packets (or T seconds, whichever comes first) plus what is sent while a report travels and
commits (L, milliseconds when keyd is reachable): N + rate x L. :data:`MARGIN` = 2^20
(1,048,576) covers N = 65,536 plus L = 1 s at 983,000 packets a second, well above what
espd carries (bench.checkpoint measures it), and spends 1/4096 of the 32-bit space a
takeover. An SA whose checkpoint is within the margin of its space's end starts at the end,
i.e. is exhausted at once (a hard EXPIRE follows; the IKE daemon rekeys) rather than wrap.

**Inbound SAs.** keyd cannot tell an SA's direction (the SPD's templates do not name it in
transport mode), so the data path says it: espd's report of an SA that has received and
never sent carries the highest number received, marked ``received`` (bit 0 of
``sadb_x_sa2_reserved1``, :class:`~cryptoapi.pfkey.wire.x_extensions.Sa2`: Linux and KAME
send the byte as 0). keyd keeps it apart, in ``received`` (SQLite schema 4, PostgreSQL
schema 3), never lowered and never raised by a takeover; its dumps hand it out marked the
same way. The espd that follows starts the SA's replay window there with every number at
or below it counted as seen (:meth:`~cryptoapi.esp.replay.ReplayWindow.start_at`): a
packet the old active took, replayed to the new one, is refused, and the peer's next
numbers, above it, are taken. What the old active took after its last report (at most T
of traffic) can still be replayed once within the window: the window is as fresh as the
checkpoint. Not with ESN: ``sadb_x_sa2_sequence`` is a u32, so an ESN SA past 2^32 is
handed its low 32 bits, which espd's local floor file, not this, must cover; an inbound
ESN SA's window starts empty.

**Byte and packet counts** carry over the same way and are never under-counted: the
report carries the SA's current lifetime too, keyd writes it with the checkpoint, and on
becoming active it raises every SA's packet count by :data:`PACKET_MARGIN` (what the old
active may have carried unreported, bounded as the sequence numbers are: at most N packets
of an outbound SA, T of any, plus what a report in flight covers) and its byte count by
:data:`BYTE_MARGIN` (1 GiB: T + L = 3 s at 2.8 Gbit/s, four times the most espd has
carried here). An espd that follows keyd (after a takeover, or a restart) starts its SA's
counters from keyd's (:meth:`~cryptoapi.esp.espd.mirror.Mirror.install`), so its reports,
which keyd takes as totals (never lowering them), and its byte and packet limits count
what the old active carried. The price is an over-count, the safe side: after a takeover
an SA whose byte or packet limit is within the margin of its use expires sooner (the IKE
daemon rekeys it), as the sequence margin spends numbers.
"""

from typing import TYPE_CHECKING, Any

from cryptoapi.pfkey.daemon import pgschema as sql
from cryptoapi.pfkey.wire.constants import SaFlags

if TYPE_CHECKING:
    import psycopg

    from cryptoapi.pfkey.km.manager import KeyManager

CHECKPOINT_PACKETS = 1 << 16
"""N: the packets of one SA after which espd reports its sequence number at once (espd's
local floor step, :data:`cryptoapi.esp.seqfloor.STEP`)."""
CHECKPOINT_SECONDS = 2.0
"""T: the seconds after which espd reports every SA that moved (``REPORT_INTERVAL``)."""
MARGIN = 1 << 20
"""How far a new active raises every checkpoint: more than N + rate x L (module doc)."""
PACKET_MARGIN = MARGIN
"""How far a new active raises every SA's packet count: what the old active may have carried
unreported, bounded as the sequence numbers are (module doc)."""
BYTE_MARGIN = 1 << 30
"""How far it raises every SA's byte count: T + L = 3 s at 2.8 Gbit/s (module doc)."""
SEQ_END = (1 << 32) - 1
"""The last number of a 32-bit sequence space."""
ALLOCATIONS_END = (1 << 32) - 1
"""The largest packet count ``sadb_lifetime_allocations`` (a u32) holds."""
ESN_END = (1 << 63) - 1
"""The last number an ESN SA's checkpoint takes here (PostgreSQL's ``bigint``)."""


def jump(db: "psycopg.Connection[Any]", km: "KeyManager") -> int:
    """Raise every SA's checkpoint by :data:`MARGIN`, at most to its sequence space's end,
    durably in the database, then give ``km``'s SAs the raised values the database returns;
    how many SAs were raised.

    The jump is not journaled (a journal row an SA would make every standby read every
    row again: 10,000 SAs cost a takeover 0.2 s, measured), so a standby's copy of a
    checkpoint may lag the row; it never matters, since a standby hands out no sequence
    number before its own takeover, whose jump starts from the row."""
    ends = (int(SaFlags.ESN), ESN_END, SEQ_END)
    counts = (PACKET_MARGIN, ALLOCATIONS_END, BYTE_MARGIN)
    with db.transaction(), db.cursor(binary=True) as cursor:
        rows = cursor.execute(sql.TAKEOVER_JUMP, (MARGIN, *ends, *counts)).fetchall()
    get = km.sad.by_key.get
    for satype, dst, spi, sequence, allocations, nbytes in rows:
        sa = get((satype, bytes(dst), spi))
        if sa is not None:
            sa.sequence, sa.allocations, sa.nbytes = sequence, allocations, nbytes
    return len(rows)
