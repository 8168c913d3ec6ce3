"""Matching pairs of ESP SAs and policies for the interoperability tests, made the way a key
manager makes them: SADB_ADD and SADB_X_SPDADD messages handled by a real
:class:`~cryptoapi.pfkey.KeyManager`.

A :class:`Link` joins two hosts. *Local* runs the :class:`cryptoapi.esp.Datapath` under
test over the key manager built here; *peer* is the independent implementation (scapy,
tshark, a published packet), which is given the same keys from the :class:`Link`. Local
sends with the outbound SA (local -> peer) and receives with the inbound one (peer ->
local); each has its own SPI and keys, so a packet decrypted with the wrong SA fails.

Transforms are named by their SADB numbers (:mod:`cryptoapi.pfkey.km.algorithms`). Keys are
given to PF_KEY as the kernel takes them: the RFC 4106/4309/4543/3686/7634 salt or nonce
is the last 4 (CCM: 3) bytes of the encryption key. Key bytes are derived from a label
(SHAKE-256), so every run uses the same keys and a failure replays.
"""

import hashlib
from dataclasses import dataclass
from ipaddress import ip_address, ip_network

from cryptoapi.pfkey import (
    Address,
    AuthAlg,
    EncryptAlg,
    ExtType,
    IpsecDir,
    IpsecLevel,
    IpsecMode,
    IpsecRequest,
    Key,
    KeyManager,
    Message,
    MsgType,
    Policy,
    PolicyType,
    Sa,
    Sa2,
    SaFlags,
    SaType,
    SockAddr,
    decode,
)

IPPROTO_ESP = 50
ANY_PROTOCOL = 255  # IPSEC_ULPROTO_ANY in a selector


@dataclass(frozen=True, slots=True)
class Transform:
    """One ESP transform as an SA carries it: SADB numbers, key lengths and ICV size."""

    name: str  # the test id
    encrypt: int  # sadb_sa_encrypt
    auth: int  # sadb_sa_auth (0 for combined modes)
    encrypt_key: int  # bytes, the salt or nonce included
    auth_key: int  # bytes
    icv: int  # bytes of ICV on the wire
    salt: int = 0  # bytes at the end of the encryption key that are salt or nonce

    @property
    def aead(self) -> bool:
        return self.auth == AuthAlg.NONE and self.encrypt != EncryptAlg.NULL


def _aead(name: str, encrypt: int, key: int, icv: int, salt: int = 4) -> Transform:
    return Transform(name, encrypt, AuthAlg.NONE, key + salt, 0, icv, salt)


_HMACS = (
    ("hmac-sha1-96", AuthAlg.SHA1HMAC, 20, 12),
    ("hmac-sha2-256", AuthAlg.X_SHA2_256HMAC, 32, 16),
    ("hmac-sha2-384", AuthAlg.X_SHA2_384HMAC, 48, 24),
    ("hmac-sha2-512", AuthAlg.X_SHA2_512HMAC, 64, 32),
    ("aes-xcbc-96", AuthAlg.X_AES_XCBC_MAC, 16, 12),
)
_CIPHERS = (
    ("aes-cbc", EncryptAlg.X_AESCBC, 16, 0),
    ("aes-ctr", EncryptAlg.X_AESCTR, 20, 4),
    ("null", EncryptAlg.NULL, 0, 0),
)

TRANSFORMS: dict[str, Transform] = {
    t.name: t
    for t in (
        _aead("aes-gcm-8", EncryptAlg.X_AES_GCM_ICV8, 16, 8),
        _aead("aes-gcm-12", EncryptAlg.X_AES_GCM_ICV12, 16, 12),
        _aead("aes-gcm-16", EncryptAlg.X_AES_GCM_ICV16, 16, 16),
        _aead("aes256-gcm-16", EncryptAlg.X_AES_GCM_ICV16, 32, 16),
        _aead("aes-ccm-8", EncryptAlg.X_AES_CCM_ICV8, 16, 8, salt=3),
        _aead("aes-ccm-12", EncryptAlg.X_AES_CCM_ICV12, 16, 12, salt=3),
        _aead("aes-ccm-16", EncryptAlg.X_AES_CCM_ICV16, 16, 16, salt=3),
        _aead("chacha20-poly1305", EncryptAlg.X_CHACHA20_POLY1305, 32, 16),
        _aead("aes-gmac", EncryptAlg.X_NULL_AES_GMAC, 16, 16),
        *(
            Transform(f"{cipher}+{mac}", encrypt, auth, key, auth_key, icv, salt)
            for cipher, encrypt, key, salt in _CIPHERS
            for mac, auth, auth_key, icv in _HMACS
        ),
        Transform("aes256-cbc+hmac-sha2-256", EncryptAlg.X_AESCBC, 5, 32, 32, 16),
    )
}
"""Every transform the interoperability tests cover, by test id."""


