"""A data path starts each SA above the key manager's sequence-number checkpoint
(``SecurityAssociation.sequence``, raised by a takeover: cryptoapi.pfkey.daemon.checkpoint):
a new state starts at the greater of its checkpoint and its floor file's floor, a state
rebound to a record with a higher checkpoint goes on above it, and the reservation that
moves the floor makes the next usage report (the checkpoint) due."""

import dataclasses
import struct

from cryptoapi.esp import Datapath
from cryptoapi.esp.espd.reports import UsageReports
from cryptoapi.esp.seqfloor import SequenceFloors, fingerprint
from tests.esp.conftest import udp_packet
from tests.esp.pair import Pair, build_pair


def first_sequence(pair: Pair, datapath: Datapath) -> int:
    link = pair.link
    [outer] = datapath.output(udp_packet(link.local_addr, link.peer_addr, b"x"))
    assert pair.peer.input(outer) is not None  # the peer's window takes it
    return struct.unpack_from(">I", outer, 24)[0]


def outbound_sa(pair: Pair):
    return next(sa for sa in pair.link.key_manager.sad if sa.spi == pair.link.outbound.spi)


def test_a_new_state_starts_above_the_checkpoint():
    pair = build_pair()
    outbound_sa(pair).sequence = 70_000
    assert first_sequence(pair, pair.local) == 70_001


def test_with_a_floor_file_the_greater_of_the_two_wins(tmp_path):
    pair = build_pair()
    sa = outbound_sa(pair)
    floors = SequenceFloors(tmp_path / "esp.seq", step=8)
    floors.reserve(fingerprint(sa), 500)
    sa.sequence = 100
    datapath = Datapath(pair.link.key_manager, floors=floors)
    assert first_sequence(pair, datapath) == 501
    datapath.close()
    floors = SequenceFloors(tmp_path / "esp.seq", step=8)
    sa.sequence = 9_000
    datapath = Datapath(pair.link.key_manager, floors=floors)
    assert first_sequence(pair, datapath) == 9_001
    assert floors.floor(fingerprint(sa)) >= 9_001  # durable before it was sent
    datapath.close()


def test_a_rebound_state_goes_on_above_a_raised_checkpoint():
    pair = build_pair()
    sa = outbound_sa(pair)
    assert first_sequence(pair, pair.local) == 1
    raised = dataclasses.replace(sa, sequence=1 << 20)
    pair.link.key_manager.sad.replace(sa, raised)
    assert first_sequence(pair, pair.local) == (1 << 20) + 1


def test_a_floor_reservation_makes_the_checkpoint_due(tmp_path):
    pair = build_pair()
    floors = SequenceFloors(tmp_path / "esp.seq", step=4)
    datapath = Datapath(pair.link.key_manager, floors=floors)
    now = [0.0]
    reports = UsageReports(pair.link.key_manager, datapath.states, lambda: 1, clock=lambda: now[0])
    floors.on_reserve = reports.checkpoint
    sent: list[bytes] = []
    assert reports.send(lambda data: sent.append(data) is None) == 0  # not due yet
    first_sequence(pair, datapath)  # the first packet reserves
    assert reports.send(lambda data: sent.append(data) is None) == 1
    datapath.close()
