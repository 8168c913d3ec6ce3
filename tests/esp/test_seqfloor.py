"""Sequence numbers outlive the data path (``cryptoapi.esp.seqfloor``): a data path made
again over the same SAs and floor file goes on past the floor, so no counter-mode IV is
sent twice under a key and the peer's replay window takes the next packet at once; the
floor is durable before the numbers under it are used, and a floor that cannot be written
drops the packet rather than risk a repeat. The peer (a data path of its own) decrypts
every packet, so the IVs checked are the ones the transform used."""

import errno
import os
import struct
import subprocess
import sys
import threading
import time

import pytest

from cryptoapi.esp import Datapath
from cryptoapi.esp.seqfloor import SequenceFloors, fingerprint
from cryptoapi.pfkey import IpsecMode, PfkeyError
from cryptoapi.pfkey.daemon.store import StateStore
from tests.esp import sas
from tests.esp.conftest import counted, udp_packet
from tests.esp.pair import Pair, build_pair

STEP = 4


def _send(pair: Pair, datapath: Datapath, count: int) -> list[tuple[int, bytes]]:
    """(sequence number, IV) of ``count`` packets ``datapath`` sends (IPv4, raw ESP), each
    taken by the peer, whose replay window drops any number it has seen."""
    link = pair.link
    seen = []
    for n in range(count):
        packet = udp_packet(link.local_addr, link.peer_addr, b"packet %d" % n)
        [outer] = datapath.output(packet)
        assert pair.peer.input(outer) == packet, f"the peer dropped packet {n}"
        esp = outer[20:]
        seen.append((struct.unpack_from(">I", esp, 4)[0], esp[8:16]))
    return seen


def _restarted(pair: Pair, path: os.PathLike[str], step: int = STEP) -> Datapath:
    """A new data path over the local key manager's SAs (as a restarted espd has)."""
    return Datapath(pair.link.key_manager, floors=SequenceFloors(path, step=step))


@pytest.mark.parametrize("transform", ["aes-gcm-16", "chacha20-poly1305", "aes-ctr+hmac-sha2-256"])
@pytest.mark.parametrize("esn", [False, True], ids=["seq32", "esn"])
def test_a_data_path_made_again_goes_on_past_the_floor(tmp_path, transform, esn):
    pair = build_pair(transform, IpsecMode.TUNNEL, 4, esn)
    path = tmp_path / "floors.seq"
    first = _restarted(pair, path)
    before = _send(pair, first, 10)
    first.close()  # as kill -9 would: the file is all that is left
    second = _restarted(pair, path)
    after = _send(pair, second, 10)
    assert [seq for seq, _ in before] == list(range(1, 11))
    floor = 12  # 10 numbers used, reserved STEP at a time
    assert [seq for seq, _ in after] == list(range(floor + 1, floor + 11))
    ivs = [iv for _, iv in before + after]
    assert len(set(ivs)) == len(ivs)
    for seq, iv in before + after:  # the number in the low bits, a salt per process above
        assert int.from_bytes(iv, "big") & 0xFFFFFFFF == seq
    assert len({iv[:3] for _, iv in before}) == 1 and len({iv[:3] for _, iv in after}) == 1
    second.close()


