"""espd's GSO batching (:mod:`cryptoapi.esp.espd.batches`): runs a UDP_SEGMENT send can
carry, gathered per route in order."""

from socket import AF_INET

from cryptoapi.esp import Outbound
from cryptoapi.esp.espd.batches import SendBatches, runs
from cryptoapi.esp.espd.sockets import GSO_MAX_BYTES, GSO_MAX_SEGMENTS

A, B = bytes(4), b"\x01" * 4


def sized(*sizes: int, dst: bytes = B, dport: int = 4500) -> list[Outbound]:
    return [
        Outbound(AF_INET, A, dst, 4500, dport, bytes([n % 256]) * size)
        for n, size in enumerate(sizes)
    ]


def lengths(datagrams: list[Outbound]) -> list[list[int]]:
    return [[len(d.payload) for d in run] for run in runs(datagrams)]


def test_equal_sizes_make_one_run_and_a_shorter_one_ends_it():
    assert lengths(sized(100, 100, 100, 40, 100, 100)) == [[100, 100, 100, 40], [100, 100]]


def test_a_longer_datagram_starts_a_new_run():
    assert lengths(sized(40, 40, 100, 100, 40)) == [[40, 40], [100, 100, 40]]


def test_a_run_holds_at_most_the_kernels_segments_and_bytes():
    assert lengths(sized(*[10] * (GSO_MAX_SEGMENTS + 3))) == [[10] * GSO_MAX_SEGMENTS, [10] * 3]
    big = GSO_MAX_BYTES // 3
    assert lengths(sized(big, big, big, big)) == [[big] * 3, [big]]
    rest = GSO_MAX_BYTES - 3 * big  # a shorter last one that just fits, and one that does not
    assert lengths(sized(big, big, big, rest)) == [[big, big, big, rest]]
    assert lengths(sized(big, big, big, rest + 1)) == [[big] * 3, [rest + 1]]


def test_runs_keep_every_datagram_once_in_order():
    datagrams = sized(50, 50, 9, 9, 9, 70, 70, 70, 1, 2, 2, 2)
    assert [d for run in runs(datagrams) for d in run] == datagrams
    assert list(runs([])) == []


def test_batches_keep_order_per_route_and_routes_apart():
    batches = SendBatches()
    first, other = object(), object()
    to_b = sized(100, 100, 40)
    to_c = sized(100, 100, dst=b"\x02" * 4)
    other_port = sized(100, dport=4501)
    for datagram in (to_b[0], to_c[0], to_b[1], other_port[0], to_c[1], to_b[2]):
        batches.add(first, datagram)  # type: ignore[arg-type]  # any object stands for a socket
    batches.add(other, to_b[0])  # type: ignore[arg-type]
    drained = [(sock, list(run)) for sock, run in batches.drain()]
    assert drained == [(first, to_b), (first, to_c), (first, other_port), (other, to_b[:1])]
    assert list(batches.drain()) == []  # nothing kept
