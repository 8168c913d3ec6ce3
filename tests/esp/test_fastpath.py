"""The per-SA fast path (``cryptoapi.esp.fastpath``) against the readable path it stands in
for: two data paths over copies of the same SAs (same keys, same IV salt, same sequence
state), one with ``fast=False``, take the same packets and must give the same bytes, drop
the same packets under the same counters, and leave the same usage and replay windows.
Every transform, both modes, IPv4 and IPv6, with and without ESN, raw ESP and ESP in UDP;
then window edges, lifetimes and sequence floors. Each test runs twice: with the fast runs'
C twins (``fastrun.c``) and with the Python methods they stand in for."""

from collections import Counter
from dataclasses import dataclass

import pytest

from cryptoapi import Registry
from cryptoapi.esp import Datapath, SequenceFloors, fastpath, ip
from cryptoapi.esp import datapath as datapath_module
from cryptoapi.esp.crypto import EspCrypto, for_sa
from cryptoapi.esp.fastpath import FastSa
from cryptoapi.pfkey import IpsecMode, Lifetime, Message, MsgType, SaFlags, SaType, decode
from tests.esp import sas
from tests.esp.conftest import internet_checksum, packed, sa_state, udp_packet
from tests.esp.pair import Pair, build_pair

SALT = 0x5A5A_5A5A << 32  # above bit 40 too, so that ESN numbers keep it


@dataclass
class Twin:
    """One pair of data paths; ``fast`` says which path both of its ends take."""

    pair: Pair
    fast: bool
    notices: list[bytes]


def twins(transform, mode, version, esn, encap_port, *, replay=32, floors=None):
    """(fast, reference): two pairs over the same SAs, each end's IV salt set to SALT."""
    made = []
    for fast in (True, False):
        pair = build_pair(transform, mode, version, esn, replay=replay, encap_port=encap_port)
        notices: list[bytes] = []
        for manager in (pair.link.key_manager, pair.peer_manager):
            manager.handle(Message(MsgType.REGISTER, SaType.ESP, 1, 4242).encode())
        kept = None if floors is None else SequenceFloors(floors[fast], step=3)
        pair.local = Datapath(
            pair.link.key_manager, encap_port=encap_port, fast=fast, notify=notices.extend,
            floors=kept,
        )  # fmt: skip
        pair.peer = Datapath(pair.peer_manager, encap_port=encap_port, fast=fast)
        for datapath, manager in (
            (pair.local, pair.link.key_manager),
            (pair.peer, pair.peer_manager),
        ):
            for spi in (sas.OUTBOUND_SPI, sas.INBOUND_SPI):
                sa_state(datapath, manager, spi).iv_salt = SALT
        made.append(Twin(pair, fast, notices))
    return made


def inner_packets(pair, *, reverse=False):
    """Plaintext packets of every padding length, with DSCP/ECN, TTL and DF varied, in two
    flows (the first packet of a flow plans it on the readable path, the others are fast)."""
    link = pair.link
    src, dst = (link.peer_addr, link.local_addr) if reverse else (link.local_addr, link.peer_addr)
    packets = []
    for n, size in enumerate((0, 1, 2, 3, 13, 14, 15, 16, 300, 1372)):
        packet = bytearray(
            udp_packet(
                src, dst, bytes((i * 7 + n) & 0xFF for i in range(size)), sport=40000 + n % 2
            )
        )
        if len(link.hosts.local) < 16 and "." in link.hosts.local:  # IPv4 inner header
            packet[1] = (0xB8 | n % 4) if n % 3 else 0  # DSCP EF with each ECN value
            packet[6] = 0x40 if n % 2 else 0  # DF on and off
            packet[8] = 64 - n
            packet[10:12] = b"\0\0"
            packet[10:12] = internet_checksum(bytes(packet[:20])).to_bytes(2, "big")
        packets.append(bytes(packet))
    return packets


def state_of(twin, *, local=True, spi=sas.OUTBOUND_SPI):
    pair = twin.pair
    datapath, manager = (
        (pair.local, pair.link.key_manager) if local else (pair.peer, pair.peer_manager)
    )
    return sa_state(datapath, manager, spi)


