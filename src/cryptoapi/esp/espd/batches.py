"""One turn's ESP datagrams, gathered per peer and cut into UDP GSO sends.

The endpoint protects a batch of TUN packets in one turn of its loop (``BATCH``), and sends
what a UDP socket with GSO would otherwise send one ``sendmsg`` each at the end of it: per
route (socket, source, destination, port), in the order the data path made them, cut into
runs that one ``UDP_SEGMENT`` send can carry (:func:`runs`; Linux ``udp_send_skb``: every
datagram as long as the first but the last, which may be shorter, at most
:data:`~.sockets.GSO_MAX_SEGMENTS` datagrams and :data:`~.sockets.GSO_MAX_BYTES` bytes).

Runs follow the order of packets to a peer rather than grouping them by size, so that what
one peer receives is never reordered: an SA's sequence numbers go out in order, and a small
replay window on the other side drops nothing for it. A bulk TCP flow, all full-sized
segments one way and all pure ACKs the other, still makes runs as long as the batch.
"""

from collections.abc import Iterator, Sequence
from typing import TypeVar

from cryptoapi.esp.espd.sockets import GSO_MAX_BYTES, GSO_MAX_SEGMENTS, Datagram, EspSocket

D = TypeVar("D", bound=Datagram)

Route = tuple[EspSocket, bytes, bytes, int]
"""Where a datagram goes: the socket, its source and destination address, the peer's port."""


class SendBatches:
    """Datagrams waiting for the end of a turn, per route, in order (see the module doc)."""

    def __init__(self) -> None:
        self._routes: dict[Route, list[Datagram]] = {}

    def add(self, sock: EspSocket, datagram: Datagram) -> list[Datagram]:
        """Keep ``datagram`` for ``sock`` until :meth:`drain`; the list it waits in, where
        the caller may append the datagrams of the same route that follow it."""
        route = (sock, datagram.src, datagram.dst, datagram.dport)
        waiting = self._routes.get(route)
        if waiting is None:
            waiting = self._routes[route] = [datagram]
        else:
            waiting.append(datagram)
        return waiting

    def drain(self) -> Iterator[tuple[EspSocket, Sequence[Datagram]]]:
        """Each socket and run of datagrams one ``UDP_SEGMENT`` send can carry, route by
        route in the order first seen; afterwards nothing is kept."""
        routes, self._routes = self._routes, {}
        for (sock, *_), datagrams in routes.items():
            for run in runs(datagrams):
                yield sock, run


def runs(
    datagrams: Sequence[D],
    *,
    max_segments: int = GSO_MAX_SEGMENTS,
    max_bytes: int = GSO_MAX_BYTES,
) -> Iterator[Sequence[D]]:
    """``datagrams`` in order, cut into runs that one ``UDP_SEGMENT`` send can carry: all as
    long as the run's first but the last, which may be shorter; at most ``max_segments``
    datagrams and ``max_bytes`` bytes. A run of one is sent plainly."""
    start = 0
    while start < len(datagrams):
        end = _run_end(datagrams, start, max_segments, max_bytes)
        yield datagrams[start:end]
        start = end


def _run_end(datagrams: Sequence[D], start: int, max_segments: int, max_bytes: int) -> int:
    """Where the run that begins at ``start`` ends (exclusive)."""
    size = len(datagrams[start].payload)
    total = size
    end = start + 1
    limit = min(len(datagrams), start + max_segments)
    while end < limit:
        length = len(datagrams[end].payload)
        if length > size or total + length > max_bytes:
            break
        total += length
        end += 1
        if length < size:  # a shorter one ends the run
            break
    return end
