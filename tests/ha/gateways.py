"""Gateways for the HA tests: a data path following a keyd as espd does (a Mirror of
keyd's dump, a Datapath over it, its usage reports sent to keyd), with the peer of a
:func:`~tests.esp.pair.build_pair` that decrypts every packet."""

import contextlib
import struct
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

from cryptoapi.esp import Datapath
from cryptoapi.esp.espd.mirror import Mirror
from cryptoapi.esp.espd.reports import UsageReports
from cryptoapi.pfkey import IpsecDir, IpsecMode, KeyManager, Message, MsgType, SaType
from cryptoapi.pfkey.daemon.client import PfkeyClient, fields
from tests.esp import sas
from tests.esp.conftest import udp_packet
from tests.esp.pair import Pair, build_pair
from tests.ha.keyds import client, keyd
from tests.pfkey.keyd import short_dir


def load(pfkey: PfkeyClient, pair: Pair) -> None:
    """Give keyd the local end's two SAs and two policies (as an IKE daemon would)."""
    link, hosts, tunnel = pair.link, pair.link.hosts, IpsecMode.TUNNEL
    messages = [
        sas.add_message(link.transform, keys, mode=tunnel, esn=False, reqid=reqid)
        for keys, reqid in ((link.outbound, 1), (link.inbound, 2))
    ]
    messages += (
        sas.spdadd_message(IpsecDir.OUTBOUND, hosts.local_net, hosts.peer_net, mode=tunnel,
                           tunnel=(hosts.local, hosts.peer), reqid=1),
        sas.spdadd_message(IpsecDir.INBOUND, hosts.peer_net, hosts.local_net, mode=tunnel,
                           tunnel=(hosts.peer, hosts.local), reqid=2),
    )  # fmt: skip
    for data in messages:
        assert fields(pfkey.request(data)[0])[1] == 0


class Gateway:
    """A data path following one keyd: what espd does, in this process."""

    def __init__(self, pfkey: PfkeyClient) -> None:
        self.pfkey = pfkey
        self.key_manager = KeyManager()
        self.mirror = Mirror(self.key_manager)
        self.mirror.sync_sad(pfkey.request(Message(MsgType.DUMP, SaType.ESP, 0, 0, 0, ())))
        self.mirror.sync_spd(pfkey.request(Message(MsgType.X_SPDDUMP, 0, 0, 0, 0, ())))
        self.datapath = Datapath(self.key_manager)
        self.reports = UsageReports(self.key_manager, self.datapath.states, lambda: 1)

    @classmethod
    def over(cls, key_manager: KeyManager, pfkey: PfkeyClient) -> "Gateway":
        """A gateway whose key manager some other follower keeps (espd's own)."""
        gateway = cls.__new__(cls)
        gateway.pfkey, gateway.key_manager = pfkey, key_manager
        gateway.datapath = Datapath(key_manager)
        gateway.reports = UsageReports(key_manager, gateway.datapath.states, lambda: 1)
        return gateway

    def send(self, pair: Pair, count: int) -> list[tuple[int, int]]:
        """(SPI, sequence number) of ``count`` packets, each decrypted by the peer."""
        link, sent = pair.link, []
        for n in range(count):
            packet = udp_packet(link.local_addr, link.peer_addr, b"packet %d" % n)
            [outer] = self.datapath.output(packet)
            assert pair.peer.input(outer) == packet, f"the peer dropped packet {n}"
            sent.append(struct.unpack_from(">II", outer, 20))
        return sent

    def receive(self, pair: Pair, count: int) -> list[bytes]:
        """``count`` packets from the peer, each taken by this data path: the ESP packets
        (to replay later)."""
        link, taken = pair.link, []
        for n in range(count):
            packet = udp_packet(link.peer_addr, link.local_addr, b"reply %d" % n)
            [outer] = pair.peer.output(packet)
            assert self.datapath.input(outer) == packet, f"dropped the peer's packet {n}"
            taken.append(outer)
        return taken

    def checkpoint(self) -> int:
        """Send the usage reports (the checkpoints) and wait for keyd's answers (it has
        committed them first); how many."""
        return self.reports.send(self._report, final=True)

    def _report(self, data: bytes) -> bool:
        assert fields(self.pfkey.request(data)[0])[1] == 0
        return True


@dataclass
class Duo:
    """Two keyds on one database, ``a`` active (``first``) and ``b`` standing by
    (``second``), their sockets in ``where``; the pair whose SAs ``a`` holds, and gateway A
    following it."""

    where: str
    first: subprocess.Popen[bytes]
    second: subprocess.Popen[bytes]
    pair: Pair
    a: Gateway


@contextlib.contextmanager
def active_and_standby(database: str) -> Iterator[Duo]:
    """A :class:`Duo` on ``database``, an AES-GCM tunnel-mode pair given to keyd ``a``."""
    pair = build_pair("aes-gcm-16", IpsecMode.TUNNEL)
    with (
        short_dir() as where,
        keyd(where, "a", database) as first,
        keyd(where, "b", database, "--standby") as second,
    ):
        load(client(where, "a"), pair)
        yield Duo(where, first, second, pair, Gateway(client(where, "a")))
