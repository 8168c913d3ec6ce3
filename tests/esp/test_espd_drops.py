"""espd end to end, with a wrong key on one side: the ping does not cross, and the receiving
espd says why on standard error, once (rate-limited), naming the SPI and the peer, while its
counter counts every packet (see :mod:`cryptoapi.esp.droplog`). Needs network namespaces
(skipped with the reason otherwise)."""

import hashlib

import pytest

from tests.esp import netns

REASON = netns.unavailable()
needs_netns = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def tunnel_key(spi: int, size: int) -> str:
    """The key :func:`~tests.esp.netns.tunnel_conf` gives ``spi`` (derived from it)."""
    return "0x" + hashlib.shake_256(b"espd test %d" % spi).hexdigest(size)


@needs_netns
def test_a_wrong_key_is_said_once_naming_the_spi_and_the_peer():
    with netns.hosts() as (a, b):
        right = netns.tunnel_conf(b, a)
        good = tunnel_key(0x1001, 20)  # a -> b, AES-GCM-16: b's copy of the key differs
        assert good in right
        wrong = right.replace(good, "0x" + "5a" * 20)
        espd_a = a.espd("-f", a.conf(netns.tunnel_conf(a, b)))
        espd_b = b.espd("-f", b.conf(wrong))
        espd_a.ready(), espd_b.ready()
        assert netns.ping(a, b, count=3, timeout=3.0) == 0
        failed = espd_b.stats()["XfrmInStateProtoError"]
        code, _, stderr = espd_b.finish()
    assert code == 0 and failed >= 3
    icv = [line for line in stderr.splitlines() if "ICV failed" in line]
    assert icv == ["espd: ICV failed on SPI 0x1001 from 192.0.2.1: keys differ?"], stderr
