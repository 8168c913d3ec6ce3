"""The SPD messages (KAME/Linux ``SADB_X_SPD*``; RFC 2367 §1.2 leaves policy out of scope).

- SPDADD: add a policy (EEXIST if its direction and selector have one);
- SPDUPDATE: add, or replace the policy of that direction and selector (keeping its index);
- SPDDELETE: remove the policy of that direction and selector (ENOENT if none);
- SPDGET / SPDDELETE2: show / remove the policy with the ``sadb_x_policy_id`` (ENOENT);
- SPDFLUSH: remove every policy (header-only reply);
- SPDDUMP: one message per policy, ``sadb_msg_seq`` counting down to 0 (ENOENT if none).

Each reply is the policy as :meth:`SecurityPolicy.message` builds it, with the request's
type, seq and pid, as Linux's ``key_notify_policy`` and ``key_pol_get_resp`` send them.
Validation comes first: a refused message leaves the SPD as it was.
"""

from collections.abc import Callable

from cryptoapi.pfkey import replies
from cryptoapi.pfkey.core import KeyManagerCore
from cryptoapi.pfkey.db.spd import SecurityPolicy, admit_policy, index_dir, policy_of
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.wire.constants import E_EMPTY, E_EXISTS, MsgType
from cryptoapi.pfkey.wire.message import Scan


def _reply(policy: SecurityPolicy, scan: Scan) -> list[bytes]:
    return [policy.message(scan.type, scan.seq, scan.pid).encode()]


def spdadd(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """Add a policy; EEXIST if one has its direction and selector (``xfrm_policy_insert``
    with ``excl``)."""
    policy = admit_policy(scan, now)
    if km.spd.find(policy.selector) is not None:
        raise PfkeyError(E_EXISTS, "a policy with this direction and selector exists")
    policy.index = 0
    km.spd.insert(policy)
    return _reply(policy, scan)


def spdupdate(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """Add a policy or replace the one with its direction and selector."""
    policy = admit_policy(scan, now)
    old = km.spd.find(policy.selector)
    policy.index = 0
    km.spd.insert(policy, replacing=old)
    return _reply(policy, scan)


def spddelete(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """Remove the policy with the message's direction and selector; ENOENT if none."""
    wanted = admit_policy(scan, now)
    policy = km.spd.find(wanted.selector)
    if policy is None:
        raise PfkeyError(E_EMPTY, "no policy has this direction and selector")
    km.spd.remove(policy)
    return _reply(policy, scan)


def _by_index(km: KeyManagerCore, scan: Scan) -> SecurityPolicy:
    index = policy_of(scan).id
    index_dir(index)
    policy = km.spd.by_index.get(index)
    if policy is None:
        raise PfkeyError(E_EMPTY, f"no policy has id {index:#x}")
    return policy


def spdget(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """The policy with the ``sadb_x_policy_id`` of the message; ENOENT if none."""
    return _reply(_by_index(km, scan), scan)


def spddelete2(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """Remove the policy with the ``sadb_x_policy_id`` of the message; ENOENT if none."""
    policy = _by_index(km, scan)
    km.spd.remove(policy)
    return _reply(policy, scan)


def spdflush(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """Remove every policy; the reply is the header alone."""
    for policy in km.spd:
        km.spd.remove(policy)
    return [replies.base(MsgType.X_SPDFLUSH, 0, scan.seq, scan.pid, b"")]


def spddump_lazily(km: KeyManagerCore, scan: Scan) -> replies.Dump:
    """One SPDDUMP message per policy, ``sadb_msg_seq`` down to 0; ENOENT when there is
    none (Linux ``xfrm_policy_walk``); each built when it is taken."""
    policies = list(km.spd)
    if not policies:
        raise PfkeyError(E_EMPTY, "the SPD has no policy")
    last, pid = len(policies) - 1, scan.pid
    return replies.Dump(
        len(policies), lambda i: policies[i].message(MsgType.X_SPDDUMP, last - i, pid).encode()
    )


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
