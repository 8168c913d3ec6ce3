"""``bench.espd``'s topology, as the anchor's: two namespaces (espA, espB) joined by a veth
pair (eA 198.51.100.11/24, eB 198.51.100.12/24; the anchor's ssA/ssB use .1/.2 and may be
up at the same time), one persistent TUN ``espd0`` in each (MTU 1400, as kernel-libipsec's
``ipsec0``) with the inner address 10.93.1.1 or 10.93.2.1 and a route to the other's /24;
the transforms measured, and each side's setkey file (ESP in UDP 4500 to 4500, tunnel mode,
one SA each way)."""

import hashlib
from dataclasses import dataclass

from tests.netns import Layout, TunnelSa, tunnel_setkey

NAMESPACES = ("espA", "espB")
VETHS = ("eA", "eB")
OUTER = ("198.51.100.11", "198.51.100.12")
INNER = ("10.93.1.1", "10.93.2.1")
NETS = ("10.93.1.0/24", "10.93.2.0/24")
TUN = "espd0"
MTU = 1400
REPLAY = 128
SPIS = (0x1001, 0x2002)  # espA -> espB, espB -> espA
LAYOUT = Layout(
    names=NAMESPACES,
    veths=VETHS,
    outer=OUTER,
    inner=INNER,
    nets=NETS,
    tun=TUN,
    tun_mtu=MTU,
    ipv6_off=("all", "default"),  # no router solicitations on either link
)


@dataclass(frozen=True)
class Transform:
    name: str
    proposal: str  # the anchor's esp_proposals
    enc: str
    enc_key: int  # bytes (with the salt of a combined mode)
    auth: str = ""
    auth_key: int = 0

    def options(self, spi: int) -> str:
        """setkey's algorithm options for the SA ``spi`` (keys derived from it)."""
        text = f"-E {self.enc} 0x{_key(spi, 'enc', self.enc_key)}"
        if self.auth:
            text += f" -A {self.auth} 0x{_key(spi, 'auth', self.auth_key)}"
        return text


TRANSFORMS = {
    t.name: t
    for t in (
        Transform("aes-gcm-16", "aes128gcm16", "aes-gcm-16", 20),
        Transform("aes-cbc-hmac-sha256", "aes128-sha256", "aes-cbc", 16, "hmac-sha256", 32),
        Transform("chacha20-poly1305", "chacha20poly1305", "chacha20-poly1305", 36),
    )
}


def _key(spi: int, use: str, size: int) -> str:
    return hashlib.shake_256(f"bench.espd {spi:#x} {use}".encode()).hexdigest(size)


def setkey_text(transform: Transform, index: int) -> str:
    """The SA pair (the same on both sides) and side ``index``'s (0: espA) mirrored
    tunnel policies."""
    (a, b), (up, down) = OUTER, SPIS
    sas = [
        TunnelSa(src=a, dst=b, spi=up, algorithms=transform.options(up)),
        TunnelSa(src=b, dst=a, spi=down, algorithms=transform.options(down)),
    ]
    return tunnel_setkey(
        sas,
        here=OUTER[index],
        there=OUTER[1 - index],
        net=NETS[index],
        peer_net=NETS[1 - index],
        replay=REPLAY,
    )
