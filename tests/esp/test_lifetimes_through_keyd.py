"""Byte and packet lifetimes set by a key manager, end to end (issue 22, point 4).

An IKE daemon, not setkey, keys a real deployment, and racoon only ever sets time
lifetimes; here a PF_KEY client plays the IKE daemon of both sides. In two network
namespaces, each with keyd and an espd following it, the client REGISTERs with a's keyd
for ESP and ADDs an SA pair to both keyds, a's outbound SA with a soft and a hard limit
(bytes, or separately packets). Then, as RFC 2367 §3.1.8 and an IKE daemon have it:

1. the soft EXPIRE reaches the client when a's espd has sent the soft limit's worth of
   packets (within one packet): espd counts, tells keyd, keyd tells its listeners;
2. on it the client ADDs a new SA pair (new SPIs) to both keyds; traffic moves to the new
   outbound SA and goes on past the old SA's hard limit, every ping answered, the old SA
   carrying no more than it had;
3. the client DELETEs the old pair (as an IKE daemon does once the new one is in use);
   the new outbound SA's own hard limit stops traffic at the right count and its hard
   EXPIRE reaches the client.

Traffic stays inside the namespaces the test creates; every wait is bounded.
"""

import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from cryptoapi.pfkey import (
    Address,
    EncryptAlg,
    ExtType,
    IpsecMode,
    Key,
    Lifetime,
    Message,
    MsgType,
    PfkeyError,
    Sa,
    Sa2,
    SaType,
    SockAddr,
    decode,
)
from cryptoapi.pfkey.daemon.client import PfkeyClient
from tests.esp import netns
from tests.esp.keyd import keyd, listening, setkey
from tests.esp.netns import Host

REASON = netns.unavailable()
needs_netns = pytest.mark.skipif(REASON is not None, reason=REASON or "")

PACKET = 84
"""Bytes an echo request of the ping tool counts against an SA: the inner IPv4 packet (20
header, 8 ICMP, 56 payload), as Linux counts ``curlft.bytes``."""
GCM_KEY = 20  # rfc4106(gcm(aes)) with AES-128: 16 key bytes and the 4-byte salt
OLD, NEW = (0x1001, 0x2002), (0x3003, 0x4004)  # (a -> b, b -> a) of each generation
SOFT, HARD, NEW_HARD = 4, 8, 10
"""Limits in packets: the old outbound SA's soft and hard, the new one's hard. A byte limit
is set 40 bytes short of that many packets, so that it is crossed inside a packet."""
AFTER_REKEY = HARD - SOFT + 2
"""Pings sent on the new SA: together with the old SA's share, past its hard limit."""


def lifetime(exttype: int, kind: str, packets: int) -> Lifetime:
    """A soft or hard lifetime limiting ``kind`` (``"bytes"`` or ``"packets"``) to
    ``packets`` echo requests (bytes: 40 short of them, crossed inside the last one)."""
    if kind == "packets":
        return Lifetime(exttype, allocations=packets)
    return Lifetime(exttype, nbytes=packets * PACKET - 40)


def packets_to(kind: str, packets: int, used: int) -> int:
    """Echo requests an SA that has carried ``used`` (bytes or packets) still carries under
    the hard ``lifetime(..., kind, packets)``: the one that reaches it is sent, the next is
    not (Linux ``xfrm_state_check_expire``)."""
    wanted = lifetime(ExtType.LIFETIME_HARD, kind, packets)
    if kind == "packets":
        return wanted.allocations - used
    return math.ceil((wanted.nbytes - used) / PACKET)


@dataclass
class Side:
    host: Host
    socket: str  # its keyd's
    control: str  # its espd's status socket