@dataclass(frozen=True, slots=True)
class Hosts:
    """The addresses of one family: the two IPsec endpoints and, for tunnel mode, the
    networks behind them and one host on each."""

    local: str
    peer: str
    local_net: str
    peer_net: str
    local_host: str
    peer_host: str


HOSTS = {
    4: Hosts(
        "192.0.2.1", "192.0.2.2", "198.51.100.0/24", "203.0.113.0/24", "198.51.100.7", "203.0.113.9"
    ),
    6: Hosts(
        "2001:db8::1",
        "2001:db8::2",
        "2001:db8:1::/64",
        "2001:db8:2::/64",
        "2001:db8:1::7",
        "2001:db8:2::9",
    ),
}
"""Documentation addresses (RFC 5737, RFC 3849) per IP version."""


@dataclass(frozen=True, slots=True, repr=False)
class SaKeys:
    """One SA as the peer must be told of it."""

    spi: int
    src: str  # the SA's (outer) source and destination
    dst: str
    encrypt_key: bytes  # salt or nonce at the end, as PF_KEY carries it
    auth_key: bytes

    def __repr__(self) -> str:
        return f"SaKeys(spi={self.spi:#010x}, src={self.src}, dst={self.dst}, keys=<hidden>)"


@dataclass(frozen=True, slots=True)
class Link:
    """A key manager holding both SAs and both policies of one local-peer link."""

    key_manager: KeyManager
    transform: Transform
    mode: int  # IpsecMode.TRANSPORT or TUNNEL
    version: int  # 4 or 6
    esn: bool
    outbound: SaKeys  # local -> peer: Datapath.output uses it
    inbound: SaKeys  # peer -> local: Datapath.input uses it
    local_addr: str  # the plaintext packets' addresses (tunnel: the inner hosts)
    peer_addr: str

    @property
    def hosts(self) -> Hosts:
        return HOSTS[self.version]

    @property
    def tunnel(self) -> bool:
        return self.mode == IpsecMode.TUNNEL


def material(label: str, size: int) -> bytes:
    """``size`` bytes that depend only on ``label``."""
    return hashlib.shake_256(label.encode()).digest(size)


def sa_keys(transform: Transform, spi: int, src: str, dst: str) -> SaKeys:
    """Keys for one SA of ``transform``, derived from its name and SPI."""
    label = f"{transform.name}/{spi:#x}"
    return SaKeys(
        spi,
        src,
        dst,
        material(label + "/encrypt", transform.encrypt_key),
        material(label + "/auth", transform.auth_key),
    )


def _address(exttype: int, ip: str, prefixlen: int | None = None, proto: int = 0) -> Address:
    sockaddr = SockAddr.of(ip)
    full = 32 if len(sockaddr.addr) == 4 else 128
    return Address(exttype, sockaddr, proto, full if prefixlen is None else prefixlen)


def add_message(
    transform: Transform,
    keys: SaKeys,
    *,
    mode: int,
    esn: bool,
    reqid: int,
    replay: int = 32,
    seq: int = 1,
) -> bytes:
    """SADB_ADD for one ESP SA: ``<base, SA, address(SD), key(AE), sa2>``."""
    flags = SaFlags.ESN if esn else 0
    exts = [
        Sa(keys.spi, replay, 1, transform.auth, transform.encrypt, flags),
        _address(ExtType.ADDRESS_SRC, keys.src),
        _address(ExtType.ADDRESS_DST, keys.dst),
    ]
    if keys.auth_key:
        exts.append(Key(ExtType.KEY_AUTH, 8 * len(keys.auth_key), keys.auth_key))
    if keys.encrypt_key:
        exts.append(Key(ExtType.KEY_ENCRYPT, 8 * len(keys.encrypt_key), keys.encrypt_key))
    exts.append(Sa2(mode, reqid))
    return Message(MsgType.ADD, SaType.ESP, seq, 4242, 0, tuple(exts)).encode()