def usage(twin):
    """What the packets left behind: counters, SA usage, sequence numbers, windows."""
    pair = twin.pair
    seen = [pair.local.stats(), pair.peer.stats()]
    for datapath, manager in ((pair.local, pair.link.key_manager), (pair.peer, pair.peer_manager)):
        for spi in (sas.OUTBOUND_SPI, sas.INBOUND_SPI):
            sa = next((sa for sa in manager.sad if sa.spi == spi), None)
            if sa is not None:
                state = datapath.state_of(sa)
                seen.append((sa.nbytes, sa.allocations, state.seq, state.replay.top,
                             state.replay.bitmap, dict(state.drops)))  # fmt: skip
    seen.append([decode(m).type for m in twin.notices])
    return seen


def mutations(outer: bytes, header: int):
    """Hostile variants of one outer packet: ICV flipped, body cut, SPI unknown, and the
    outer ECN marked CE (valid checksum) for an IPv4 outer header."""
    flipped = outer[:-1] + bytes((outer[-1] ^ 1,))
    yield flipped
    yield outer[: header + 12]
    cut = outer[:-4]
    yield cut
    if outer[0] == 0x45:
        marked = bytearray(outer)
        marked[1] |= 0b11
        marked[10:12] = b"\0\0"
        marked[10:12] = internet_checksum(bytes(marked[:20])).to_bytes(2, "big")
        yield bytes(marked)


def counting(function, taken, name=None):
    """``function``, counting its calls in ``taken``: under ``name``, or without one under
    the call's last argument (the packet it was given)."""

    def counted(*args, **kwargs):
        taken[args[-1] if name is None else name] += 1
        return function(*args, **kwargs)

    return counted


class CountingRuns:
    """An SA's calls for runs (``FastSa.runs``), counting what each takes: see
    :func:`counting_runs`."""

    def __init__(self, runs, taken, by_packet):
        self.runs, self.taken, self.by_packet = runs, taken, by_packet

    def bind(self, *args):
        self.runs.bind(*args)

    def seal_run(self, packets, *args):
        self.taken["seal"] += len(packets)
        return self.runs.seal_run(packets, *args)

    def open_run(self, payloads, start, *args):
        chunk, next_headers, cause = self.runs.open_run(payloads, start, *args)
        for payload in payloads[start : start + len(chunk) + bool(cause)]:
            self.taken[payload if self.by_packet else "open_esp"] += 1
        return chunk, next_headers, cause


def counting_runs(monkeypatch, taken, *, by_packet=False):
    """Count the packets the fast path frames a run at a time (the calls of the SAs made
    from now on) as :func:`counting` counts ``seal`` and ``open_esp``: under "seal" and
    "open_esp", or each inbound packet under itself (``by_packet``), the one a run
    stopped at as a drop included. Both twins of the fast runs make these calls."""
    made = FastSa.__init__

    def counted(self, *args, **kwargs):
        made(self, *args, **kwargs)
        if self.runs is not None:
            self.runs = CountingRuns(self.runs, taken, by_packet)

    monkeypatch.setattr(FastSa, "__init__", counted)


@pytest.fixture(autouse=True, params=["C", "Python"])
def language(request, monkeypatch):
    """The fast runs' twins every test here runs with: ``fastrun.c``'s (skipped where it
    does not build) or the Python methods (:func:`cryptoapi.esp.datapath.fast_runs`)."""
    methods = datapath_module.PYTHON_RUNS
    if request.param == "Python":
        monkeypatch.setattr(datapath_module, "fast_runs", lambda: methods)
    elif datapath_module.fast_runs() == methods:
        pytest.skip("fastrun.c does not build here (no C compiler or Python headers)")
    return request.param


@pytest.fixture(params=[True, False], ids=["runs", "per-packet"])
def runs(request, monkeypatch):
    """Whether the fast path may take whole runs through the AEAD's own calls
    (``FastSa.runs``, ESP's AEADs and AES-CBC with HMAC over libcrypto) or frames each
    packet in Python."""
    if not request.param:
        made = FastSa.__init__

        def without_runs(self, *args, **kwargs):
            made(self, *args, **kwargs)
            self.runs = None

        monkeypatch.setattr(FastSa, "__init__", without_runs)
    return request.param


