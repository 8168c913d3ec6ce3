"""The SPD messages (KAME/Linux ``SADB_X_SPD*``; RFC 2367 §1.2 leaves policy out of scope).

- SPDADD: add a policy (EEXIST if its direction and selector have one);
- SPDUPDATE: add, or replace the policy of that direction and selector (keeping its index);
- SPDDELETE: remove the policy of that direction and selector (ENOENT if none);
- SPDGET / SPDDELETE2: show / remove the policy with the ``sadb_x_policy_id`` (ENOENT);
- SPDFLUSH: remove every policy (header-only reply);
- SPDDUMP: one message per policy, newest first, ``sadb_msg_seq`` 1, 2, ... and 0 on the
  last (ENOENT if none), as Linux's ``pfkey_dump_sp`` walks ``xfrm_policy_walk``.

Each reply is the policy as :meth:`SecurityPolicy.message` builds it, with the request's
type, seq and pid, as Linux's ``key_notify_policy`` and ``key_pol_get_resp`` send them, and
its reference count (see :mod:`~cryptoapi.pfkey.db.spd`). Validation comes first: a refused
message leaves the SPD as it was.
"""

from collections.abc import Callable

from cryptoapi.pfkey.db.spd import (
    HELD,
    IN_SPD,
    SecurityPolicy,
    admit_policy,
    index_dir,
    policy_of,
    wanted_policy,
)
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km import replies
from cryptoapi.pfkey.km.interface import KeyManagerCore
from cryptoapi.pfkey.wire.constants import E_EMPTY, E_EXISTS, MsgType
from cryptoapi.pfkey.wire.message import Scan


def _reply(policy: SecurityPolicy, scan: Scan, refcnt: int) -> list[bytes]:
    return [policy.message(scan.type, scan.seq, scan.pid, refcnt=refcnt).encode()]


def _new(km: KeyManagerCore, policy: SecurityPolicy) -> SecurityPolicy:
    """An admitted policy as it goes in: its unique requests given reqids, its index 0
    for the SPD to number (Linux's ``pfkey_spdadd`` ignores ``sadb_x_policy_id``), unless
    the key manager is a copy of another one (``keeps_policy_ids``: espd's of keyd's),
    whose ids it keeps, so that an ACQUIRE's policy id means the same on both sides."""
    policy = km.spd.unique_reqids(policy)
    if not km.keeps_policy_ids:
        policy.index = 0
    return policy


def spdadd(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """Add a policy; EEXIST if one has its direction and selector (``xfrm_policy_insert``
    with ``excl``)."""
    policy = admit_policy(scan, now)
    if km.spd.find(policy.selector) is not None:
        raise PfkeyError(E_EXISTS, "a policy with this direction and selector exists")
    policy = _new(km, policy)
    km.spd.insert(policy)
    return _reply(policy, scan, HELD)


def spdupdate(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """Add a policy or replace the one with its direction and selector."""
    policy = _new(km, admit_policy(scan, now))
    km.spd.insert(policy, replacing=km.spd.find(policy.selector))
    return _reply(policy, scan, HELD)


def spddelete(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """Remove the policy with the message's direction and selector; ENOENT if none."""
    policy = km.spd.find(wanted_policy(scan, now).selector)
    if policy is None:
        raise PfkeyError(E_EMPTY, "no policy has this direction and selector")
    km.spd.remove(policy)
    return _reply(policy, scan, IN_SPD)


def _by_index(km: KeyManagerCore, scan: Scan) -> SecurityPolicy:
    index = policy_of(scan).id
    index_dir(index)
    policy = km.spd.by_index.get(index)
    if policy is None:
        raise PfkeyError(E_EMPTY, f"no policy has id {index:#x}")
    return policy


def spdget(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """The policy with the ``sadb_x_policy_id`` of the message; ENOENT if none."""
    return _reply(_by_index(km, scan), scan, HELD)


def spddelete2(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """Remove the policy with the ``sadb_x_policy_id`` of the message; ENOENT if none."""
    policy = _by_index(km, scan)
    km.spd.remove(policy)
    return _reply(policy, scan, IN_SPD)


def spdflush(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """Remove every policy; the reply is the header alone."""
    for policy in km.spd:
        km.spd.remove(policy)
    return [replies.base(MsgType.X_SPDFLUSH, 0, scan.seq, scan.pid, b"")]


def spddump_lazily(km: KeyManagerCore, scan: Scan) -> replies.Dump:
    """One SPDDUMP message per policy, newest first, numbered as :class:`~replies.Dump`
    says; ENOENT when there is none (Linux ``xfrm_policy_walk``); each built when it is
    taken."""
    policies = list(km.spd)
    if not policies:
        raise PfkeyError(E_EMPTY, "the SPD has no policy")
    policies.reverse()
    count, pid = len(policies), scan.pid

    def build(i: int) -> bytes:
        seq = replies.dump_seq(i, count)
        return policies[i].message(MsgType.X_SPDDUMP, seq, pid).encode()

    return replies.Dump(count, build)


def spddump(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """SPDDUMP with every message built at once (:func:`spddump_lazily`)."""
    return list(spddump_lazily(km, scan))


Handler = Callable[[KeyManagerCore, Scan, float], list[bytes]]

HANDLERS: dict[int, Handler] = {
    MsgType.X_SPDADD: spdadd,
    MsgType.X_SPDUPDATE: spdupdate,
    MsgType.X_SPDDELETE: spddelete,
    MsgType.X_SPDGET: spdget,
    MsgType.X_SPDDELETE2: spddelete2,
    MsgType.X_SPDFLUSH: spdflush,
    MsgType.X_SPDDUMP: spddump,
}
"""The SPD message handlers, for the key manager's table."""
