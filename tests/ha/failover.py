"""A gateway pair, its peer and the network behind it, for the failover test and
``bench.ha_failover`` (issue 23, item 5).

Four namespaces (the issue's three, and the host behind the gateways, which a TCP stream
needs: an end on a gateway would die with it)::

    peer: 10.2.0.1 on esp0, br0 192.0.2.1 ─┬─ a: veth0 192.0.2.2, lan0 10.1.0.2 ─┬─ br1: lan
                                           └─ b: veth0 192.0.2.3, lan0 10.1.0.3 ─┘  10.1.0.1

- **peer**: espd from a setkey file (its tunnel ends at the shared address 192.0.2.10), the
  outer bridge ``br0`` both gateways are on, its inner address 10.2.0.1 on its TUN.
- **a**, **b**: each a keyd on the same PostgreSQL database (``a`` active, ``b``
  ``--standby``) and an espd following it with ``--hold-until-active``; a TUN into which
  the peer's network 10.2.0.0/24 is routed, and forwarding on. The active one holds the
  shared addresses: 192.0.2.10 outside (the SAs' end) and 10.1.0.254 inside (the LAN's
  route to the peer).
- **lan**: the host behind the gateways, 10.1.0.1 on the inner bridge ``br1``, its route
  to 10.2.0.0/24 via 10.1.0.254.

:meth:`Site.fail_over` is the failure and what the deployment does after it: kill -9 of
the active gateway's keyd and espd and its links down (the host is gone: it answers no
ARP, and its address goes with it); the standby keyd takes the database's lock; then what
keepalived's ``notify_master`` does (README, "High availability"): the shared addresses
are added on the new active gateway and announced with gratuitous ARP. Its espd carries as
soon as its keyd is active. :meth:`Site.restore` brings the old active back as a standby.

Every address is inside the namespaces; every wait is bounded (:data:`WAIT`).
"""

import contextlib
import hashlib
import itertools
import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptoapi.pfkey.daemon.checkpoint import MARGIN
from cryptoapi.pfkey.daemon.control import query
from tests.esp.keyd import setkey
from tests.esp.netns import read_pcap_timed
from tests.ha.keyds import add, client, held, role
from tests.netns import (
    PYTHON,
    WAIT,
    Espd,
    Namespace,
    TunnelSa,
    namespace,
    run,
    tunnel_setkey,
    wait_for_line,
)
from tests.pfkey.keyd import wait_listening

PEER_OUTER, TUNNEL = "192.0.2.1", "192.0.2.10"
PEER_INNER, PEER_NET = "10.2.0.1", "10.2.0.0/24"
LAN_HOST, LAN_VIP, LAN_NET = "10.1.0.1", "10.1.0.254", "10.1.0.0/24"
OUT_SPI, IN_SPI = 0x1001, 0x2002  # gateway -> peer, peer -> gateway
GATEWAYS = (("a", "192.0.2.2", "10.1.0.2"), ("b", "192.0.2.3", "10.1.0.3"))


def _key(spi: int) -> str:
    return "0x" + hashlib.shake_256(b"failover %d" % spi).hexdigest(20)  # AES-128 + salt


SAS = (
    TunnelSa(TUNNEL, PEER_OUTER, OUT_SPI, f"-E aes-gcm-16 {_key(OUT_SPI)}"),
    TunnelSa(PEER_OUTER, TUNNEL, IN_SPI, f"-E aes-gcm-16 {_key(IN_SPI)}"),
)


@dataclass
class Gateway:
    """One gateway: its namespace, addresses, and its keyd and espd while they run."""

    ns: Namespace
    name: str
    outer: str
    lan: str
    socket: str
    keyd: subprocess.Popen[str] | None = None
    espd: Espd | None = None

    def start(self, url: str, *keyd_options: str) -> None:
        """Its keyd on ``url`` (waited for), then its espd following it."""
        self.keyd = self.ns.start(
            PYTHON, "-m", "cryptoapi", "keyd", "--socket", self.socket, "--state", url,
            *keyd_options,
        )  # fmt: skip
        wait_listening(self.socket, self.keyd)
        espd = self.ns.start(
            PYTHON, "-m", "cryptoapi", "espd", "--tun", "esp0", "--socket", self.socket,
            "--hold-until-active", "--seq-state", f"{self.socket}.seq",
        )  # fmt: skip
        self.espd = Espd(espd).ready()

    def carrying(self) -> dict[str, Any]:
        """What its espd says of the keyd it follows (``espd-status``: role, carrying)."""
        ha: dict[str, Any] = query(f"{self.socket}.ctl", WAIT)["keyd"]["ha"]
        return ha

    def role(self) -> str:
        where, name = self.socket.rsplit("/", 1)
        return role(where, name.removesuffix(".sock"))

    def take_addresses(self) -> None:
        """What keepalived's ``notify_master`` does: the shared addresses here, announced."""
        self.ns.ip("addr", "add", f"{TUNNEL}/24", "dev", "veth0")
        self.ns.ip("addr", "add", f"{LAN_VIP}/24", "dev", "lan0")
        announce = [
            self.ns.start(PYTHON, "-m", "tests.esp.netns", "garp", "--iface", iface,
                          "--address", address)
            for iface, address in (("veth0", TUNNEL), ("lan0", LAN_VIP))
        ]  # fmt: skip
        for process in announce:
            process.wait(WAIT)

    def die(self) -> None:
        """The host fails: kill -9 of its keyd and espd, its links down."""
        for process in (self.keyd, self.espd.process if self.espd else None):
            if process is not None:
                process.kill()
        for process in (self.keyd, self.espd.process if self.espd else None):
            if process is not None:
                process.wait(WAIT)
        for link in ("veth0", "lan0"):
            self.ns.ip("link", "set", link, "down")
        self.ns.ip("addr", "flush", "dev", "veth0", "to", f"{TUNNEL}/32")
        self.ns.ip("addr", "flush", "dev", "lan0", "to", f"{LAN_VIP}/32")

    def revive(self, url: str) -> None:
        """The host is back: links up, keyd as a standby, espd holding."""
        for link in ("veth0", "lan0"):
            self.ns.ip("link", "set", link, "up")
        self.start(url, "--standby")


