"""``fastrun.c`` against the Python methods it stands in for (``Datapath._fast_outputs``,
``_fast_open_run``) on seeded random streams: two pairs of data paths over the same SAs
(the same keys, IV salt and sequence state), one taking each twin, are given the same
batches of packets (two flows, every padding length, packets no policy or parse takes)
and the same ESP stream back, mutated, replayed, reordered, cut and given another SPI,
under lifetimes that run out on the way. They must give the same bytes, drop the same
packets under the same counters, and leave the same usage and replay windows. The seeds
are fixed (``random.Random(seed)``, named in each test's id): a failure replays exactly."""

import random
from collections.abc import Callable

import pytest

from cryptoapi.esp import Datapath, Outbound
from cryptoapi.esp import datapath as datapath_module
from cryptoapi.esp.crypto import EspCrypto
from cryptoapi.pfkey import IpsecMode, Lifetime, Message, MsgType, SaType, decode
from tests.esp import sas
from tests.esp.conftest import sa_state
from tests.esp.pair import Pair, build_pair
from tests.esp.test_fastpath import SALT, inner_packets

METHODS = datapath_module.PYTHON_RUNS
SEEDS = range(12)
CASES = [("aes-gcm-16", False, 4500), ("chacha20-poly1305", True, None),
         ("aes-cbc+hmac-sha2-256", False, 4500)]  # fmt: skip


@pytest.fixture(autouse=True)
def built_with_fixed_ivs(monkeypatch):
    """Skip where fastrun.c does not build; fix CBC's IVs, which are random (both twins
    ask EspCrypto.iv), to compare bytes."""
    monkeypatch.setattr(EspCrypto, "iv", lambda self, count=1: bytes(self.ivlen * count))
    if datapath_module.fast_runs() == METHODS:
        pytest.skip("fastrun.c does not build here (no C compiler or Python headers)")


def twin_pairs(
    transform: str, esn: bool, encap_port: int | None, rng: random.Random
) -> list[tuple[Pair, list[object]]]:
    """Two pairs over the same SAs, the first with fastrun.c's twins, the second with the
    methods, each with the list of what its EXPIREs said (:func:`expired`); lifetimes
    (packets) that the stream reaches, the same on both."""
    soft, hard = rng.randrange(40, 120), rng.randrange(150, 400)
    pairs = []
    for language in ("C", "Python"):
        pair = build_pair(transform, IpsecMode.TUNNEL, 4, esn, replay=64, encap_port=encap_port)
        said: list[object] = []
        managers = (pair.link.key_manager, pair.peer_manager)
        for manager in managers:  # a key manager registered: the EXPIREs have a taker
            manager.handle(Message(MsgType.REGISTER, SaType.ESP, 1, 4242).encode())
        pair.local, pair.peer = (
            Datapath(manager, encap_port=encap_port, notify=recorder(said)) for manager in managers
        )
        ends = ((pair.local, pair.link.key_manager), (pair.peer, pair.peer_manager))
        for datapath, manager in ends:
            if language == "Python":
                datapath._outputs, datapath._open_run = METHODS
            for spi in (sas.OUTBOUND_SPI, sas.INBOUND_SPI):
                state = sa_state(datapath, manager, spi)
                state.iv_salt = SALT
                state.sa.soft = Lifetime(4, allocations=soft)
                state.sa.hard = Lifetime(3, allocations=hard)
                state.update_limits()
        pairs.append((pair, said))
    return pairs


def recorder(said: list[object]) -> Callable[[list[bytes]], None]:
    """A data path's ``notify`` that records what each notice says (:func:`expired`)."""
    return lambda messages: said.extend(map(expired, messages))


def expired(message: bytes) -> object:
    """What a notice says, but for times: its type, and the usage of each lifetime in it
    (an EXPIRE's current usage says at which packet a limit fired)."""
    decoded = decode(message)
    usage = [(e.exttype, e.allocations, e.nbytes) for e in decoded.extensions
             if isinstance(e, Lifetime)]  # fmt: skip
    return decoded.type, usage


