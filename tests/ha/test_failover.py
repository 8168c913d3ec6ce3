"""The failover, end to end (issue 23, item 5): a TCP stream runs from the host behind a
gateway pair to their peer through the tunnel; the active gateway's keyd and espd are
killed with SIGKILL and its links go down; the standby takes over (its keyd takes the
database's lock, the shared addresses move to it, its espd carries above the raised
checkpoints). The stream completes, byte for byte, with no reset (the source and the sink
would fail); the peer's espd counts no replayed and no unauthenticated packet; no
acknowledged SA is lost; the outage, from the last packet of the old active to the first of
the new one at the peer, is reported (the test's ``outage`` property; ``bench.ha_failover``
prints it). Then the old active comes back as a standby. The topology and the stream are
:mod:`tests.ha.failover`'s."""

import pytest

from tests.esp import netns
from tests.ha import failover
from tests.ha.failover import SIZE, gateway_packets, outage, stream_through_failover
from tests.ha.keyds import client, held, wait_for
from tests.netns import stop
from tests.pfkey.keyd import short_dir

pytestmark = pytest.mark.skipif(netns.unavailable() is not None, reason=str(netns.unavailable()))


def test_the_standby_takes_over_a_running_tcp_stream(database, record_property):
    with short_dir() as where, failover.site(where) as site:
        site.start(database)
        result = stream_through_failover(site, where)
        assert result.received == {"received": SIZE, "sha256": result.sent["sha256"]}
        assert result.counters.get("XfrmInStateSeqError", 0) == 0  # replayed or too old
        assert result.counters.get("XfrmInStateProtoError", 0) == 0  # ICV failed
        assert result.held == result.acknowledged  # no acknowledged SA lost
        assert len(result.held) == 2 + len(failover.EXTRA_SAS)

        a, b = site.gateways
        assert b.carrying() == {"role": "active", "carrying": True, "activations": 1}
        site.restore(database)
        assert a.role() == "standby"
        wait_for(lambda: a.carrying()["role"] == "standby")  # its first question answered
        assert a.carrying() == {"role": "standby", "carrying": False, "activations": 0}
        wait_for(lambda: held(client(where, "a")) == result.acknowledged)
        assert a.espd is not None and a.espd.process.poll() is None

        assert site.peer_espd is not None
        stop(site.peer_espd.process)  # its capture is whole once it has exited
        gap, old, new = outage(gateway_packets(site.pcap))
        assert new > old  # the new active's numbers are above every one of the old's
        record_property("outage", round(gap, 3))
        record_property("takeover", round(result.takeover.active - result.takeover.killed, 3))
