"""``python -m bench.espd``: TCP through two ``cryptoapi espd`` endpoints, and through
strongSwan's kernel-libipsec (the anchor, ``../shared/tools/strongswan-anchor``) in the same
topology, measured one after the other in the same run; Mbit/s and their ratio per transform.

Topology, as the anchor's: two namespaces (espA, espB) joined by a veth pair (eA
198.51.100.11/24, eB 198.51.100.12/24; the anchor's ssA/ssB use .1/.2 and may be up at the
same time), one persistent TUN ``espd0`` in each (MTU 1400, as kernel-libipsec's
``ipsec0``) with the inner address 10.93.1.1 or 10.93.2.1 and a route to the other's /24,
one espd per namespace with a setkey file (ESP in UDP 4500 to 4500, tunnel mode, one SA
each way) and iperf3 from espA to espB. Transforms, and the anchor's proposal for each:
AES-GCM-16 (aes128gcm16), AES-CBC with HMAC-SHA-256 (aes128-sha256), ChaCha20-Poly1305
(chacha20poly1305).

Per transform: ``ESPD_BENCH_RUNS`` (3) TCP runs of ``ESPD_BENCH_SECS`` (10) seconds; the
median receiver-side Mbit/s, and per run both espds' CPU seconds (utime + stime of
/proc/PID/stat), packets handled (their SIGUSR1 counters), UDP receive-buffer drops, TUN
queue drops and the load average before, as the anchor's bench.sh records; then one UDP
run of 5 s per offered rate (``--udp-rates``, 1348-byte datagrams: what arrived and the
share lost, and where the kernel dropped them: UDP receive buffers in each namespace, of
which espd's ESP sockets, and TUN queues; the table shows the most carried losing under
1%); then the anchor (``run.sh`` with the same TCP_RUNS/TCP_SECS and UDP_RATES), its JSON
files parsed, its UDP runs with the receive-buffer drops bench.sh records. The
order of espd and anchor alternates from transform to transform, so drift on a shared
machine hits both alike.

``--profile``: one more run per side with that side's espd under cProfile (SIGTERM ends
espd's loop, ``python -m cryptoapi`` then raises SystemExit, which cProfile catches before
writing the profile). Self time is grouped into stages (TUN read/write, UDP send/recv,
SPD/SAD lookup, crypto, ESP framing, loop; a builtin or standard-library function counts
where its callers are) and divided by the packets that espd handled (its counters at exit).
cProfile's clock is the wall clock, so epoll's time is mostly waiting: only its calls times
the cost of a ready poll count as work. The stages' shares are then applied to the
unprofiled CPU time per packet, since cProfile's own cost grows with the number of calls.

``--levers``: what would make it faster, measured: the data path alone (no I/O) per packet,
the syscalls espd makes against cheaper forms of them on loopback, a larger TUN MTU
(``--lever-mtu``, 9000: fewer, larger packets per byte, what TSO/GRO on the TUN would give;
the kernel fragments the outer UDP on the 1500-byte veth), and whether a second espd can
serve the same TUN.

Needs root, iperf3, and for the anchor strongSwan and ping (``scripts/bench-deps``, which
``make bench`` runs, installs them where it can). Without them it says so and skips: the
whole benchmark, or the anchor's rows; only a side that could run and failed fails it.
Namespaces and processes are removed at exit, even on failure or SIGTERM; every wait is
bounded.
"""

import argparse
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from bench.common import skipped
from bench.system.anchor import measure_anchor
from bench.system.iperf import iperf3_server, measure_espd
from bench.system.latency import wake_floor_us
from bench.system.levers import levers, machine_levers
from bench.system.profile import print_profile, profile_side
from bench.system.records import Side
from bench.system.report import Result, print_table, save
from bench.system.topology import LAYOUT, NAMESPACES, TRANSFORMS, Transform
from tests import netns
from tests.netns import Host, StepError