RUN_TRANSFORMS = (
    "aes-gcm-8", "aes-gcm-12", "aes-gcm-16", "aes256-gcm-16", "chacha20-poly1305",
    *(f"aes-cbc+hmac-{mac}" for mac in ("sha1-96", "sha2-256", "sha2-384", "sha2-512")),
    "aes256-cbc+hmac-sha2-256",
)  # fmt: skip
"""The transforms whose SA takes whole runs (libcrypto's rfc4106, rfc7539esp and
authenc(hmac(sha*),cbc(aes)))."""


def assert_same(fast, reference, what):
    assert fast == reference, f"fast and readable paths differ: {what}"


MODES = {"tunnel": IpsecMode.TUNNEL, "transport": IpsecMode.TRANSPORT}


@pytest.mark.parametrize("encap_port", [None, 4500], ids=["raw", "udp"])
@pytest.mark.parametrize("esn", [False, True], ids=["seq32", "esn"])
@pytest.mark.parametrize("version", [4, 6], ids=["ipv4", "ipv6"])
@pytest.mark.parametrize("mode", list(MODES), ids=list(MODES))
@pytest.mark.parametrize("transform", list(sas.TRANSFORMS))
def test_fast_and_readable_paths_agree(
    transform, mode, version, esn, encap_port, runs, monkeypatch
):
    # CBC's IVs are random (both paths ask EspCrypto.iv): fixed here, to compare bytes
    monkeypatch.setattr(EspCrypto, "iv", lambda self, count=1: bytes(self.ivlen * count))
    taken = Counter[str]()
    for name in ("seal", "open_esp"):
        monkeypatch.setattr(fastpath, name, counting(getattr(fastpath, name), taken, name))
    counting_runs(monkeypatch, taken)
    fast, reference = twins(transform, MODES[mode], version, esn, encap_port)
    header = 20 if version == 4 else 40
    out = {}
    for twin in (fast, reference):
        pair = twin.pair
        sent = [pair.local.output(p) for p in inner_packets(pair)]
        sent_esp = [pair.local.output_esp(p) for p in inner_packets(pair)[:4]]
        answers = [pair.peer.output(p)[0] for p in inner_packets(pair, reverse=True)]
        received = [pair.peer.input(s[0]) for s in sent]
        accepted = [pair.local.input(a) for a in answers]
        replayed = [pair.local.input(a) for a in answers[:3]]
        hostile = [pair.local.input(m) for a in answers[-2:] for m in mutations(a, header)]
        by_payload = []
        for outbound in sent_esp:
            [o] = outbound
            by_payload.append(pair.peer.input_esp(o.payload, o.src, o.dst, udp=o.dport > 0))
        out[twin.fast] = (
            sent,
            sent_esp,
            answers,
            received,
            accepted,
            replayed,
            hostile,
            by_payload,
        )
    for name, a, b in zip(
        ("output", "output_esp", "peer output", "peer input", "input", "replays", "hostile",
         "input_esp"), out[True], out[False], strict=True,
    ):  # fmt: skip
        assert_same(a, b, name)
    assert all(r is not None for r in out[True][3]), "the peer dropped a packet"
    assert_same(usage(fast), usage(reference), "counters and state")
    if MODES[mode] == IpsecMode.TUNNEL and not transform.startswith("null"):
        assert state_of(fast).fast is not None  # the common case took the fast path
        assert (state_of(fast).fast.runs is not None) == (runs and transform in RUN_TRANSFORMS)
        assert taken["seal"] == (8 + 4 + 8 if version == 4 else 4)  # output() needs IPv4
        assert taken["open_esp"] >= 10 + 10 + 3 + 4
    else:
        assert not taken


