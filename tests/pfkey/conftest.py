"""Fixtures for the PF_KEY tests: an isolated registry with stand-in ciphers, a drivable
clock, a key manager, and builders of the messages the tests send."""

import random
from typing import Any

import pytest

import cryptoapi
from cryptoapi import AlgType
from cryptoapi.pfkey import (
    Address,
    ExtType,
    IpsecRequest,
    Key,
    KeyManager,
    Lifetime,
    Message,
    MsgType,
    Policy,
    Sa,
    Sa2,
    SaType,
    SecCtx,
    SockAddr,
    SpiRange,
    decode,
)

# name -> (type, min_keysize, max_keysize, ivsize): the sizes the kernel's ESP forms take,
# salt or nonce included (rfc4106: 16/24/32 + 4 bytes).
STANDINS = {
    "cbc(aes)": (AlgType.SKCIPHER, 16, 32, 16),
    "rfc3686(ctr(aes))": (AlgType.SKCIPHER, 20, 36, 8),
    "rfc4309(ccm(aes))": (AlgType.AEAD, 19, 35, 8),
    "rfc4106(gcm(aes))": (AlgType.AEAD, 20, 36, 8),
    "rfc4543(gcm(aes))": (AlgType.AEAD, 20, 36, 8),
    "rfc7539esp(chacha20,poly1305)": (AlgType.AEAD, 36, 36, 8),
    "xcbc(aes)": (AlgType.SHASH, 16, 16, 0),
}


class CountingRegistry(cryptoapi.Registry):
    """An isolated registry that counts the lookups made from outside (not the ones its
    templates make) and acts as if the ``hidden`` names did not exist, whatever providers
    the project has by now."""

    def __init__(self, hidden=()) -> None:
        super().__init__(selftests="off")
        self.lookups: dict[str, int] = {}
        self.hidden = frozenset(hidden)
        self._depth = 0

    def lookup(self, name, type=None):
        if self._depth == 0:
            self.lookups[name] = self.lookups.get(name, 0) + 1
        if name in self.hidden:
            raise cryptoapi.AlgorithmNotFound(f"{name} is hidden in this test")
        self._depth += 1
        try:
            return super().lookup(name, type)
        finally:
            self._depth -= 1


def standin(name, type_, low, high, iv, driver=None, priority=1000):
    """A record that exists only to be found: the key manager probes, it never encrypts."""
    return cryptoapi.Algorithm(
        name=name,
        driver=driver or "standin-" + name.replace("(", "-").replace(")", "").replace(",", "-"),
        type=type_,
        priority=priority,
        provider="pfkey-tests",
        create=lambda: None,
        min_keysize=low,
        max_keysize=high,
        ivsize=iv,
        keyed=type_ is AlgType.SHASH,
    )


LEGACY_CBC = ("cbc(des3_ede)", "cbc(cast5)", "cbc(blowfish)", "cbc(camellia)")
"""The legacy IPsec ciphers, which the project has (through cryptography/pycryptodome)."""


def make_registry(names=tuple(STANDINS), *, legacy=True):
    """Hashes and hmac as the project has them; stand-ins for ``names``; the legacy CBC
    ciphers unless ``legacy`` is false; the other cipher names of the SADB table absent."""
    hidden = set(STANDINS) - set(names) | (set() if legacy else set(LEGACY_CBC))
    registry = CountingRegistry(hidden=hidden)
    for name in names:
        registry.register(standin(name, *STANDINS[name]))
    return registry


