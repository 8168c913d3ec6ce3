"""Inbound windows and usage across a takeover (issue 23, item 3).

Gateway A takes packets from the peer and reports them: its report marks the checkpoint
received (an inbound SA's highest number), which keyd keeps apart from the sent one and
never raises. After the takeover, gateway B (another host, no state of its own) starts
that SA's replay window there: a packet A accepted, replayed to B, is refused; the peer's
next one is taken. The counts go on from A's, raised by what A may have carried after its
last report (never under-counted)."""

from cryptoapi.pfkey.daemon.checkpoint import BYTE_MARGIN, PACKET_MARGIN
from tests.ha.gateways import Gateway, active_and_standby
from tests.ha.keyds import client, kill9, packets, role, wait_for


def test_the_new_active_refuses_what_the_old_one_received_and_counts_it(database):
    with active_and_standby(database) as duo:
        where, pair, a = duo.where, duo.pair, duo.a
        inbound = pair.link.inbound.spi
        taken = a.receive(pair, 30)
        assert a.checkpoint() == 1  # the inbound SA moved
        a.receive(pair, 10)  # not reported: keyd A dies first
        wait_for(lambda: packets(client(where, "b")).get(inbound) == 30)
        kill9(duo.first)
        wait_for(lambda: role(where, "b") == "active")
        b = Gateway(client(where, "b"))
        for replayed in (taken[0], taken[-1]):  # below and at the checkpoint: refused
            assert b.datapath.input(replayed) is None
        assert b.datapath.stats()["XfrmInStateSeqError"] == 2
        b.receive(pair, 5)  # the peer goes on (numbers 41 to 45): taken
        counted = packets(client(where, "b"))[inbound]
        assert counted == 30 + PACKET_MARGIN >= 40  # never under the 40 A took
        local = b.key_manager.sad.by_key
        [sa] = [sa for sa in local.values() if sa.spi == inbound]
        assert sa.received == 30
        assert sa.nbytes >= BYTE_MARGIN