@pytest.mark.parametrize("encap_port", [None, 4500], ids=["raw", "udp"])
@pytest.mark.parametrize("transform", ["aes-gcm-16", "chacha20-poly1305", "aes-cbc+hmac-sha2-256"])
def test_the_batch_calls_agree_with_one_packet_at_a_time(transform, encap_port, runs, monkeypatch):
    """output_many and input_many (fast path) against output_esp and input_esp one by one
    (readable path): the same ESP bytes, inner packets, drops, counters and SA state."""
    monkeypatch.setattr(EspCrypto, "iv", lambda self, count=1: bytes(self.ivlen * count))
    fast, reference = twins(transform, IpsecMode.TUNNEL, 4, False, encap_port)
    udp = encap_port is not None
    extra = [b"\xff", b"\0\0\0\0ike"] if udp else []  # a keepalive and IKE, counted
    out = {}
    for twin in (fast, reference):
        pair = twin.pair
        packets = inner_packets(pair)
        if twin.fast:
            sent = pair.local.output_many(packets)
        else:
            sent = [o for p in packets for o in pair.local.output_esp(p)]
        payloads = [o.payload for o in sent] + extra + [o.payload for o in sent[:2]]  # replays
        src, dst = sent[0].src, sent[0].dst
        if twin.fast:
            received = pair.peer.input_many(payloads, src, dst, udp=udp)
        else:
            each = (pair.peer.input_esp(p, src, dst, udp=udp) for p in payloads)
            received = [inner for inner in each if inner is not None]
        out[twin.fast] = (sent, received)
    assert_same(out[True], out[False], "batches")
    assert out[True][1] == inner_packets(fast.pair)  # each once: the replays dropped
    assert_same(usage(fast), usage(reference), "counters and state")


@pytest.mark.parametrize("transform", ["aes-gcm-16", "chacha20-poly1305", "aes-gcm-8"])
def test_esn_window_edges_agree(transform):
    """Numbers across 2^32 both ways, received out of order, then replayed."""
    fast, reference = twins(transform, IpsecMode.TUNNEL, 4, True, 4500, replay=64)
    results = {}
    for twin in (fast, reference):
        pair = twin.pair
        state_of(twin).seq = 2**32 - 3
        state_of(twin, local=False).replay.top = 2**32 - 3
        state_of(twin, local=False).replay.bitmap = 1
        packets = inner_packets(pair)
        sent = [pair.local.output(p)[0] for p in packets[:6]]
        order = [sent[3], sent[0], sent[2], sent[1], sent[5], sent[4], *sent]
        results[twin.fast] = (sent, [pair.peer.input(s) for s in order])
    assert_same(results[True], results[False], "ESN edges")
    assert all(r is not None for r in results[True][1][:6])
    assert all(r is None for r in results[True][1][6:])
    assert_same(usage(fast), usage(reference), "counters and state")


@pytest.mark.parametrize("transform", RUN_TRANSFORMS)
def test_runs_across_2_32_with_esn_agree(transform, runs, monkeypatch):
    """A batch out and in across 2^32 with ESN: the high bits in the AAD (or, for CBC, in
    the ICV after the payload) change in the middle of a run (RFC 4303 Appendix A), and a
    replay of the batch is dropped whole."""
    monkeypatch.setattr(EspCrypto, "iv", lambda self, count=1: bytes(self.ivlen * count))
    fast, reference = twins(transform, IpsecMode.TUNNEL, 4, True, 4500, replay=64)
    results = {}
    for twin in (fast, reference):
        pair = twin.pair
        state_of(twin).seq = 2**32 - 3
        state_of(twin, local=False).replay.start_at(2**32 - 3)
        packets = inner_packets(pair)
        local, peer = pair.local, pair.peer
        if twin.fast:
            local.output_esp(packets[0])  # plans the flow
            sent = local.output_many(packets[1:])
        else:
            sent = [o for p in packets for o in local.output_esp(p)][1:]
        payloads = [o.payload for o in sent]
        src, dst = sent[0].src, sent[0].dst
        if twin.fast:
            received = peer.input_many(payloads * 2, src, dst, udp=True)
        else:
            each = (peer.input_esp(p, src, dst, udp=True) for p in payloads * 2)
            received = [inner for inner in each if inner is not None]
        results[twin.fast] = (sent, received)
    assert_same(results[True], results[False], "runs across 2^32")
    assert results[True][1] == inner_packets(fast.pair)[1:]
    assert state_of(fast, local=False).replay.top == 2**32 - 3 + len(results[True][1]) + 1
    assert_same(usage(fast), usage(reference), "counters and state")


