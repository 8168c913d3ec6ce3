"""From an ADD or UPDATE message to an SA record, with every check before anything changes.

RFC 2367 §3.1.2-3.1.3 give the message: ``<base, SA, (lifetime(HS),) address(SD),
(address(P),) (key(AE),) (identity(SD),) (sensitivity)>`` (Linux adds ``sa2``, NAT-T and a
security context). The checks, with Linux's errno where Linux has the case:

- no SA extension, no source or destination, or addresses of different families: EINVAL;
- an SA type other than AH or ESP, SPI 0, an algorithm number above the SADB maxima, AH
  with an encryption algorithm or without authentication, ESP without encryption, ESP with
  neither confidentiality nor integrity (RFC 4303 §3.2), or a combined-mode algorithm with a
  separate authentication algorithm (RFC 4106 §8): EINVAL;
- ESP with confidentiality only (a cipher such as AES-CBC and no authentication algorithm,
  or NULL authentication): EINVAL unless the key manager was made with
  ``allow_unauthenticated=True`` (see :func:`integrity`);
- an algorithm number the table does not know or the registry cannot provide: ENOSYS;
- a missing key, a key for no algorithm, or a key length the algorithm's RFC (see
  :mod:`~cryptoapi.pfkey.km.algorithms`) or the registry's implementation does not take:
  EINVAL; an ``sa2`` mode other than any/transport/tunnel/BEET: EINVAL;
- a replay window above ``REPLAY_WINDOW_MAX`` (65536 packets), or extended sequence numbers
  (``SaFlags.ESN``) without a replay window: EINVAL (Linux ``xfrm_init_replay`` refuses
  ESN without a window too).

What is kept is what Linux's ``pfkey_msg2xfrm_state`` keeps: of ``sadb_sa_flags`` only the
flags it implements (``NOECN``, ``DECAP_DSCP``, ``NOPMTUDISC``: ``KEPT_FLAGS``), so the 0x40
setkey sends by default is not shown again; and the mode ``any`` (0), or no ``sa2`` at all,
is stored as transport (``pfkey_mode_to_xfrm`` maps any to ``XFRM_MODE_TRANSPORT``, which
is also the mode of a state with no ``sa2``).

Unlike Linux's PF_KEY, combined-mode (AEAD) SAs are accepted, and the replay window is
kept as given (Linux caps it at 32). Two extensions come from FreeBSD's PF_KEY: the SA flag
``SaFlags.ESN`` (kept in ``sa.flags``; allowed for AH as well as ESP, since RFC 4302 §2.5.1
gives AH ESN too, though only ESP has a data path here), and ``SA_REPLAY``, whose 32-bit
window in packets replaces ``sadb_sa_replay`` when present. UPDATE of a MATURE SA keeps its
window and flags, as it keeps its algorithms (see :mod:`~cryptoapi.pfkey.km.handlers`).
"""

from cryptoapi.pfkey.db.sad import SecurityAssociation, stored_mode
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.algorithms import AUTH, ENCRYPT, AlgSpec
from cryptoapi.pfkey.km.probe import AlgorithmProbe, KeyBits
from cryptoapi.pfkey.wire.constants import (
    E_NO_ALGORITHM,
    REPLAY_WINDOW_MAX,
    SADB_AALG_MAX,
    SADB_EALG_MAX,
    ExtType,
    IpsecMode,
    SaFlags,
    SaState,
    SaType,
)
from cryptoapi.pfkey.wire.extensions import SADB_SA, Lifetime, key_at, lifetime_at
from cryptoapi.pfkey.wire.framing import invalid
from cryptoapi.pfkey.wire.message import Scan, addresses
from cryptoapi.pfkey.wire.x_extensions import SADB_X_SA2, SaReplay

KEPT = (
    ExtType.ADDRESS_PROXY,
    ExtType.IDENTITY_SRC,
    ExtType.IDENTITY_DST,
    ExtType.SENSITIVITY,
    ExtType.X_NAT_T_TYPE,
    ExtType.X_NAT_T_SPORT,
    ExtType.X_NAT_T_DPORT,
    ExtType.X_NAT_T_OA,
    ExtType.X_SEC_CTX,
)
"""Extensions an SA keeps as received and shows again in GET and DUMP."""

SA_TYPES = (SaType.AH, SaType.ESP)
MAX_MODE = IpsecMode.BEET
KEPT_FLAGS = SaFlags.NOECN | SaFlags.DECAP_DSCP | SaFlags.NOPMTUDISC | SaFlags.ESN
"""The ``sadb_sa_flags`` an SA keeps: Linux's three, and ESN (see the module docstring)."""