def outbound_batches(pair: Pair, rng: random.Random) -> list[list[bytes]]:
    """Batches of 1 to 50 packets: mostly the two flows' packets, sometimes a packet with a
    length that is not its own, one that is not IP, or a truncated header."""
    flows = inner_packets(pair)
    batches = []
    for _ in range(rng.randrange(6, 14)):
        batch = []
        for _ in range(rng.randrange(1, 51)):
            packet = rng.choice(flows)
            odd = rng.random()
            if odd < 0.03:
                packet = packet[:-1]  # its stated length is now wrong
            elif odd < 0.05:
                packet = bytes(30)  # not IP
            elif odd < 0.06:
                packet = packet[:19]
            batch.append(packet)
        batches.append(batch)
    return batches


def mutated(payloads: list[bytes], rng: random.Random) -> list[bytes]:
    """The ESP stream as an unkind network hands it over: bytes flipped, packets cut,
    replayed, swapped with the next one, or given an unknown SPI."""
    stream: list[bytes] = []
    for sent in payloads:
        roll, payload = rng.random(), sent
        if roll < 0.06:
            at = rng.randrange(len(sent))
            payload = sent[:at] + bytes((sent[at] ^ 1 << rng.randrange(8),)) + sent[at + 1 :]
        elif roll < 0.09:
            payload = sent[: rng.randrange(len(sent))]
        elif roll < 0.12 and stream:
            stream.append(rng.choice(stream))
        elif roll < 0.15 and stream:
            stream.insert(len(stream) - 1, sent)
            continue
        elif roll < 0.17:
            payload = b"\x77\x77\x77\x77" + sent[4:]
        stream.append(payload)
    return stream


def usage(pair: Pair) -> list[object]:
    """Both ends' counters, and per SA state (expired SAs' too) its usage, last number
    sent, window and drops."""
    seen: list[object] = [pair.local.stats(), pair.peer.stats()]
    for datapath in (pair.local, pair.peer):
        for key, state in sorted(datapath.states().items()):
            sa, replay = state.sa, state.replay
            seen.append((key, sa.nbytes, sa.allocations, state.seq, replay.top, replay.bitmap,
                         dict(state.drops)))  # fmt: skip
    return seen


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("transform", "esn", "encap_port"), CASES, ids=[c[0] for c in CASES])
def test_the_c_twins_agree_with_the_methods_on_random_streams(transform, esn, encap_port, seed):
    rng = random.Random(seed)
    (c, c_said), (python, python_said) = twin_pairs(transform, esn, encap_port, rng)
    batches = outbound_batches(c, random.Random(rng.random()))
    sent: dict[str, list[list[Outbound]]] = {}
    for name, pair in (("C", c), ("Python", python)):
        sent[name] = [pair.local.output_many(batch) for batch in batches]
    assert sent["C"] == sent["Python"], f"seed {seed}: output_many differs"
    outs = [out for batch in sent["C"] for out in batch if out.dport >= 0]
    assert outs, f"seed {seed}: nothing was protected"
    stream = mutated([out.payload for out in outs], random.Random(rng.random()))
    cuts = sorted(rng.sample(range(1, len(stream)), min(8, len(stream) - 1)))
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    received: dict[str, list[list[bytes]]] = {}
    for name, pair in (("C", c), ("Python", python)):
        src, dst, udp = outs[0].src, outs[0].dst, encap_port is not None
        received[name] = [pair.peer.input_many(piece, src, dst, udp=udp) for piece in pieces]
    assert received["C"] == received["Python"], f"seed {seed}: input_many differs"
    assert any(received["C"]), f"seed {seed}: nothing was let through"
    assert usage(c) == usage(python), f"seed {seed}: counters, usage or windows differ"
    assert c_said == python_said, f"seed {seed}: the lifetimes fired at other packets"
    assert c_said, f"seed {seed}: no lifetime fired"