def test_lifetimes_and_the_end_of_the_sequence_space_agree():
    fast, reference = twins("aes-gcm-16", IpsecMode.TUNNEL, 4, False, None)
    results = {}
    for twin in (fast, reference):
        pair = twin.pair
        sa = next(sa for sa in pair.link.key_manager.sad if sa.spi == sas.OUTBOUND_SPI)
        sa.soft = Lifetime(4, allocations=4, nbytes=10_000)
        sa.hard = Lifetime(3, allocations=7)
        pair.local.state_of(sa).update_limits()
        packet = inner_packets(pair)[-2]
        sent = [pair.local.output(packet) for _ in range(9)]
        results[twin.fast] = sent
    assert_same(results[True], results[False], "lifetimes")
    assert [len(s) for s in results[True]] == [1] * 7 + [0, 0]
    assert_same(usage(fast), usage(reference), "counters, usage and notices")
    fast, reference = twins("chacha20-poly1305", IpsecMode.TUNNEL, 4, False, 4500)
    for twin in (fast, reference):
        twin.pair.local.output(inner_packets(twin.pair)[0])
        state_of(twin).seq = 2**32 - 3
        results[twin.fast] = [twin.pair.local.output(inner_packets(twin.pair)[0]) for _ in range(4)]
    assert_same(results[True], results[False], "the last sequence numbers")
    assert [len(s) for s in results[True]] == [1, 1, 0, 0]
    assert_same(usage(fast), usage(reference), "counters at the end of the sequence space")


@pytest.mark.parametrize(
    ("soft", "hard"),
    [
        (Lifetime(4, allocations=9), Lifetime(3, allocations=17)),  # packet limits
        (Lifetime(4, nbytes=2_000), Lifetime(3, nbytes=4_000)),  # byte limits
    ],
    ids=["packets", "bytes"],
)
def test_runs_of_one_flow_stop_at_each_limit_as_packets_one_by_one_do(soft, hard):
    """output_many seals a run of one flow at once: it must reach soft and hard limits at
    the same packet as output_esp one by one on the readable path, with the same EXPIREs."""
    fast, reference = twins("aes-gcm-16", IpsecMode.TUNNEL, 4, False, 4500)
    results = {}
    for twin in (fast, reference):
        pair = twin.pair
        sa = next(sa for sa in pair.link.key_manager.sad if sa.spi == sas.OUTBOUND_SPI)
        sa.soft, sa.hard = soft, hard
        pair.local.state_of(sa).update_limits()
        run = [inner_packets(pair)[-2]] * 20
        if twin.fast:  # the first packet plans the flow; then runs across both limits
            many = pair.local.output_many
            results[True] = pair.local.output_esp(run[0]) + many(run[1:12]) + many(run[12:])
        else:
            results[False] = [o for p in run for o in pair.local.output_esp(p)]
    assert_same(results[True], results[False], "runs across limits")
    assert 0 < len(results[True]) < 20  # the hard limit stopped it
    assert_same(usage(fast), usage(reference), "counters, usage and notices")


def one_flow_with_header_changes(pair, version):
    """Packets of one flow (the same addresses, protocol and ports) whose other header
    fields change along the batch: lengths and IPv4 identifications alone (as in the
    segments of one TSO super-segment), then TTL or hop limit, TOS or traffic class, DF,
    and last a stated length that is not the packet's, which the readable path drops."""
    base = [inner_packets(pair)[k] for k in (8, 9, 8, 9)]  # two lengths, one flow (sport)
    edits = [(8 if version == 4 else 7, 3), (1, 0x20)] + ([(6, 0x40)] if version == 4 else [])
    packets = []
    for n, packet in enumerate(base):
        changed = bytearray(packet)
        if version == 4:
            changed[4:6] = n.to_bytes(2, "big")  # a new identification, the run goes on
        packets.append(bytes(changed))
    for at, value in edits:
        changed = bytearray(packets[-1])
        changed[at] ^= value
        packets += [bytes(changed)] * 2
    short = bytearray(packets[-1])
    short[3 if version == 4 else 5] ^= 1  # a length that disagrees: the readable path drops
    return [*packets, bytes(short), packets[0]]