# plain ints for the per-add path (an enum member costs an attribute lookup)
_SA_EXT = int(ExtType.SA)
_SA2_EXT = int(ExtType.X_SA2)
_SRC = int(ExtType.ADDRESS_SRC)
_DST = int(ExtType.ADDRESS_DST)
_KEY_AUTH = int(ExtType.KEY_AUTH)
_KEY_ENCRYPT = int(ExtType.KEY_ENCRYPT)
_SA_REPLAY_EXT = int(ExtType.SA_REPLAY)
_ESN = int(SaFlags.ESN)
_KEPT_FLAGS = int(KEPT_FLAGS)
_MATURE = int(SaState.MATURE)
_KEPT = frozenset(int(t) for t in KEPT)
_LIFETIMES = frozenset((int(ExtType.LIFETIME_HARD), int(ExtType.LIFETIME_SOFT)))


def sa_type(satype: int) -> None:
    if satype not in SA_TYPES:
        raise invalid(f"SA type {satype} is not AH ({SaType.AH}) or ESP ({SaType.ESP})")


def admit(
    scan: Scan, probe: AlgorithmProbe, now: float, *, allow_unauthenticated: bool = False
) -> SecurityAssociation:
    """A MATURE SA from an ADD or UPDATE message, or the PfkeyError that refuses it; an
    encryption-only ESP SA only with ``allow_unauthenticated`` (see :func:`integrity`).

    The record is filled by name as each value is checked (see
    :meth:`~SecurityAssociation.unfilled`: the per-add cost); a refused message leaves at
    most a partly filled record that nothing holds."""
    spans = scan.spans
    data = scan.data
    span = spans.get(_SA_EXT)
    if span is None:
        raise invalid("the message needs an SA extension")
    sa = SecurityAssociation.unfilled()
    sa.src_ext, sa.dst_ext, sa.dst = addresses(scan)
    sa.satype = satype = scan.satype
    _, _, spi_bytes, replay, _, auth, encrypt, flags = SADB_SA.unpack_from(data, span[0])
    sa.spi = int.from_bytes(spi_bytes, "big")
    if sa.spi == 0:
        raise invalid("SPI 0 is reserved (RFC 4303 §2.1)")
    if flags & _ESN or _SA_REPLAY_EXT in spans:
        replay = replay_window(scan, replay, flags)
    auth_spec, auth_usable, encrypt_spec, encrypt_usable = combination(
        probe, satype, auth, encrypt, allow_unauthenticated
    )
    sa.auth_bits, sa.auth_key = _key(data, spans.get(_KEY_AUTH), auth_spec, auth_usable)
    sa.encrypt_bits, sa.encrypt_key = _key(
        data, spans.get(_KEY_ENCRYPT), encrypt_spec, encrypt_usable
    )
    sa.mode, sa.reqid = sa2_mode(scan)
    sa.extra = b""
    if not _KEPT.isdisjoint(spans):
        sa.extra = b"".join(data[spans[t][0] : spans[t][1]] for t in spans if t in _KEPT)
    sa.hard = sa.soft = None
    if not _LIFETIMES.isdisjoint(spans):
        sa.hard = lifetime(scan, ExtType.LIFETIME_HARD)
        sa.soft = lifetime(scan, ExtType.LIFETIME_SOFT)
    sa.state = _MATURE
    sa.replay = replay
    sa.auth = auth
    sa.encrypt = encrypt
    sa.flags = flags & _KEPT_FLAGS
    sa.added = now
    sa.seq = scan.seq
    return sa


def sa2_mode(scan: Scan) -> tuple[int, int]:
    """(mode, reqid) of the message's ``sa2``: transport for any (0) or no ``sa2`` (Linux
    ``pfkey_mode_to_xfrm``); EINVAL for a mode other than any/transport/tunnel/BEET."""
    span = scan.spans.get(_SA2_EXT)
    mode = reqid = 0
    if span is not None:
        _, _, mode, _, _, _, reqid = SADB_X_SA2.unpack_from(scan.data, span[0])
        if mode > MAX_MODE:
            raise invalid(f"sa2 mode {mode} is not any, transport, tunnel or BEET")
    return stored_mode(mode), reqid


def replay_window(scan: Scan, replay: int, flags: int) -> int:
    """The SA's replay window in packets: SA_REPLAY's when the message has one (it overrides
    ``sadb_sa_replay``), else ``replay``; EINVAL above ``REPLAY_WINDOW_MAX``, or for ESN
    without a window (there is nothing to infer the high bits from, RFC 4303 Appendix A)."""
    found = scan.decode(_SA_REPLAY_EXT)
    if isinstance(found, SaReplay):
        replay = found.replay
        if replay > REPLAY_WINDOW_MAX:
            raise invalid(f"replay window {replay} is above the maximum, {REPLAY_WINDOW_MAX}")
    if flags & _ESN and not replay:
        raise invalid("extended sequence numbers (SaFlags.ESN) need a replay window")
    return replay


Combination = tuple[AlgSpec | None, KeyBits, AlgSpec | None, KeyBits]
"""(auth spec, its usable key bits, encrypt spec, its usable key bits)."""


