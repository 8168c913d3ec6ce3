"""REGISTER and ACQUIRE: key managers listening for SA requests (RFC 2367 §3.1.6-3.1.7).

REGISTER adds the sender to the listeners of an SA type (once: again is EEXIST) and
answers with the algorithms the registry offers for it (``<base, supported(A),
supported(E)>``, AH: authentication only), each with the key sizes its RFC allows and the
registry's implementation takes. It is the one message that probes every algorithm (each
at most once per key manager).

ACQUIRE asks registered key managers for an SA: the kernel (here :meth:`KeyManager.acquire`)
or an application (§3.1.6, ``<base, address(SD), (address(P),) (identity(SD),)
(sensitivity,) proposal>``) sends it; a key manager that fails answers with a header-only
ACQUIRE carrying the request's ``sadb_msg_seq`` and an errno, which cancels the request.

A request stays pending (:class:`Acquires`) until a GETSPI with its ``sadb_msg_seq`` or a
cancel consumes it, or until it expires ``ACQUIRE_EXPIRES`` seconds after it was made, as
the XFRM_STATE_ACQ state Linux makes for it does; at most ``ACQUIRE_MAX`` are pending, and
a request beyond that is refused with EAGAIN.
"""

from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km import replies
from cryptoapi.pfkey.km.admit import sa_type
from cryptoapi.pfkey.km.algorithms import AUTH, ENCRYPT, AlgSpec
from cryptoapi.pfkey.km.interface import KeyManagerCore
from cryptoapi.pfkey.wire.constants import (
    E_EXISTS,
    E_NOT_FOUND,
    SADB_SATYPE_MAX,
    ExtType,
    MsgType,
    SaType,
)
from cryptoapi.pfkey.wire.framing import invalid
from cryptoapi.pfkey.wire.message import HEADER_LEN, Scan, addresses
from cryptoapi.pfkey.wire.proposal import AlgDesc, Comb, Proposal, Supported

# Lifetimes Linux proposes in an ACQUIRE (af_key.c dump_esp_combs), in seconds.
HARD_ADDTIME = 8 * 60 * 60
SOFT_ADDTIME = 7 * 60 * 60
HARD_USETIME = 7 * 60 * 60
SOFT_USETIME = 6 * 60 * 60


Available = tuple[AlgSpec, int, int]
"""An algorithm the registry offers, with the smallest and largest key it takes (bits)."""


def available(km: KeyManagerCore, table: dict[int, AlgSpec]) -> list[Available]:
    """(spec, min bits, max bits) of each algorithm of ``table`` the registry offers."""
    found = []
    for spec in table.values():
        bits = km.probe.key_bits(spec)
        if bits is not None:
            found.append((spec, min(bits), max(bits)))
    return found


def supported(km: KeyManagerCore, satype: int) -> bytes:
    """The SUPPORTED_AUTH and (except for AH) SUPPORTED_ENCRYPT extensions."""
    parts = []
    lists = [(ExtType.SUPPORTED_AUTH, AUTH)]
    if satype != SaType.AH:
        lists.append((ExtType.SUPPORTED_ENCRYPT, ENCRYPT))
    for exttype, table in lists:
        algs = tuple(AlgDesc(s.id, s.ivlen, low, high) for s, low, high in available(km, table))
        if algs:
            parts.append(Supported(exttype, algs).encode())
    return b"".join(parts)


def register(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """§3.1.7: the sender listens for ACQUIRE and EXPIRE of the SA type; reply with what is
    supported. UNSPEC only asks what is supported; a type above the SADB maximum is EINVAL,
    one the sender registered for already EEXIST (Linux ``pfkey_register``)."""
    if scan.satype > SADB_SATYPE_MAX:
        raise invalid(f"SA type {scan.satype} is above the maximum {int(SADB_SATYPE_MAX)}")
    if scan.satype != SaType.UNSPEC and not km.clients.register(km.sender, scan.satype):
        raise PfkeyError(E_EXISTS, f"this client is registered for SA type {scan.satype}")
    body = supported(km, scan.satype)
    return [replies.base(MsgType.REGISTER, scan.satype, scan.seq, scan.pid, body)]


def proposal(km: KeyManagerCore, satype: int) -> Proposal:
    """Every acceptable combination the registry offers, as Linux proposes them."""
    auths = [a for a in available(km, AUTH) if not a[0].is_null]
    combs = []
    pairs: list[tuple[Available | None, Available | None]] = []
    if satype == SaType.AH:
        pairs = [(a, None) for a in auths]
    else:
        for enc in available(km, ENCRYPT):
            if enc[0].is_null:
                continue
            pairs += [(None, enc)] if enc[0].aead else [(a, enc) for a in auths]
    for auth, cipher in pairs:
        combs.append(
            Comb(
                auth=auth[0].id if auth else 0,
                encrypt=cipher[0].id if cipher else 0,
                auth_minbits=auth[1] if auth else 0,
                auth_maxbits=auth[2] if auth else 0,
                encrypt_minbits=cipher[1] if cipher else 0,
                encrypt_maxbits=cipher[2] if cipher else 0,
                soft_addtime=SOFT_ADDTIME,
                hard_addtime=HARD_ADDTIME,
                soft_usetime=SOFT_USETIME,
                hard_usetime=HARD_USETIME,
            )
        )
    return Proposal(0, tuple(combs))


def acquire(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """§3.1.6. A header-only ACQUIRE is a key manager's answer: with an errno it cancels
    the request of that ``sadb_msg_seq`` (nothing is sent back, as Linux). Otherwise an
    application asks for an SA: the request goes to the listeners of its type (ESRCH when
    there are none, EAGAIN when ``ACQUIRE_MAX`` requests are pending)."""
    if len(scan.data) == HEADER_LEN:
        if scan.seq and scan.errno:
            km.acquires.pop(scan.seq)
        return []
    sa_type(scan.satype)
    src_ext, dst_ext, _ = addresses(scan)
    if ExtType.PROPOSAL not in scan.spans:
        raise invalid("an ACQUIRE needs a PROPOSAL extension")
    if not km.clients.listening(scan.satype):
        raise PfkeyError(E_NOT_FOUND, f"no key manager listens for SA type {scan.satype}")
    km.acquires.add(scan.seq, scan.satype, src_ext, dst_ext, now)
    body = b"".join(scan.data[start:end] for start, end in scan.spans.values())
    return [replies.base(MsgType.ACQUIRE, scan.satype, scan.seq, scan.pid, body)]