def bench_transform(
    hosts: tuple[Host, Host],
    transform: Transform,
    work: Path,
    options: argparse.Namespace,
    anchor_first: bool,
) -> Result:
    print(f"=== {transform.name} (anchor {transform.proposal})", flush=True)
    runs, secs, rates = options.runs, options.secs, options.udp_rates.split()

    def anchor() -> Side | None:
        if options.no_anchor:
            return None
        side = measure_anchor(transform, work / transform.name, runs, secs, rates)
        if side.skipped:
            skipped(f"  anchor {transform.proposal}", side.error or "")
        elif side.error:
            print(f"  anchor {transform.proposal}: {side.error}", flush=True)
        return side

    first = anchor() if anchor_first else None
    espd = measure_espd(
        hosts, transform, work, runs, secs, espd_options=options.espd_arg, udp_rates=rates
    )
    if espd.error:
        print(f"  espd {transform.name}: {espd.error}", flush=True)
    result = Result(transform, espd, first if anchor_first else anchor())
    if options.plain:
        result.plain = measure_espd(
            hosts, transform, work, runs, secs, label="plain", espd_options=["--no-offload"]
        )
    if options.profile:
        for index in (0, 1):
            try:
                profile = profile_side(hosts, transform, work, secs, index)
            except (StepError, OSError, KeyError, ValueError, EOFError) as error:
                print(f"  profile {NAMESPACES[index]}: {error}", flush=True)
                continue
            profile.unprofiled_us_per_packet = espd.us_per_packet(index)
            result.profiles.append(profile)
            print_profile(profile)
    if options.levers:
        result.levers = levers(hosts, transform, work, options)
    return result


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.espd",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--transform",
        action="append",
        choices=sorted(TRANSFORMS),
        help="only this transform (repeatable; default all three)",
    )
    parser.add_argument(
        "--udp-rates",
        default="250M 375M 500M 550M 625M 700M 750M 875M 1000M 1125M 1250M 1375M 1500M 1750M",
        metavar="RATES",
        help="UDP runs at these offered rates, both sides ('' for none); from 250M, so that"
        " a slower machine, where neither side carries 500M under 1%% lost, still finds the"
        " line, and closer where both sides' lines were found (500M to 1000M)",
    )
    parser.add_argument("--no-anchor", action="store_true", help="skip strongSwan")
    parser.add_argument(
        "--espd-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="pass ARG to the measured espds (repeatable; e.g. --espd-arg=--no-tso)",
    )
    parser.add_argument(
        "--plain", action="store_true", help="also measure espd --no-offload (no TUN/UDP offloads)"
    )
    parser.add_argument("--profile", action="store_true", help="profile each espd (one run)")
    parser.add_argument("--levers", action="store_true", help="measure what would help")
    parser.add_argument(
        "--lever-mtu",
        type=int,
        action="append",
        default=None,
        help="TUN MTU tried with --levers (repeatable; default 9000)",
    )
    parser.add_argument("--json", metavar="FILE", help="save everything here")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    runs, secs = (env_int(os.environ, f"ESPD_BENCH_{n}", d) for n, d in (("RUNS", 3), ("SECS", 10)))
    parser.add_argument("--runs", type=int, default=runs, help="TCP runs (ESPD_BENCH_RUNS, 3)")
    parser.add_argument("--secs", type=int, default=secs, help="seconds each (ESPD_BENCH_SECS, 10)")
    options = parser.parse_args(argv)
    options.lever_mtu = options.lever_mtu or [9000]
    return options


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # so that every finally (namespaces, processes) runs


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(argv)
    why = netns.unavailable("iperf3")
    if why:
        skipped("bench.espd", f"{why} (scripts/bench-deps installs iperf3)")
        return 0
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminate)
    transforms = [TRANSFORMS[name] for name in options.transform or TRANSFORMS]
    work = Path(tempfile.mkdtemp(prefix="bench-espd-"))
    results: list[Result] = []
    extra: dict[str, object] = {}
    status = 0
    try:
        with (
            netns.hosts(LAYOUT) as hosts,
            iperf3_server(hosts[1]),
        ):
            for number, transform in enumerate(transforms):
                results.append(bench_transform(hosts, transform, work, options, number % 2 == 1))
            extra["wake_floor_us"] = floor = wake_floor_us(hosts)
            print(f"  the machine: a Python UDP echo between the namespaces, idle (two wake-ups a "
                  f"round trip), median RTT {floor['as placed']:.0f} us; both on one CPU "
                  f"{floor['one CPU']:.0f} us", flush=True)  # fmt: skip
            if options.levers:
                extra.update(machine_levers(hosts, transforms[0], work))
                print(f"  second espd: {extra['second_espd_on_the_tun']}")
                print(f"  syscalls (loopback): {extra['syscalls_loopback']}", flush=True)
    except StepError as error:
        print(f"bench.espd: {error}", file=sys.stderr)
        status = 1
    finally:  # what was measured is shown and saved, even after a failure or a signal
        if options.keep:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
        if results:
            print_table(results)
        if options.json:
            save(Path(options.json), options, results, extra)
    failed = [
        f"{what} {result.transform.name}"
        for result in results
        for what, side in (("espd", result.espd), ("anchor", result.anchor))
        if side is not None and side.error and not side.skipped
    ]
    if failed:  # a side that could run here and did not: a failure, unlike a skipped one
        print(f"bench.espd: failed: {', '.join(failed)} (above)", file=sys.stderr)
        status = 1
    return status


def env_int(environ: Mapping[str, str], name: str, default: int) -> int:
    value = environ.get(name, "").strip()
    return int(value) if value else default