def combination(
    probe: AlgorithmProbe, satype: int, auth: int, encrypt: int, allow_unauthenticated: bool
) -> Combination:
    """The algorithms of an SA of ``satype`` with these numbers, checked once per
    combination and policy and remembered by the probe (so an add costs one dict read
    here); a refused one is not remembered, so it is refused every time."""
    key = (satype, auth, encrypt, allow_unauthenticated)
    found: Combination | None = probe.combinations.get(key)
    if found is None:
        sa_type(satype)
        auth_spec, encrypt_spec = _algorithms(satype, auth, encrypt)
        if not allow_unauthenticated:
            integrity(auth_spec, encrypt_spec)
        found = (
            auth_spec,
            _usable(probe, auth_spec),
            encrypt_spec,
            _usable(probe, encrypt_spec),
        )
        probe.combinations[key] = found
    return found


def integrity(auth_spec: AlgSpec | None, encrypt_spec: AlgSpec | None) -> None:
    """EINVAL for encryption-only ESP: a cipher with no integrity check, whose packets an
    attacker can change undetected (flipping a CBC IV bit flips the same bit of the inner
    header) and have delivered. RFC 4303 §3.2 allows such SAs; RFC 8221 says ESP must not
    be used with confidentiality and no integrity, so only ``allow_unauthenticated`` admits
    one. Combined modes (AES-GCM, AES-CCM, ChaCha20-Poly1305, AES-GMAC) carry their own."""
    if encrypt_spec is None or encrypt_spec.integrity:
        return
    if auth_spec is not None and auth_spec.integrity:
        return
    raise invalid(
        f"encryption-only ESP ({encrypt_spec.name}, no authentication algorithm) is refused:"
        " a forged or altered packet would go undetected (RFC 8221); add an authentication"
        " algorithm or use a combined mode (aes-gcm, chacha20-poly1305), or opt in, unsafely,"
        " with allow_unauthenticated=True (--allow-unauthenticated-esp)"
    )


def _usable(probe: AlgorithmProbe, spec: AlgSpec | None) -> KeyBits:
    if spec is None:
        return frozenset()
    usable = probe.key_bits(spec)
    if usable is None:
        if spec.name in probe.refused:  # FIPS mode: a policy's refusal, not a missing one
            raise invalid(f"{probe.refused[spec.name]} (SADB {spec.kind} {spec.id})")
        raise PfkeyError(
            E_NO_ALGORITHM, f"{spec.name} (SADB {spec.kind} {spec.id}) is not available"
        )
    return usable


def lifetime(scan: Scan, exttype: int) -> Lifetime | None:
    span = scan.spans.get(exttype)
    if span is None:
        return None
    return lifetime_at(scan.data, span[0])


def _algorithms(satype: int, auth: int, encrypt: int) -> tuple[AlgSpec | None, AlgSpec | None]:
    if auth > SADB_AALG_MAX or encrypt > SADB_EALG_MAX:
        raise invalid(f"algorithm numbers auth {auth} / encrypt {encrypt} are out of range")
    if satype == SaType.AH:
        if encrypt:
            raise invalid("an AH SA has no encryption algorithm")
        if not auth:
            raise invalid("an AH SA needs an authentication algorithm")
    elif not encrypt:
        raise invalid("an ESP SA needs an encryption algorithm (NULL is 11)")
    auth_spec = _spec(AUTH, auth, "authentication") if auth else None
    encrypt_spec = _spec(ENCRYPT, encrypt, "encryption") if encrypt else None
    if encrypt_spec is not None:
        if encrypt_spec.aead and auth:
            raise invalid(f"{encrypt_spec.name} authenticates itself; sadb_sa_auth must be 0")
        if encrypt_spec.is_null and (auth_spec is None or auth_spec.is_null):
            raise invalid("ESP with NULL encryption needs an authentication algorithm")
    return auth_spec, encrypt_spec


def _spec(table: dict[int, AlgSpec], number: int, what: str) -> AlgSpec:
    spec = table.get(number)
    if spec is None:
        raise PfkeyError(E_NO_ALGORITHM, f"{what} algorithm {number} is not supported")
    return spec


def _key(
    data: bytes, span: tuple[int, int] | None, spec: AlgSpec | None, usable: KeyBits
) -> tuple[int, bytes]:
    """(bits, key) of the key extension for ``spec``, checked against its RFC and the
    registry; (0, b"") when the algorithm takes no key."""
    if span is not None:
        bits, material = key_at(data, span[0])
        if bits and bits in usable:
            return bits, material
    else:
        bits = 0
    if spec is None:
        if span is not None:
            raise invalid("a key is given for an algorithm the SA does not have")
        return 0, b""
    if spec.is_null:
        if bits:
            raise invalid(f"NULL {spec.kind} takes no key, not {bits} bits (RFC 2410)")
        return 0, b""
    if span is None:
        raise invalid(f"{spec.name} needs a key: the {spec.kind} key extension is missing")
    if bits not in spec.key_bits:
        allowed = "/".join(str(b) for b in spec.key_bits)
        raise invalid(f"{spec.name} takes {allowed}-bit keys (RFC {spec.rfc}), not {bits}")
    raise invalid(f"the registry's {spec.name} does not take {bits}-bit keys")