def spdadd_message(
    direction: int,
    src_selector: str,
    dst_selector: str,
    *,
    mode: int,
    tunnel: tuple[str, str] | None,
    reqid: int,
    seq: int = 1,
) -> bytes:
    """SADB_X_SPDADD: traffic between the two prefixes (any protocol, any port) requires
    ESP in ``mode`` (through ``tunnel``'s endpoints in tunnel mode)."""
    ends = None if tunnel is None else (SockAddr.of(tunnel[0]), SockAddr.of(tunnel[1]))
    request = IpsecRequest(IPPROTO_ESP, mode, IpsecLevel.REQUIRE, reqid, ends)
    src = ip_network(src_selector)
    dst = ip_network(dst_selector)
    exts = (
        Policy(PolicyType.IPSEC, direction, 0, 0, (request,)),
        _address(ExtType.ADDRESS_SRC, str(src.network_address), src.prefixlen, ANY_PROTOCOL),
        _address(ExtType.ADDRESS_DST, str(dst.network_address), dst.prefixlen, ANY_PROTOCOL),
    )
    return Message(MsgType.X_SPDADD, SaType.UNSPEC, seq, 4242, 0, exts).encode()


def send(key_manager: KeyManager, data: bytes) -> None:
    """Hand one message to the key manager; fail the test unless every reply is errno 0."""
    for reply in key_manager.handle(data):
        decoded = decode(reply)
        assert decoded.errno == 0, (
            f"the key manager refused {MsgType(decoded.type).name}: {decoded}"
        )


def add_sa(
    key_manager: KeyManager,
    transform: Transform,
    keys: SaKeys,
    *,
    mode: int = IpsecMode.TRANSPORT,
    esn: bool = False,
    reqid: int = 0,
    replay: int = 32,
) -> None:
    """Add one SA through SADB_ADD."""
    send(key_manager, add_message(transform, keys, mode=mode, esn=esn, reqid=reqid, replay=replay))


def add_policy(
    key_manager: KeyManager,
    direction: int,
    src: str,
    dst: str,
    *,
    mode: int = IpsecMode.TRANSPORT,
    tunnel: tuple[str, str] | None = None,
    reqid: int = 0,
) -> None:
    """Add one policy through SADB_X_SPDADD."""
    send(
        key_manager,
        spdadd_message(direction, src, dst, mode=mode, tunnel=tunnel, reqid=reqid),
    )


OUTBOUND_SPI = 0x0000_1001
INBOUND_SPI = 0x0000_2002


def build_link(
    transform: Transform | str,
    mode: int = IpsecMode.TRANSPORT,
    version: int = 4,
    esn: bool = False,
    *,
    replay: int = 32,
    spis: tuple[int, int] = (OUTBOUND_SPI, INBOUND_SPI),
) -> Link:
    """A new key manager with the outbound and inbound SA of ``transform`` (SPIs
    ``spis``) and the two policies that select them, for plaintext between the local and
    peer hosts (transport mode) or between the networks behind them (tunnel mode)."""
    if isinstance(transform, str):
        transform = TRANSFORMS[transform]
    hosts = HOSTS[version]
    key_manager = KeyManager()
    outbound = sa_keys(transform, spis[0], hosts.local, hosts.peer)
    inbound = sa_keys(transform, spis[1], hosts.peer, hosts.local)
    add_sa(key_manager, transform, outbound, mode=mode, esn=esn, reqid=1, replay=replay)
    add_sa(key_manager, transform, inbound, mode=mode, esn=esn, reqid=2, replay=replay)
    if mode == IpsecMode.TUNNEL:
        local_sel, peer_sel = hosts.local_net, hosts.peer_net
        local_addr, peer_addr = hosts.local_host, hosts.peer_host
        out_tunnel: tuple[str, str] | None = (hosts.local, hosts.peer)
        in_tunnel: tuple[str, str] | None = (hosts.peer, hosts.local)
    else:
        local_sel, peer_sel = _host_prefix(hosts.local), _host_prefix(hosts.peer)
        local_addr, peer_addr = hosts.local, hosts.peer
        out_tunnel = in_tunnel = None
    add_policy(
        key_manager, IpsecDir.OUTBOUND, local_sel, peer_sel, mode=mode, tunnel=out_tunnel, reqid=1
    )
    add_policy(
        key_manager, IpsecDir.INBOUND, peer_sel, local_sel, mode=mode, tunnel=in_tunnel, reqid=2
    )
    return Link(
        key_manager, transform, mode, version, esn, outbound, inbound, local_addr, peer_addr
    )


def _host_prefix(ip: str) -> str:
    address = ip_address(ip)
    return f"{address}/{address.max_prefixlen}"
