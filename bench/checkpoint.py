"""The sequence-number checkpoint's cost in espd's data path (issue 23: at most 2% of its
throughput).

Run: ``python -m bench.checkpoint [--quick]``.

espd's loop, in this process, without devices: each turn protects a batch of 64 packets
(1,400 bytes) of bench.esp's tunnel-mode AES-GCM SA (``Datapath.output_many``, with a
sequence floor file as espd keeps one) and then sends the usage reports that are due, as
``Notices.flush`` does;
1,000 other SAs sit idle in the SAD, so every report scans them all. Side by side, in
alternating rounds:

- *without*: the reports every 2 s only (espd before the checkpoints);
- *with*: the checkpoints as espd sends them (:mod:`cryptoapi.pfkey.daemon.checkpoint`):
  also a report at once after each N packets of an SA (the floor file's reservation makes
  it due), here with N lowered to 4,096 (16 times the default's rate) so that the run
  holds many of them.

The reports go to a list (keyd's socket costs the same either way: a non-blocking send).
The cost per packet is the difference of the two, and its share of the throughput.
"""

import argparse
import os
import tempfile
import time

from bench.common import goal_note
from bench.esp import LOCAL, PEER, TRANSFORMS, inner_packet, setkey_text
from cryptoapi import Registry
from cryptoapi.esp import Datapath
from cryptoapi.esp.espd.reports import UsageReports
from cryptoapi.esp.seqfloor import SequenceFloors
from cryptoapi.pfkey import KeyManager
from cryptoapi.pfkey.setkey.apply import LocalTransport, apply
from cryptoapi.pfkey.setkey.parser import parse

BATCH = 64
IDLE_SAS = 1_000
STEP = 4_096
"""N for this run: the packets between two checkpoints of an SA (espd's default: 65,536)."""


def _setup(where: str, name: str) -> tuple[Datapath, UsageReports, SequenceFloors, list[bytes]]:
    """bench.esp's tunnel (AES-GCM) and ``IDLE_SAS`` more SAs, a floor file, the reports."""
    algorithms = TRANSFORMS["aes-gcm-16"][0]
    idle = "".join(
        f"add {LOCAL} {PEER} esp {0x10_0000 + n:#x} -m tunnel {algorithms};\n"
        for n in range(IDLE_SAS)
    )
    key_manager = KeyManager(Registry(selftests="off"))
    text = setkey_text(algorithms, reverse=False) + idle.format(k20=bytes(range(20)).hex())
    for outcome in apply(parse(text), LocalTransport(key_manager)):
        assert outcome.ok, outcome.describe_errors()
    floors = SequenceFloors(os.path.join(where, name), step=STEP)
    datapath = Datapath(key_manager, floors=floors)
    reports = UsageReports(key_manager, datapath.states, lambda: 1)
    return datapath, reports, floors, [inner_packet() for _ in range(BATCH)]


def _run(datapath: Datapath, reports: UsageReports, batch: list[bytes], turns: int) -> float:
    """Packets a second over ``turns`` turns of espd's loop."""
    sent: list[bytes] = []
    forward = sent.append
    start = time.perf_counter()
    for _ in range(turns):
        datapath.output_many(batch)
        reports.send(lambda data: forward(data) is None)
    elapsed = time.perf_counter() - start
    return turns * len(batch) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer packets")
    args = parser.parse_args()
    turns, rounds = (500, 3) if args.quick else (2_000, 7)
    with tempfile.TemporaryDirectory() as where:
        without = _setup(where, "without.seq")
        with_checkpoints = _setup(where, "with.seq")
        with_checkpoints[2].on_reserve = with_checkpoints[1].checkpoint
        best_without = best_with = 0.0
        for _ in range(rounds):
            best_without = max(best_without, _run(without[0], without[1], without[3], turns))
            best_with = max(
                best_with,
                _run(with_checkpoints[0], with_checkpoints[1], with_checkpoints[3], turns),
            )
        checkpoints = with_checkpoints[1].sent
        for datapath, _, _, _ in (without, with_checkpoints):
            datapath.close()
    per_packet = (1 / best_with - 1 / best_without) * 1e6
    cost = (best_without - best_with) / best_without * 100  # below 0: within the noise
    print(f"data path, {BATCH}-packet turns, {IDLE_SAS:,} idle SAs, N = {STEP:,} packets")
    print(f"  without checkpoints {best_without:12,.0f} packets/s")
    print(f"  with checkpoints    {best_with:12,.0f} packets/s   ({checkpoints} reports sent)")
    print(
        f"checkpoint cost per packet {per_packet:+.3f} us, {cost:+.2f}% of throughput "
        f"{goal_note(max(cost, 0.0), '<= 2%')}",
        flush=True,
    )


if __name__ == "__main__":
    main()