class Clock:
    """A clock the tests move by hand."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def registry():
    return make_registry()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def where():
    """A short temporary directory (a Unix socket path must fit in 108 bytes)."""
    from .keyd import short_dir

    with short_dir() as path:
        yield path


@pytest.fixture
def km(registry, clock):
    return KeyManager(registry, clock=clock, rng=random.Random(7))


SRC = "10.0.0.1"
DST = "10.0.0.2"
AUTH_KEY = bytes(range(32))
ENC_KEY = bytes(range(100, 116))


def address(exttype, ip, port=0):
    sockaddr = SockAddr.of(ip, port)
    return Address(exttype, sockaddr, 0, 32 if len(sockaddr.addr) == 4 else 128)


def sa_message(
    spi: int,
    *,
    type: int = MsgType.ADD,
    satype: int = SaType.ESP,
    auth: int = 5,
    encrypt: int = 12,
    auth_key: bytes | None = AUTH_KEY,
    enc_key: bytes | None = ENC_KEY,
    src: str = SRC,
    dst: str = DST,
    seq: int = 1,
    pid: int = 4242,
    replay: int = 32,
    hard: tuple[int, int, int, int] | None = None,
    soft: tuple[int, int, int, int] | None = None,
    sa2: tuple[int, ...] | None = (1, 0),
    extra: tuple[Any, ...] = (),
) -> bytes:
    """An ADD (or UPDATE) message; a key of None leaves that extension out."""
    exts = [Sa(spi, replay, 1, auth, encrypt), address(5, src), address(6, dst)]
    if hard is not None:
        exts.append(Lifetime(ExtType.LIFETIME_HARD, *hard))
    if soft is not None:
        exts.append(Lifetime(ExtType.LIFETIME_SOFT, *soft))
    if auth_key is not None:
        exts.append(Key(ExtType.KEY_AUTH, 8 * len(auth_key), auth_key))
    if enc_key is not None:
        exts.append(Key(ExtType.KEY_ENCRYPT, 8 * len(enc_key), enc_key))
    if sa2 is not None:
        exts.append(Sa2(*sa2))
    exts.extend(extra)
    return Message(type, satype, seq, pid, 0, tuple(exts)).encode()


def usage_report(
    spi, *, nbytes=0, packets=0, usetime=0, sequence=None, received=False, src=SRC, extra=()
):
    """The X_USAGE espd sends: the current lifetime (allocations are packets, as Linux) and
    the checkpoint (``received``: an inbound SA's highest number received)."""
    exts = [
        Sa(spi),
        Lifetime(ExtType.LIFETIME_CURRENT, packets, nbytes, 0, usetime),
        address(5, src),
        address(6, DST),
        *extra,
    ]
    if sequence is not None:
        exts.append(Sa2(1, 0, sequence, received))
    return Message(MsgType.X_USAGE, SaType.ESP, 9, 4343, 0, tuple(exts)).encode()


def lookup_message(type, spi, *, satype=SaType.ESP, src=SRC, dst=DST, seq=2, pid=4242):
    """A DELETE or GET message: <base, SA, address(SD)>."""
    exts = (Sa(spi), address(5, src), address(6, dst))
    return Message(type, satype, seq, pid, 0, exts).encode()


def header(type, satype=SaType.ESP, seq=3, pid=4242):
    return Message(type, satype, seq, pid).encode()


def replies_of(km, data):
    """The decoded replies of one message."""
    return [decode(r) for r in km.handle(data)]


def only(km, data):
    """The one decoded reply of one message."""
    out = replies_of(km, data)
    assert len(out) == 1, out
    return out[0]


def refused(km, data, code):
    """Handle ``data``; assert a header-only reply with ``code`` and an unchanged database."""
    before = km.sad.snapshot()
    reply = only(km, data)
    assert reply.errno == code, reply
    assert reply.extensions == ()
    assert km.sad.snapshot() == before
    return reply


def getspi(km, low=None, high=None, seq=5, dst=DST):
    exts = [address(5, SRC), address(6, dst)]
    if low is not None:
        exts.append(SpiRange(low, high))
    return only(km, Message(MsgType.GETSPI, SaType.ESP, seq, 4242, 0, tuple(exts)).encode())


def getspi_message(low, high):
    exts = (address(5, SRC), address(6, DST), SpiRange(low, high))
    return Message(MsgType.GETSPI, SaType.ESP, 1, 1, 0, exts).encode()


def dump_seqs(count):
    """The ``sadb_msg_seq`` of the ``count`` messages of a Linux DUMP or SPDDUMP: 1, 2, ...
    and 0 on the last (af_key.c ``dump_sa``/``dump_sp`` give count + 1, and
    ``pfkey_do_dump`` zeroes the last one's)."""
    return [*range(1, count), 0]


# SPD messages (SADB_X_SPDADD ... SPDDUMP) and the SPD as a comparable list

ESP_TRANSPORT = IpsecRequest(50, 1, 2)
TUNNEL = IpsecRequest(50, 2, 3, 7, (SockAddr.of("192.0.2.1"), SockAddr.of("192.0.2.2")))
DEFAULT_PRIORITY = 0x80000000


def spd(
    type=MsgType.X_SPDADD,
    *,
    dir=2,
    src="10.0.0.0",
    dst="10.1.0.0",
    splen=24,
    dplen=16,
    proto=255,
    ptype=2,
    priority=DEFAULT_PRIORITY,
    requests=(ESP_TRANSPORT,),
    id=0,
    ctx=None,
    extra=(),
    seq=11,
    pid=77,
):
    exts = [
        Policy(ptype, dir, id, priority, requests),
        Address(ExtType.ADDRESS_SRC, SockAddr.of(src), proto, splen),
        Address(ExtType.ADDRESS_DST, SockAddr.of(dst), proto, dplen),
        *extra,
    ]
    if ctx is not None:
        exts.append(SecCtx(1, 1, ctx))
    return Message(type, 0, seq, pid, 0, tuple(exts)).encode()


def by_id(type, id, seq=12):
    return Message(type, 0, seq, 77, 0, (Policy(2, 0, id),)).encode()


def spd_state(km):
    return [(p.index, p.selector, p.type, p.priority, p.requests) for p in km.spd]


def refused_spd(km, data, code):
    before = spd_state(km)
    reply = only(km, data)
    assert (reply.errno, reply.extensions) == (code, ())
    assert spd_state(km) == before
    return reply