def test_the_floor_is_durable_before_its_numbers_are_sent(tmp_path):
    pair = build_pair()
    path = tmp_path / "floors.seq"
    datapath = _restarted(pair, path, step=3)
    sa = next(sa for sa in pair.link.key_manager.sad if sa.spi == sas.OUTBOUND_SPI)
    for sent in range(1, 8):
        _send(pair, datapath, 1)
        reserved = -(-sent // 3) * 3  # the numbers so far, rounded up to a whole step
        # what another process reads now (the writer still open: WAL, not yet checkpointed)
        read = subprocess.run(
            [sys.executable, "-c", _READ_FLOOR, str(path), fingerprint(sa).hex()],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert int(read.stdout) == reserved
    datapath.close()


_READ_FLOOR = """
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
row = db.execute("SELECT floor FROM floors WHERE keys = ?", (bytes.fromhex(sys.argv[2]),))
print(int.from_bytes(row.fetchone()[0], "big"))
"""


def test_one_data_path_at_a_time_keeps_a_floor_file(tmp_path):
    path = tmp_path / "floors.seq"
    old = build_pair()
    _send(old, _restarted(old, path), 5)  # left open: the next opener must be refused
    with pytest.raises(PfkeyError) as busy:
        SequenceFloors(path)
    assert busy.value.errno == errno.EBUSY and "another espd" in str(busy.value)


def test_other_keys_under_the_same_spi_start_at_one(tmp_path):
    path = tmp_path / "floors.seq"
    old = build_pair("aes-gcm-16")
    datapath = _restarted(old, path)
    _send(old, datapath, 5)
    datapath.close()
    new = build_pair("chacha20-poly1305")  # the same SPIs and addresses, other keys
    old_sa = next(iter(old.link.key_manager.sad))
    new_sa = next(sa for sa in new.link.key_manager.sad if sa.key == old_sa.key)
    assert fingerprint(new_sa) != fingerprint(old_sa)
    assert [seq for seq, _ in _send(new, _restarted(new, path), 2)] == [1, 2]


def test_a_floor_that_cannot_be_written_drops_the_packet(tmp_path, monkeypatch):
    pair = build_pair()
    floors = SequenceFloors(tmp_path / "floors.seq", step=2)
    datapath = Datapath(pair.link.key_manager, floors=floors)
    _send(pair, datapath, 2)

    def full_disk(keys: bytes, upto: int) -> None:
        raise PfkeyError(errno.EIO, "cannot write floors.seq: database or disk is full")

    monkeypatch.setattr(floors, "reserve", full_disk)
    link = pair.link
    packet = udp_packet(link.local_addr, link.peer_addr, b"not sent")
    with counted(datapath.stats) as delta:
        assert datapath.output(packet) == []
    assert delta["EspOutFloorError"] == 1 and delta["EspOutPackets"] == 0
    monkeypatch.undo()
    assert [seq for seq, _ in _send(pair, datapath, 1)] == [3]  # the number was not used


def test_the_floor_file_is_private_and_never_a_link(tmp_path):
    path = tmp_path / "floors.seq"
    SequenceFloors(path).close()
    assert os.stat(path).st_mode & 0o777 == 0o600
    link = tmp_path / "link.seq"
    link.symlink_to(path)
    with pytest.raises(PfkeyError) as refused:
        SequenceFloors(link)
    assert refused.value.errno == errno.ELOOP
    os.chmod(path, 0o644)
    with pytest.raises(PfkeyError) as public:
        SequenceFloors(path)
    assert public.value.errno == errno.EACCES
    keyd_file = tmp_path / "keys.db"
    StateStore(keyd_file).close()
    with pytest.raises(PfkeyError) as foreign:
        SequenceFloors(keyd_file)
    assert foreign.value.errno == errno.EINVAL and "another application" in str(foreign.value)


def test_the_file_holds_no_key(tmp_path):
    path = tmp_path / "floors.seq"
    pair = build_pair()
    datapath = _restarted(pair, path)
    _send(pair, datapath, 3)
    datapath.close()
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("floors"))
    for sa in pair.link.key_manager.sad:
        for key in (sa.encrypt_key, sa.auth_key):
            if key:
                assert key not in data and key[:8] not in data


def test_threads_never_take_the_same_number(tmp_path, monkeypatch):
    """Taking a number (and moving the floor) is one step under the SA's lock: four
    threads, forced to switch inside it (every packet moves the floor, and the floor
    write yields), send 4 x 300 packets with 1,200 different numbers. A read-then-write
    increment gave 23,443 duplicates in 1M packets from 4 threads once a call sat
    between the two, as a free-threaded Python can at any point."""
    pair = build_pair()
    floors = SequenceFloors(tmp_path / "floors.seq", step=1)
    datapath = Datapath(pair.link.key_manager, floors=floors)
    write = floors.reserve

    def yielding_reserve(keys: bytes, upto: int) -> None:
        time.sleep(0)  # let another thread run here
        write(keys, upto)

    monkeypatch.setattr(floors, "reserve", yielding_reserve)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    link = pair.link
    packet = udp_packet(link.local_addr, link.peer_addr, b"race")
    numbers: list[int] = []

    def sender() -> None:
        for _ in range(300):
            numbers.append(struct.unpack_from(">I", datapath.output(packet)[0], 24)[0])

    threads = [threading.Thread(target=sender) for _ in range(4)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert sorted(numbers) == list(range(1, 1201))
    datapath.close()