@dataclass
class SaPair:
    """One generation of the tunnel's SAs, as an IKE daemon installs it on both sides."""

    spis: tuple[int, int]
    keys: tuple[bytes, bytes]
    soft: Lifetime | None = None  # a's outbound SA's limits
    hard: Lifetime | None = None

    def messages(self, a: Host, b: Host, *, limited: bool) -> list[Message]:
        """ADD of both SAs (a -> b with the limits if ``limited``: on a's side only)."""
        out, back = self.spis
        limits = (self.soft, self.hard) if limited else ()
        return [_add(out, a.outer, b.outer, self.keys[0], *limits),
                _add(back, b.outer, a.outer, self.keys[1])]  # fmt: skip

    def deletes(self, a: Host, b: Host) -> list[Message]:
        out, back = self.spis
        return [_lookup(MsgType.DELETE, out, a.outer, b.outer),
                _lookup(MsgType.DELETE, back, b.outer, a.outer)]  # fmt: skip


def _addresses(src: str, dst: str) -> tuple[Address, Address]:
    return (Address(ExtType.ADDRESS_SRC, SockAddr.of(src), 0, 32),
            Address(ExtType.ADDRESS_DST, SockAddr.of(dst), 0, 32))  # fmt: skip


def _add(spi: int, src: str, dst: str, key: bytes, *limits: Lifetime | None) -> Message:
    """``<base, SA, lifetime(HS), address(SD), key(E), sa2>``: an AES-GCM-16 tunnel SA."""
    exts = (
        Sa(spi, 64, encrypt=EncryptAlg.X_AES_GCM_ICV16),
        *(found for found in limits if found is not None),
        *_addresses(src, dst),
        Key(ExtType.KEY_ENCRYPT, 8 * len(key), key),
        Sa2(IpsecMode.TUNNEL, 0),
    )
    return Message(MsgType.ADD, SaType.ESP, 0, 0, 0, exts)


def _lookup(kind: int, spi: int, src: str, dst: str) -> Message:
    return Message(kind, SaType.ESP, 0, 0, 0, (Sa(spi), *_addresses(src, dst)))


def _pair(spis: tuple[int, int], kind: str, *, soft: int = 0, hard: int) -> SaPair:
    keys = (os.urandom(GCM_KEY), os.urandom(GCM_KEY))
    soft_limit = lifetime(ExtType.LIFETIME_SOFT, kind, soft) if soft else None
    return SaPair(spis, keys, soft_limit, lifetime(ExtType.LIFETIME_HARD, kind, hard))


def install(client: PfkeyClient, messages: list[Message]) -> None:
    for message in messages:
        (reply,) = client.request(message)
        assert decode(reply).errno == 0, f"{MsgType(message.type).name} refused: {reply!r}"