@dataclass
class Takeover:
    """When the failover's steps happened (``time.monotonic()``)."""

    killed: float
    active: float  # the standby keyd said it is active
    moved: float  # the shared addresses were added and announced


@dataclass
class Site:
    """The four namespaces, the peer's espd (its ESP capture at ``pcap``), the gateways."""

    peer: Namespace
    lan: Namespace
    gateways: tuple[Gateway, Gateway]
    work: Path
    pcap: Path
    peer_espd: Espd | None = None
    probes: list[subprocess.Popen[str]] = field(default_factory=list)

    def start(self, url: str) -> None:
        """keyd and espd on both gateways (``a`` active, with the shared addresses), the
        SAs and policies given to the active keyd, and the peer's espd."""
        a, b = self.gateways
        a.start(url)
        b.start(url, "--standby")
        setkey(a.socket, tunnel_setkey(SAS, here=TUNNEL, there=PEER_OUTER, net=LAN_NET,
                                       peer_net=PEER_NET, replay=64))  # fmt: skip
        a.take_addresses()
        conf = self.work / "peer.conf"
        conf.write_text(tunnel_setkey(SAS, here=PEER_OUTER, there=TUNNEL, net=PEER_NET,
                                      peer_net=LAN_NET, replay=64))  # fmt: skip
        self.peer_espd = Espd(self.peer.start(
            PYTHON, "-m", "cryptoapi", "espd", "--tun", "esp0", "-f", str(conf),
            "--seq-state", str(self.work / "peer.seq"), "--pcap", str(self.pcap),
        )).ready()  # fmt: skip

    def fail_over(self) -> Takeover:
        """Gateway ``a`` fails; ``b`` takes over (see the module doc)."""
        a, b = self.gateways
        killed = time.monotonic()
        a.die()
        deadline = killed + WAIT
        while b.role() != "active":
            assert time.monotonic() < deadline, "the standby keyd did not take over"
            time.sleep(0.005)
        active = time.monotonic()
        b.take_addresses()
        return Takeover(killed, active, time.monotonic())

    def restore(self, url: str) -> None:
        """The old active comes back, as a standby."""
        self.gateways[0].revive(url)


@contextlib.contextmanager
def site(where: str) -> Iterator[Site]:
    """The namespaces, links and routes of the module doc; keyd sockets in ``where`` (a
    short directory). Nothing is started yet (:meth:`Site.start`)."""
    with contextlib.ExitStack() as stack:
        peer, lan, a, b = (stack.enter_context(namespace(tag)) for tag in ("p", "l", "a", "b"))
        for ns in (peer, lan, a, b):
            ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1")
            ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1")
        _bridge(peer, "br0", f"{PEER_OUTER}/24")
        _bridge(lan, "br1", f"{LAN_HOST}/24")
        lan.ip("route", "add", PEER_NET, "via", LAN_VIP)
        _tun(peer)
        peer.ip("addr", "add", f"{PEER_INNER}/32", "dev", "esp0")
        peer.ip("route", "add", LAN_NET, "dev", "esp0", "src", PEER_INNER)
        gateways = tuple(
            _gateway(ns, name, outer, lan_address, (peer, lan), where)
            for ns, (name, outer, lan_address) in zip((a, b), GATEWAYS, strict=True)
        )
        yield Site(peer, lan, (gateways[0], gateways[1]), Path(where), Path(where) / "peer.pcap")


def _bridge(ns: Namespace, name: str, address: str) -> None:
    ns.ip("link", "add", name, "type", "bridge")
    ns.ip("addr", "add", address, "dev", name)
    ns.ip("link", "set", name, "up")


def _tun(ns: Namespace) -> None:
    ns.ip("tuntap", "add", "dev", "esp0", "mode", "tun")
    ns.ip("link", "set", "esp0", "up")


