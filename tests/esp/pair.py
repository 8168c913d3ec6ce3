"""Two data paths that talk to each other: the local one of a :class:`~tests.esp.sas.Link`
and a peer with the same two SAs and the mirrored policies."""

from dataclasses import dataclass

from cryptoapi.esp import Datapath
from cryptoapi.pfkey import IpsecDir, IpsecMode, KeyManager
from tests.esp import sas
from tests.esp.conftest import udp_packet


@dataclass
class Pair:
    link: sas.Link
    local: Datapath
    peer: Datapath
    peer_manager: KeyManager


def build_pair(
    transform: str = "aes-gcm-16",
    mode: int = IpsecMode.TUNNEL,
    version: int = 4,
    esn: bool = False,
    *,
    replay: int = 32,
    encap_port: int | None = None,
) -> Pair:
    link = sas.build_link(transform, mode, version, esn, replay=replay)
    peer = KeyManager(link.key_manager.registry)
    hosts = link.hosts
    t = link.transform
    sas.add_sa(peer, t, link.outbound, mode=mode, esn=esn, reqid=1, replay=replay)
    sas.add_sa(peer, t, link.inbound, mode=mode, esn=esn, reqid=2, replay=replay)
    to_local: tuple[str, str] | None = None
    to_peer: tuple[str, str] | None = None
    if mode == IpsecMode.TUNNEL:
        local_sel, peer_sel = hosts.local_net, hosts.peer_net
        to_local, to_peer = (hosts.peer, hosts.local), (hosts.local, hosts.peer)
    else:
        bits = 32 if version == 4 else 128
        local_sel, peer_sel = f"{hosts.local}/{bits}", f"{hosts.peer}/{bits}"
    sas.add_policy(
        peer, IpsecDir.OUTBOUND, peer_sel, local_sel, mode=mode, tunnel=to_local, reqid=2
    )
    sas.add_policy(peer, IpsecDir.INBOUND, local_sel, peer_sel, mode=mode, tunnel=to_peer, reqid=1)
    return Pair(
        link,
        Datapath(link.key_manager, encap_port=encap_port),
        Datapath(peer, encap_port=encap_port),
        peer,
    )


def stray_tunnel(pair: Pair) -> bytes:
    """Make the peer of a tunnel-mode pair tunnel 192.0.2.128/25 to the local network too
    (its outbound policy, SA 2), which no local inbound policy covers; a plaintext packet
    from 192.0.2.200 that it then protects: it decrypts fine here and fails the SPD check."""
    hosts = pair.link.hosts
    sas.send(
        pair.peer_manager,
        sas.spdadd_message(
            IpsecDir.OUTBOUND, "192.0.2.128/25", hosts.local_net, mode=IpsecMode.TUNNEL,
            tunnel=(hosts.peer, hosts.local), reqid=2,
        ),
    )  # fmt: skip
    return udp_packet("192.0.2.200", hosts.local_host, b"spoofed")