@pytest.mark.parametrize("version", [4, 6])
def test_a_run_of_one_flow_ends_where_any_header_field_the_seal_reads_changes(version):
    """output_many takes a run of one flow's packets by the first one's header; whatever
    changes along the batch, it must give the bytes output_esp gives one by one, and drop
    the packet whose length disagrees with its header as the readable path does."""
    fast, reference = twins("aes-gcm-16", IpsecMode.TUNNEL, version, False, 4500)
    results = {}
    for twin in (fast, reference):
        packets = one_flow_with_header_changes(twin.pair, version)
        local = twin.pair.local
        if twin.fast:  # the first packet plans the flow; then the batch
            results[True] = local.output_esp(packets[0]) + local.output_many(packets[1:])
        else:
            results[False] = [o for p in packets for o in local.output_esp(p)]
    assert_same(results[True], results[False], "one flow, changing headers")
    assert len(results[True]) == len(one_flow_with_header_changes(fast.pair, version)) - 1
    assert_same(usage(fast), usage(reference), "counters and state")


@pytest.mark.parametrize(
    "hard", [Lifetime(3, allocations=12), Lifetime(3, nbytes=3_000)], ids=["packets", "bytes"]
)
def test_inbound_runs_stop_at_a_limit_and_at_a_bad_packet_as_one_by_one(hard, runs, monkeypatch):
    """input_many opens a run of one SA at once: it must stop at the hard limit's packet,
    drop a replay, a forgery and an unknown SPI in the middle of a run, and count all of it
    as input_esp one by one on the readable path does. The forgery is decrypted once."""
    opened = Counter[bytes]()
    counting_runs(monkeypatch, opened, by_packet=True)
    fast, reference = twins("aes-gcm-16", IpsecMode.TUNNEL, 4, False, 4500)
    results = {}
    for twin in (fast, reference):
        pair = twin.pair
        sa = next(sa for sa in pair.peer_manager.sad if sa.spi == sas.OUTBOUND_SPI)
        sa.hard = hard
        outs = [o for p in [inner_packets(pair)[-2]] * 16 for o in pair.local.output_esp(p)]
        sent, src, dst = [o.payload for o in outs], outs[0].src, outs[0].dst
        forged = sent[5][:-1] + bytes((sent[5][-1] ^ 1,))
        unknown = b"\x77\x77\x77\x77" + sent[6][4:]
        payloads = [*sent[:5], forged, sent[3], unknown, *sent[5:]]  # a forgery, a replay
        pair.peer.state_of(sa).update_limits()
        if twin.fast:
            first = pair.peer.input_many(payloads[:1], src, dst, udp=True)  # first use: timers
            one_by_one = Counter[str]()
            opened.clear()
            pair.peer._open_in_full = counting(pair.peer._open_in_full, one_by_one, "input")
            monkeypatch.setattr(fastpath, "open_esp", counting(fastpath.open_esp, opened))
            results[True] = first + pair.peer.input_many(payloads[1:], src, dst, udp=True)
            assert 0 < one_by_one["input"] < len(payloads) - 5  # runs took some of them
            assert opened[forged] == 1
        else:
            each = (pair.peer.input_esp(p, src, dst, udp=True) for p in payloads)
            results[False] = [inner for inner in each if inner is not None]
    assert_same(results[True], results[False], "inbound runs")
    assert 0 < len(results[True]) < 16  # the hard limit stopped it
    assert_same(usage(fast), usage(reference), "counters, usage, windows and notices")