def _gateway(
    ns: Namespace, name: str, outer: str, lan: str, switches: tuple[Namespace, Namespace],
    where: str,
) -> Gateway:  # fmt: skip
    """A gateway's links (a port on each bridge), addresses, TUN, route and forwarding."""
    for switch, bridge, link, address in zip(
        switches, ("br0", "br1"), ("veth0", "lan0"), (outer, lan), strict=True
    ):
        port = f"{link[:3]}{name}"
        run("ip", "link", "add", port, "netns", switch.name, "type", "veth",
            "peer", "name", link, "netns", ns.name)  # fmt: skip
        switch.ip("link", "set", port, "master", bridge, "up")
        ns.ip("addr", "add", f"{address}/24", "dev", link)
        ns.ip("link", "set", link, "up")
    ns.sysctl("net.ipv4.ip_forward", "1")
    _tun(ns)
    ns.ip("route", "add", PEER_NET, "dev", "esp0")
    return Gateway(ns, name, outer, lan, f"{where}/{name}.sock")


# -- a stream through the failover --------------------------------------------------------

RATE = 6 << 20
"""Bytes a second the stream carries: it lasts 4 s, and the failure comes after 1.5 s."""
SIZE = 4 * RATE
EXTRA_SAS = range(0x30000, 0x30000 + 100)
"""SPIs of SAs added (each acknowledged) just before the failure."""


@dataclass
class Failover:
    """What a stream through the failover showed: the takeover's times, the source's and
    the sink's results, the SAs the old active had acknowledged and those the new one holds
    (:func:`~tests.ha.keyds.held`), and the peer espd's counters."""

    takeover: Takeover
    sent: dict[str, Any]
    received: dict[str, Any]
    acknowledged: dict[int, tuple[object, ...]]
    held: dict[int, tuple[object, ...]]
    counters: dict[str, int]


def stream_through_failover(site: Site, where: str) -> Failover:
    """A paced TCP stream from the LAN host to the peer, and a 5 ms UDP probe beside it
    (each gap in the gateways' packets then shows within 5 ms); 1.5 s in, 100 more SAs are
    acknowledged by the active keyd, and gateway ``a`` fails (:meth:`Site.fail_over`)."""
    sink = site.peer.start(PYTHON, "-m", "tests.esp.netns", "tcp-sink", "--bind", PEER_INNER,
                           "--timeout", str(WAIT * 2))  # fmt: skip
    assert sink.stdout is not None
    wait_for_line(sink.stdout.fileno(), "ready")
    source = site.lan.start(
        PYTHON, "-m", "tests.esp.netns", "tcp-source", "--src", LAN_HOST, "--dst", PEER_INNER,
        "--bytes", str(SIZE), "--rate", str(RATE), "--timeout", str(WAIT * 2),
    )  # fmt: skip
    probe = site.lan.start(PYTHON, "-m", "tests.esp.netns", "udp-probe", "--src", LAN_HOST,
                           "--dst", PEER_INNER, "--duration", "3")  # fmt: skip
    time.sleep(1.5)
    pfkey = client(where, "a")
    assert [add(pfkey, spi) for spi in EXTRA_SAS] == [0] * len(EXTRA_SAS)
    acknowledged = held(pfkey)
    takeover = site.fail_over()
    sent, received = (_result(process, what) for process, what in
                      ((source, "the stream's source"), (sink, "the stream's sink")))  # fmt: skip
    _result(probe, "the probe")
    assert site.peer_espd is not None
    counters = site.peer_espd.stats()
    return Failover(takeover, sent, received, acknowledged, held(client(where, "b")), counters)


def _result(process: subprocess.Popen[str], what: str) -> dict[str, Any]:
    """A tool's JSON result once it has exited (bounded); AssertionError if it failed."""
    out, err = process.communicate(timeout=WAIT * 2)
    assert process.returncode == 0, f"{what} failed: {err.strip()}"
    result: dict[str, Any] = json.loads(out.splitlines()[-1])
    return result


# -- the peer's view ---------------------------------------------------------------------


def gateway_packets(pcap: Path) -> list[tuple[float, int]]:
    """(time, sequence number) of each ESP packet the peer's espd received from the
    gateways (SPI ``OUT_SPI``), in the order received."""
    _, records = read_pcap_timed(pcap)
    found = []
    for when, packet in records:
        header = (packet[0] & 0x0F) * 4
        esp = packet[header + 8 :] if packet[9] == 17 else packet[header:]  # UDP/4500
        if packet[12:16] == bytes(map(int, TUNNEL.split("."))) and len(esp) >= 8:
            spi, seq = int.from_bytes(esp[:4], "big"), int.from_bytes(esp[4:8], "big")
            if spi == OUT_SPI:
                found.append((when, seq))
    return found


def outage(packets: list[tuple[float, int]]) -> tuple[float, int, int]:
    """(seconds, last sequence number of the old active, first of the new): the takeover is
    where the numbers jump most (by about the margin, the old active's unreported numbers
    less); AssertionError if they never jump (the new active was not heard)."""
    pairs = list(itertools.pairwise(packets))
    assert pairs, "the peer received nearly nothing from the gateways"
    (before, old), (after, new) = max(pairs, key=lambda pair: pair[1][1] - pair[0][1])
    assert new - old > MARGIN // 2, f"no takeover's jump in the numbers (at most {new - old})"
    return after - before, old, new