def status(side: Side) -> dict[int, dict[str, object]]:
    """espd's per-SA view (``cryptoapi espd-status``), by SPI."""
    done = subprocess.run(
        [sys.executable, "-m", "cryptoapi", "espd-status", "--control", side.control],
        capture_output=True, text=True, timeout=netns.WAIT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return {int(str(sa["spi"]), 16): sa for sa in json.loads(done.stdout)["sas"]}


def wait_installed(sides: tuple[Side, Side], spis: tuple[int, int]) -> None:
    """Until both espds have both SAs of a generation (keyd's ADD broadcasts followed)."""
    deadline = time.monotonic() + netns.WAIT
    while not all(set(spis) <= set(status(side)) for side in sides):
        assert time.monotonic() < deadline, f"espd never installed SAs {spis}"
        time.sleep(0.1)


def expire(client: PfkeyClient, spi: int, exttype: int, wait: float) -> Message | None:
    """The EXPIRE of ``spi`` reaching ``exttype`` (soft or hard) if it comes within ``wait``
    seconds; other broadcasts (ADD, DELETE, ...) are passed over."""
    deadline = time.monotonic() + wait
    while (left := deadline - time.monotonic()) > 0:
        try:
            message = decode(client.notification(timeout=left))
        except PfkeyError:  # ETIMEDOUT
            return None
        sa = message.get(ExtType.SA, Sa)
        is_it = message.type == MsgType.EXPIRE and sa is not None and sa.spi == spi
        if is_it and message.get(exttype, Lifetime) is not None:
            return message
    return None


def used(message: Message, kind: str) -> int:
    """The bytes or packets an EXPIRE's current lifetime says the SA had carried."""
    current = message.get(ExtType.LIFETIME_CURRENT, Lifetime)
    assert current is not None, "an EXPIRE without its current lifetime"
    return current.allocations if kind == "packets" else current.nbytes


@contextmanager
def two_sides() -> Iterator[tuple[Side, Side]]:
    """Both namespaces, each with keyd (the tunnel's policies loaded, no SAs) and an espd
    following it with a status socket."""
    with netns.hosts() as (a, b):
        sides = []
        for host, peer in ((a, b), (b, a)):
            daemon, path = keyd(host, host.ns.name)
            listening(daemon)
            policies = [line for line in netns.tunnel_conf(host, peer).splitlines()
                        if not line.startswith("add ")]  # fmt: skip
            setkey(path, "\n".join(policies))
            control = str(host.work / f"{host.ns.name}-espd.ctl")  # keyd's is {name}.ctl
            sides.append(Side(host, path, control))
        for side in sides:
            side.host.espd("--socket", side.socket, "--control", side.control).ready()
        yield sides[0], sides[1]


@needs_netns
@pytest.mark.parametrize("kind", ["bytes", "packets"])
def test_an_ike_daemon_rekeys_on_the_soft_expire_and_the_hard_limit_stops_traffic(kind):
    with two_sides() as (side_a, side_b), PfkeyClient(side_a.socket, timeout=netns.WAIT) as ike_a:
        a, b = side_a.host, side_b.host
        ike_a.request(Message(MsgType.REGISTER, SaType.ESP))
        old = _pair(OLD, kind, soft=SOFT, hard=HARD)
        with PfkeyClient(side_b.socket, timeout=netns.WAIT) as ike_b:
            install(ike_b, old.messages(a, b, limited=False))
        install(ike_a, old.messages(a, b, limited=True))
        wait_installed((side_a, side_b), OLD)

        # 1. the soft EXPIRE, when the soft limit's worth has gone out (within one packet)
        soft, sent = None, 0
        while soft is None:
            assert sent <= SOFT + 1, f"no soft EXPIRE after {sent} packets"
            assert netns.ping(a, b, count=1) == 1
            sent += 1
            soft = expire(ike_a, OLD[0], ExtType.LIFETIME_SOFT, wait=1.0)
        unit = 1 if kind == "packets" else PACKET
        assert sent in (SOFT, SOFT + 1)  # seen before the next packet, or just after it
        assert SOFT * unit <= used(soft, kind) <= sent * unit  # the packet that crossed it

        # 2. the IKE daemon's new pair: traffic moves to it and goes on past the old hard
        new = _pair(NEW, kind, hard=NEW_HARD)
        with PfkeyClient(side_b.socket, timeout=netns.WAIT) as ike_b:
            install(ike_b, new.messages(a, b, limited=False))  # the responder's inbound first
        install(ike_a, new.messages(a, b, limited=True))
        wait_installed((side_a, side_b), NEW)
        assert netns.ping(a, b, count=AFTER_REKEY) == AFTER_REKEY
        sas = status(side_a)
        assert sas[OLD[0]]["packets"] == sent  # DYING: chosen after the new MATURE one
        assert sas[NEW[0]]["packets"] == AFTER_REKEY
        assert sent + AFTER_REKEY > HARD  # more than the old SA's hard limit allowed
        assert status(side_b)[NEW[0]]["packets"] == AFTER_REKEY  # and b took them on it

        # 3. the old pair deleted, the new SA's hard limit stops traffic at its count
        with PfkeyClient(side_b.socket, timeout=netns.WAIT) as ike_b:
            install(ike_b, old.deletes(a, b))
        install(ike_a, old.deletes(a, b))
        on_new = sas[NEW[0]]["bytes" if kind == "bytes" else "packets"]
        assert isinstance(on_new, int)
        left = packets_to(kind, NEW_HARD, on_new)
        assert netns.ping(a, b, count=left + 3, timeout=3) == left
        hard = expire(ike_a, NEW[0], ExtType.LIFETIME_HARD, wait=netns.WAIT)
        assert hard is not None, "keyd never passed on the new SA's hard EXPIRE"
        assert used(hard, kind) == on_new + left * unit
        assert netns.ping(a, b, count=1, timeout=1) == 0  # nothing left to carry it
        assert NEW[0] not in status(side_a)
