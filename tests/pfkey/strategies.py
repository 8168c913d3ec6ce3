"""Hypothesis strategies for every PF_KEY extension and for whole messages."""

from hypothesis import strategies as st

from cryptoapi.pfkey import (
    Address,
    AlgDesc,
    Comb,
    ExtType,
    Filter,
    Identity,
    IpsecRequest,
    Key,
    KmAddress,
    KmPrivate,
    Lifetime,
    Message,
    NatTPort,
    NatTType,
    Policy,
    Proposal,
    Sa,
    Sa2,
    SecCtx,
    Sensitivity,
    SockAddr,
    SpiRange,
    Supported,
)
from cryptoapi.pfkey.wire.constants import SADB_MAX

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)
u64 = st.integers(0, 2**64 - 1)

v4 = st.builds(lambda a, p: SockAddr(2, a, p), st.binary(min_size=4, max_size=4), u16)
v6 = st.builds(
    lambda a, p, f, s: SockAddr(10, a, p, f, s), st.binary(min_size=16, max_size=16), u16, u32, u32
)
sockaddr = st.one_of(v4, v6)


@st.composite
def address(draw, exttype):
    addr = draw(sockaddr)
    return Address(exttype, addr, draw(u8), draw(st.integers(0, 32 if addr.family == 2 else 128)))


@st.composite
def key(draw, exttype):
    bits = draw(st.integers(0, 1024))
    return Key(exttype, bits, draw(st.binary(min_size=(bits + 7) // 8, max_size=(bits + 7) // 8)))


no_nul = st.binary(max_size=40).map(lambda b: b.replace(b"\0", b"x"))


@st.composite
def request(draw):
    mode = draw(u8)
    tunnel = None
    if mode == 2 or draw(st.booleans()):
        family = draw(st.sampled_from([v4, v6]))
        tunnel = (draw(family), draw(family))
    return IpsecRequest(draw(u16), mode, draw(u8), draw(u32), tunnel)


@st.composite
def kmaddress(draw):
    family = draw(st.sampled_from([v4, v6]))
    return KmAddress(draw(family), draw(family))


comb = st.builds(Comb, u8, u8, u16, u16, u16, u16, u16, u32, u32, u64, u64, u64, u64, u64, u64)

EXTENSIONS = {
    ExtType.SA: st.builds(Sa, u32, u8, u8, u8, u8, u32),
    ExtType.LIFETIME_CURRENT: st.builds(Lifetime, st.just(2), u32, u64, u64, u64),
    ExtType.LIFETIME_HARD: st.builds(Lifetime, st.just(3), u32, u64, u64, u64),
    ExtType.LIFETIME_SOFT: st.builds(Lifetime, st.just(4), u32, u64, u64, u64),
    ExtType.ADDRESS_SRC: address(5),
    ExtType.ADDRESS_DST: address(6),
    ExtType.ADDRESS_PROXY: address(7),
    ExtType.KEY_AUTH: key(8),
    ExtType.KEY_ENCRYPT: key(9),
    ExtType.IDENTITY_SRC: st.builds(Identity, st.just(10), u16, u64, no_nul),
    ExtType.IDENTITY_DST: st.builds(Identity, st.just(11), u16, u64, no_nul),
    ExtType.SENSITIVITY: st.builds(
        Sensitivity,
        u32,
        u8,
        u8,
        st.lists(u64, max_size=3).map(tuple),
        st.lists(u64, max_size=3).map(tuple),
    ),
    ExtType.PROPOSAL: st.builds(Proposal, u8, st.lists(comb, max_size=3).map(tuple)),
    ExtType.SUPPORTED_AUTH: st.builds(
        Supported,
        st.just(14),
        st.lists(st.builds(AlgDesc, u8, u8, u16, u16), max_size=4).map(tuple),
    ),
    ExtType.SUPPORTED_ENCRYPT: st.builds(
        Supported,
        st.just(15),
        st.lists(st.builds(AlgDesc, u8, u8, u16, u16), max_size=4).map(tuple),
    ),
    ExtType.SPIRANGE: st.builds(SpiRange, u32, u32),
    ExtType.X_KMPRIVATE: st.binary(max_size=5).map(lambda b: KmPrivate(b * 8)),
    ExtType.X_POLICY: st.builds(
        Policy, u16, u8, u32, u32, st.lists(request(), max_size=3).map(tuple)
    ),
    ExtType.X_SA2: st.builds(Sa2, u8, u32, u32),
    ExtType.X_NAT_T_TYPE: st.builds(NatTType, u8),
    ExtType.X_NAT_T_SPORT: st.builds(NatTPort, st.just(21), u16),
    ExtType.X_NAT_T_DPORT: st.builds(NatTPort, st.just(22), u16),
    ExtType.X_NAT_T_OA: address(23),
    ExtType.X_SEC_CTX: st.builds(SecCtx, u8, u8, st.binary(max_size=60)),
    ExtType.X_KMADDRESS: kmaddress(),
    ExtType.X_FILTER: st.builds(
        Filter,
        u16,
        st.binary(min_size=16, max_size=16),
        st.binary(min_size=16, max_size=16),
        u8,
        u8,
    ),
}
assert sorted(EXTENSIONS) == list(range(1, 27))


MESSAGE_TYPES = st.integers(1, SADB_MAX)


@st.composite
def message(draw, types=MESSAGE_TYPES):
    chosen = draw(st.lists(st.sampled_from(sorted(EXTENSIONS)), unique=True, max_size=10))
    exts = tuple(draw(EXTENSIONS[t]) for t in chosen)
    return Message(draw(types), draw(u8), draw(u32), draw(u32), draw(u8), exts)