def test_sequence_floors_move_the_same_way(tmp_path):
    """Numbers go out only under the floor kept on disk (a restart goes on above it), and
    the floor moves at the same packets on both paths, one at a time or in batches."""
    floors = {True: tmp_path / "fast.seq", False: tmp_path / "reference.seq"}
    fast, reference = twins("aes-gcm-16", IpsecMode.TUNNEL, 4, False, 4500, floors=floors)
    results, moves = {}, {}
    for twin in (fast, reference):
        local, state = twin.pair.local, state_of(twin)
        packet = inner_packets(twin.pair)[4]
        sent, limits = [], []
        for size in (1,) * 10 + (10, 2, 5, 1, 7):
            if twin.fast:
                sent.append(local.output_many([packet] * size))
            else:
                sent.append([o for _ in range(size) for o in local.output_esp(packet)])
            on_disk = local.floors.floor(state.floor_keys)  # committed, synced
            assert state.seq <= state.seq_limit <= on_disk, "a number was sent above the floor"
            limits.append(state.seq_limit)
        results[twin.fast], moves[twin.fast] = sent, limits
        local.close()
    assert_same(results[True], results[False], "packets across floor steps")
    assert_same(moves[True], moves[False], "where the floor moved")
    assert_same(usage(fast), usage(reference), "counters across floor steps")


def crafted(twin, seq, inner, trailer):
    """An ESP packet from the peer (its outbound SA, SPI 0x2002) with any trailer, sealed
    with the SA's own transform: authentic, whatever its padding or next header says."""
    pair = twin.pair
    state = state_of(twin, local=False, spi=sas.INBOUND_SPI)
    header = state.spi + seq.to_bytes(4, "big")
    iv = (seq ^ SALT).to_bytes(8, "big")
    esp = header + iv + state.crypto.seal(iv, inner + trailer, header)
    src, dst = packed(pair.link.hosts.peer), packed(pair.link.hosts.local)
    return ip.ipv4_header(src, dst, 50, len(esp), tos=0, ttl=64, df=True, ident=9) + esp


@pytest.mark.parametrize("transform", ["aes-gcm-16", "aes-gcm-8", "chacha20-poly1305"])
def test_authentic_but_malformed_packets_agree(transform):
    """Bad padding, a next header that is not the inner packet's, a dummy packet (RFC 4303
    §2.4, §2.6): dropped or discarded alike, the window moved alike."""
    fast, reference = twins(transform, IpsecMode.TUNNEL, 4, False, None)
    results = {}
    for twin in (fast, reference):
        pair = twin.pair
        inner = inner_packets(pair, reverse=True)[4]  # 61 bytes: 1 byte of padding
        packets = [
            crafted(twin, 1, inner, b"\x02\x01\x04"),  # padding 2, 1: not 1, 2
            crafted(twin, 1, inner, b"\x01\x01\x29"),  # next header IPv6 on an IPv4 packet
            crafted(twin, 2, inner, b"\x01\x01\x3b"),  # a dummy (next header 59)
            crafted(twin, 1, inner, b"\x01\x01\x04"),  # authentic: 1 was, a replay
            crafted(twin, 3, inner, b"\x01\x01\x04"),  # good: taken
            crafted(twin, 3, inner, b"\x01\x01\x04"),  # and now a replay
        ]
        results[twin.fast] = [pair.local.input(p) for p in packets]
    assert_same(results[True], results[False], "malformed packets")
    assert results[True] == [None] * 4 + [inner_packets(fast.pair, reverse=True)[4], None]
    assert_same(usage(fast), usage(reference), "counters and windows")


def test_an_inbound_run_lets_a_flow_through_only_as_its_next_header_and_length_say():
    """input_many lets a run's packets through on the verdict of the last one of their
    flow: a dummy or a wrong next header with the same inner bytes, or an inner packet whose
    stated length is not its own, is still discarded or dropped as input_esp one by one."""
    fast, reference = twins("aes-gcm-16", IpsecMode.TUNNEL, 4, False, None)
    results = {}
    for twin in (fast, reference):
        pair = twin.pair
        inner = inner_packets(pair, reverse=True)[4]  # 61 bytes: 1 byte of padding
        lying = bytearray(inner)
        lying[3] ^= 2  # a stated length that is not the packet's
        good, dummy, ipv6 = b"\x01\x01\x04", b"\x01\x01\x3b", b"\x01\x01\x29"
        sent = [(inner, good)] * 2 + [(inner, dummy), (inner, ipv6), (inner, good)]
        sent += [(bytes(lying), good), (inner, good)]
        packets = [crafted(twin, n, data, trailer) for n, (data, trailer) in enumerate(sent, 1)]
        first = pair.local.input(packets[0])  # plans the flow's verdict, starts the SA's use
        src, dst = packets[0][12:16], packets[0][16:20]
        payloads = [packet[ip.IPV4_HEADER :] for packet in packets[1:]]
        if twin.fast:
            rest = pair.local.input_many(payloads, src, dst, udp=False)
        else:
            each = (pair.local.input_esp(p, src, dst, udp=False) for p in payloads)
            rest = [got for got in each if got is not None]
        results[twin.fast] = [first, *rest]
    assert_same(results[True], results[False], "one flow's run with dummies and lies")
    assert results[True] == [inner_packets(fast.pair, reverse=True)[4]] * 4
    assert_same(usage(fast), usage(reference), "counters and windows")


