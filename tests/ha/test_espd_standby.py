"""espd on the standby gateway (issue 23, item 4): it follows the standby keyd and carries
nothing (:class:`~cryptoapi.esp.espd.role.KeydRole`) until that keyd is active; then it
follows keyd anew, its first packet goes above the checkpoint the takeover raised, and its
packet count goes on from the old active's, raised by what that one may have carried
unreported (keyd takes a report as a total)."""

from cryptoapi.esp.espd.follower import Follower
from cryptoapi.esp.espd.mirror import Mirror
from cryptoapi.esp.espd.role import KeydRole
from cryptoapi.pfkey import KeyManager
from cryptoapi.pfkey.daemon.checkpoint import MARGIN, PACKET_MARGIN
from tests.ha.gateways import Gateway, active_and_standby
from tests.ha.keyds import client, kill9, packets, role, sequences, wait_for


def test_a_standby_espd_carries_nothing_until_its_keyd_is_active(database):
    with active_and_standby(database) as duo:
        where, pair, a = duo.where, duo.pair, duo.a
        outbound = pair.link.outbound.spi
        before = a.send(pair, 20)
        a.checkpoint()
        wait_for(lambda: sequences(client(where, "b")).get(outbound) == 20)
        key_manager = KeyManager()
        follower = Follower(f"{where}/b.sock", Mirror(key_manager))
        follower.connect()
        standby = KeydRole(f"{where}/b.ctl", follower, poll=0.0)
        standby.poll()
        assert (standby.role, standby.carrying) == ("standby", False)
        assert len(key_manager.sad) == 2  # followed, ready
        kill9(duo.first)
        wait_for(lambda: role(where, "b") == "active")
        standby.poll()
        assert (standby.role, standby.carrying, standby.activations) == ("active", True, 1)
        b = Gateway.over(key_manager, client(where, "b"))
        after = b.send(pair, 5)
        assert min(seq for _, seq in after) == 20 + MARGIN + 1 > max(s for _, s in before)
        assert b.checkpoint() == 2  # both SAs: the takeover raised their counts
        # A's 20 carried over, raised by what A may have carried unreported, then B's 5
        assert packets(client(where, "b"))[outbound] == 20 + PACKET_MARGIN + 5
        follower.close()
