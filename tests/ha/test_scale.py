"""Seed 004's figure on PostgreSQL (issue 23, item 6): 10,000 SAs added through an active
keyd (64 in flight, each acknowledged), loaded whole by a standby started after them,
held through a takeover with every checkpoint raised, and 2,000 more added through the
new active. What this costs is measured by ``python -m bench.keyd_pg``, not asserted here;
this checks that nothing is lost or refused at that scale."""

import errno

from bench.sa_add import adds, choose, through_socket, warmup
from cryptoapi import Registry
from cryptoapi.pfkey.daemon.checkpoint import MARGIN
from cryptoapi.pfkey.daemon.client import PfkeyClient, fields
from tests.ha.keyds import WAIT, client, held, keyd, kill9, role, sequences, wait_for
from tests.pfkey.keyd import short_dir

LOADED, MORE = 10_000, 2_000
WINDOW = 64


def test_ten_thousand_sas_survive_a_takeover_and_two_thousand_more_are_added(database):
    satype, encrypt, _ = choose(Registry(selftests="off"))
    messages = adds(LOADED + MORE, satype, encrypt)
    with short_dir() as where, keyd(where, "a", database) as first:
        with PfkeyClient(f"{where}/a.sock", timeout=WAIT * 3) as pfkey:
            assert pfkey.request(warmup(satype, encrypt))[0][2] == 0
            through_socket(pfkey, messages[:LOADED], WINDOW)  # each acknowledged
            before = held(pfkey)
        assert len(before) == LOADED + 1
        with keyd(where, "b", database, "--standby"):
            standby = PfkeyClient(f"{where}/b.sock", timeout=WAIT * 3)
            wait_for(lambda: role(where, "b") == "standby")
            assert held(standby) == before  # loaded whole at its start
            assert fields(standby.request(messages[LOADED])[0])[1] == errno.EROFS
            kill9(first)
            wait_for(lambda: role(where, "b") == "active", timeout=WAIT * 2)
            assert held(standby) == before
            assert set(sequences(standby).values()) == {MARGIN}  # every one raised
            through_socket(standby, messages[LOADED:], WINDOW)
            after = held(standby)
            standby.close()
        assert len(after) == LOADED + MORE + 1
        with keyd(where, "c", database, "--standby"):  # the database holds them all
            assert held(client(where, "c")) == after
