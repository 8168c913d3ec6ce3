"""Selection beside the tables (issue 25, item 3): the SPD's selector match and policy
lookup (:mod:`cryptoapi.pfkey.db.selector`) and the SAD's state find
(:mod:`cryptoapi.pfkey.db.statefind`) work on any packet description, not only the data
path's ``Flow``; the mode rule "any is transport" is written once; the old import path of the data
path keeps working."""

from typing import NamedTuple

import cryptoapi.esp.policies
import cryptoapi.pfkey.db.statefind
from cryptoapi.pfkey import IpsecDir, IpsecMode, SockAddr
from cryptoapi.pfkey.db.sad import stored_mode
from cryptoapi.pfkey.db.selector import PolicyTable
from tests.pfkey.conftest import only, spd


class Packet(NamedTuple):
    """A packet as selectors see it, not the data path's Flow."""

    family: int
    src: bytes
    dst: bytes
    proto: int
    sport: int
    dport: int


def packet(src: str, dst: str, proto: int = 6, sport: int = 1000, dport: int = 80) -> Packet:
    source = SockAddr.of(src)
    return Packet(source.family, source.addr, SockAddr.of(dst).addr, proto, sport, dport)


def test_any_and_no_mode_are_stored_as_transport():
    assert stored_mode(IpsecMode.ANY) == IpsecMode.TRANSPORT
    for mode in (IpsecMode.TRANSPORT, IpsecMode.TUNNEL, IpsecMode.BEET):
        assert stored_mode(mode) == mode


def test_the_lowest_priority_wins_then_the_earliest_and_changes_are_seen(km):
    table = PolicyTable(km.spd, IpsecDir.OUTBOUND)
    flow = packet("10.0.0.5", "10.1.2.3")
    assert table.lookup(flow) is None
    only(km, spd(priority=200, src="10.0.0.0", splen=8))
    only(km, spd(priority=100, src="10.0.0.0", splen=16, seq=12))
    only(km, spd(priority=100, src="10.0.0.0", splen=24, seq=13))
    found = table.lookup(flow)
    assert found is not None and (found.priority, found.prefixlen_s) == (100, 16)
    assert table.lookup(packet("10.0.0.5", "10.2.0.1")) is None  # outside 10.1/16
    assert PolicyTable(km.spd, IpsecDir.INBOUND).lookup(flow) is None


def test_the_data_paths_old_import_path_names_the_moved_functions():
    for name in ("endpoints", "sa_mode", "select_sa"):
        moved = getattr(cryptoapi.pfkey.db.statefind, name)
        assert getattr(cryptoapi.esp.policies, name) is moved