def test_noecn_and_nopmtudisc_sas_agree():
    """An SA with NOECN and NOPMTUDISC (outer ECN Not-ECT, DF clear) frames alike."""
    fast, reference = twins("aes-gcm-16", IpsecMode.TUNNEL, 4, False, 4500)
    results = {}
    for twin in (fast, reference):
        sa = next(sa for sa in twin.pair.link.key_manager.sad if sa.spi == sas.OUTBOUND_SPI)
        sa.flags |= SaFlags.NOECN | SaFlags.NOPMTUDISC
        twin.pair.local._states.clear()  # made again with the flags
        state_of(twin).iv_salt = SALT
        results[twin.fast] = [twin.pair.local.output(p) for p in inner_packets(twin.pair)]
    assert_same(results[True], results[False], "NOECN and NOPMTUDISC")
    assert state_of(fast).fast is not None
    assert all(sent[0][1] & 3 == 0 and not sent[0][6] & 0x40 for sent in results[True])


def test_the_native_call_is_the_serving_drivers_own_and_never_a_faulted_ones(monkeypatch):
    """A fault-injecting driver offers no native call: its SA's fast path frames packets
    around the transform's checked ``encrypt``/``decrypt`` (which the fault reaches)."""
    link = sas.build_link("aes-gcm-16", IpsecMode.TUNNEL)
    sa = next(sa for sa in link.key_manager.sad if sa.spi == sas.OUTBOUND_SPI)
    assert for_sa(Registry("off"), sa).native is not None
    monkeypatch.setenv("CRYPTOAPI_FAULT", "rfc4106-gcm-aes-libcrypto")
    faulted = for_sa(Registry("off"), sa)
    assert faulted.native is None
    fast = FastSa(
        faulted, spi=b"\0\0\x10\x01", esn=False, family=2, src=bytes(4), dst=bytes(4),
        ports=(0, 0), address_sum=0, df_clear=False, noecn=False,
    )  # fmt: skip
    assert fast.seal == faulted.seal and fast.prefix == b"" and fast.runs is None


@pytest.mark.parametrize("env", ["CRYPTOAPI_FAULT", "CRYPTOAPI_BREAK_SELFTEST"])
def test_a_cbc_sa_takes_runs_only_from_a_sound_authenc_driver(env, monkeypatch):
    """A CBC SA's runs come from its ``authenc``'s best tested implementation: a
    fault-injecting or failed libcrypto driver gives none, and one packet at a time stays
    the composed encrypt-then-MAC either way."""
    link = sas.build_link("aes-cbc+hmac-sha2-256", IpsecMode.TUNNEL)
    sa = next(sa for sa in link.key_manager.sad if sa.spi == sas.OUTBOUND_SPI)
    sound = for_sa(Registry("off"), sa)
    assert sound.runs is not None and sound.native is None
    monkeypatch.setenv(env, "authenc-hmac-sha256-cbc-aes-libcrypto")
    crypto = for_sa(Registry("lazy"), sa)
    assert crypto.runs is None
    iv, header = bytes(16), bytes(8)
    sealed = crypto.seal(iv, bytes(32), header)
    assert sound.seal(iv, bytes(32), header) == sealed
    assert sound.open(iv, sealed, header) == bytes(32)
