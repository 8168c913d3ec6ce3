"""No (SPI, sequence number) pair is sent twice across a takeover (issue 23, item 3).

Gateway A's data path follows the active keyd, as espd does (:class:`~tests.ha.gateways.Gateway`:
a mirror of keyd's dump, a data path over it, its usage reports, the checkpoints, sent to
keyd); the peer decrypts every packet. keyd A is killed after some packets that no report
followed; the standby takes over, raises every checkpoint by the margin, and gateway B, a
fresh data path with no state of its own (another host), follows it and sends on: every
number it sends is above every number A sent, and the peer's replay window takes them
all. A second takeover before any report raises the checkpoint again (the jumps
accumulate)."""

from cryptoapi.pfkey.daemon.checkpoint import MARGIN
from tests.ha.gateways import Gateway, active_and_standby
from tests.ha.keyds import client, keyd, kill9, role, sequences, wait_for


def test_no_sequence_number_is_sent_twice_across_takeovers(database):
    with active_and_standby(database) as duo:
        where, pair, a, second = duo.where, duo.pair, duo.a, duo.second
        outbound = pair.link.outbound.spi
        before = a.send(pair, 40)
        assert a.checkpoint() == 1  # the outbound SA moved (the inbound one did not)
        checkpoint = sequences(client(where, "a"))[outbound]
        assert checkpoint == 40
        before += a.send(pair, 25)  # not reported: keyd A dies first
        wait_for(lambda: sequences(client(where, "b")).get(outbound) == checkpoint)
        kill9(duo.first)
        wait_for(lambda: role(where, "b") == "active")
        assert sequences(client(where, "b"))[outbound] == checkpoint + MARGIN
        with keyd(where, "c", database, "--standby") as third:
            b = Gateway(client(where, "b"))  # another host: no state of its own
            after = b.send(pair, 30)
            assert {spi for spi, _ in after} == {outbound}
            assert min(seq for _, seq in after) > max(seq for _, seq in before)
            assert min(seq for _, seq in after) == checkpoint + MARGIN + 1
            kill9(second)  # before B's first report: only the jump is in the database
            wait_for(lambda: role(where, "c") == "active")
            assert sequences(client(where, "c"))[outbound] == checkpoint + 2 * MARGIN
            c = Gateway(client(where, "c"))
            last = c.send(pair, 10)
            assert min(seq for _, seq in last) > max(seq for _, seq in before + after)
            sent = before + after + last
            assert len(set(sent)) == len(sent)  # no (SPI, sequence number) twice
            assert third.poll() is None
