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
queue drops and the load average before, as the anchor's bench.sh records; then the anchor
(``run.sh`` with the same TCP_RUNS/TCP_SECS and no UDP runs), its JSON files parsed. The
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
import contextlib
import dataclasses
import hashlib
import json
import marshal
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from bench import netns
from bench.common import skipped
from bench.netns import BenchError, Daemon, Host

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
ANCHOR = Path(os.environ.get("ESPD_BENCH_ANCHOR", ROOT.parent / "shared/tools/strongswan-anchor"))
NAMESPACES = ("espA", "espB")
VETHS = ("eA", "eB")
OUTER = ("198.51.100.11", "198.51.100.12")
INNER = ("10.93.1.1", "10.93.2.1")
NETS = ("10.93.1.0/24", "10.93.2.0/24")
TUN = "espd0"
MTU = 1400
REPLAY = 128
SPIS = (0x1001, 0x2002)  # espA -> espB, espB -> espA
IPERF_PORT = 5201
READY = 30.0  # espd's start (imports, the setkey file) on a loaded machine
GB = 1e9
ROUNDS = 5  # of the in-process timings (--levers): the best counts


@dataclass(frozen=True)
class Transform:
    name: str
    proposal: str  # the anchor's esp_proposals
    enc: str
    enc_key: int  # bytes (with the salt of a combined mode)
    auth: str = ""
    auth_key: int = 0

    def options(self, spi: int) -> str:
        """setkey's algorithm options for the SA ``spi`` (keys derived from it)."""
        text = f"-E {self.enc} 0x{_key(spi, 'enc', self.enc_key)}"
        if self.auth:
            text += f" -A {self.auth} 0x{_key(spi, 'auth', self.auth_key)}"
        return text


TRANSFORMS = {
    t.name: t
    for t in (
        Transform("aes-gcm-16", "aes128gcm16", "aes-gcm-16", 20),
        Transform("aes-cbc-hmac-sha256", "aes128-sha256", "aes-cbc", 16, "hmac-sha256", 32),
        Transform("chacha20-poly1305", "chacha20poly1305", "chacha20-poly1305", 36),
    )
}


def _key(spi: int, use: str, size: int) -> str:
    return hashlib.shake_256(f"bench.espd {spi:#x} {use}".encode()).hexdigest(size)


def setkey_text(transform: Transform, index: int) -> str:
    """The SA pair (the same on both sides) and side ``index``'s (0: espA) mirrored
    tunnel policies."""
    (a, b), (up, down) = OUTER, SPIS
    sas = [
        f"add {a} {b} esp {up:#x} -m tunnel -r {REPLAY} {transform.options(up)} ;",
        f"add {b} {a} esp {down:#x} -m tunnel -r {REPLAY} {transform.options(down)} ;",
    ]
    here, there, net, peer_net = OUTER[index], OUTER[1 - index], NETS[index], NETS[1 - index]
    policies = [
        f"spdadd {net} {peer_net} any -P out ipsec esp/tunnel/{here}-{there}/require ;",
        f"spdadd {peer_net} {net} any -P in ipsec esp/tunnel/{there}-{here}/require ;",
    ]
    return "\n".join([*sas, *policies, ""])


# -- one TCP run -------------------------------------------------------------------------


@dataclass
class TcpRun:
    """One iperf3 TCP run and what the endpoints (A, B) spent on it."""

    name: str
    recv_mbps: float
    sent_mbps: float
    recv_bytes: int
    seconds: float
    retransmits: int
    cpu_s: tuple[float, float]
    loadavg1_before: float
    machine: netns.MachineUse
    iperf3_cpu_s: float  # client + server (iperf3's own cpu_utilization_percent)
    udp_rcvbuf_errors: tuple[int, int]
    packets: tuple[int, int] = (0, 0)  # espd: packets handled (TUN in + ESP received)
    tun_tx_drops: tuple[int, int] = (0, 0)  # espd: packets the kernel dropped for espd
    sys_s: tuple[float, float] | None = None  # espd: the system part of cpu_s

    @property
    def cpu_per_gb(self) -> float:
        return sum(self.cpu_s) / (self.recv_bytes / GB) if self.recv_bytes else float("nan")

    @property
    def unattributed_s(self) -> float:
        """The machine's busy seconds no process alive at both ends of the run had:
        short-lived processes (other tenants' tests), mostly."""
        known = sum(self.cpu_s) + self.iperf3_cpu_s + self.machine.others_cpu_s
        return round(self.machine.cpu_s - known - self.machine.kernel_threads_cpu_s, 2)


@dataclass
class Side:
    """Every run of one endpoint kind (espd or the anchor) for one transform."""

    runs: list[TcpRun] = field(default_factory=list)
    error: str | None = None
    skipped: bool = False  # error says why this side cannot run here: not a failure
    notes: list[str] = field(default_factory=list)

    @property
    def median_mbps(self) -> float | None:
        return statistics.median(r.recv_mbps for r in self.runs) if self.runs else None

    @property
    def cpu_per_gb(self) -> float | None:
        gigabytes = sum(r.recv_bytes for r in self.runs) / GB
        return sum(sum(r.cpu_s) for r in self.runs) / gigabytes if gigabytes else None

    def us_per_packet(self, side: int) -> float | None:
        packets = sum(r.packets[side] for r in self.runs)
        return sum(r.cpu_s[side] for r in self.runs) / packets * 1e6 if packets else None

    def summary(self) -> dict[str, object]:
        return {
            "median_mbps": self.median_mbps,
            "min_max_mbps": [
                min(r.recv_mbps for r in self.runs),
                max(r.recv_mbps for r in self.runs),
            ]
            if self.runs
            else None,
            "cpu_s_per_gb": self.cpu_per_gb,
            "us_per_packet": [self.us_per_packet(0), self.us_per_packet(1)],
            "error": self.error,
            "notes": self.notes,
            "runs": [
                {
                    **dataclasses.asdict(r),
                    "cpu_s_per_gb": r.cpu_per_gb,
                    "unattributed_s": r.unattributed_s,
                }
                for r in self.runs
            ],
        }


def iperf3(client: Host, secs: int) -> dict[str, Any]:
    """One iperf3 TCP run from ``client`` to the other side's inner address; its JSON."""
    server = INNER[1] if client.inner == INNER[0] else INNER[0]
    argv = client.ns.argv(
        "iperf3",
        "-c",
        server,
        "-B",
        client.inner,
        "-p",
        str(IPERF_PORT),
        "-J",
        "-t",
        str(secs),
        "--connect-timeout",
        "5000",
    )
    try:
        done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=secs + 30)
    except subprocess.TimeoutExpired:
        raise BenchError(f"iperf3: no result within {secs + 30} s") from None
    try:
        result: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise BenchError(f"iperf3 printed no JSON: {done.stdout[-500:]} {done.stderr}") from None
    if "error" in result:
        raise BenchError(f"iperf3: {result['error']}")
    return result


def _from_iperf(name: str, result: dict[str, Any]) -> dict[str, Any]:
    end = result["end"]
    received, sent, cpu = end["sum_received"], end["sum_sent"], end["cpu_utilization_percent"]
    return {
        "name": name,
        "recv_mbps": round(received["bits_per_second"] / 1e6, 1),
        "sent_mbps": round(sent["bits_per_second"] / 1e6, 1),
        "recv_bytes": int(received["bytes"]),
        "seconds": round(received["seconds"], 2),
        "retransmits": int(sent.get("retransmits", 0)),
        "iperf3_cpu_s": round(
            (cpu.get("host_total", 0.0) + cpu.get("remote_total", 0.0)) * sent["seconds"] / 100, 2
        ),
    }


# -- espd --------------------------------------------------------------------------------


def seq_state(work: Path, name: str) -> Path:
    """Where the espd ``name`` keeps its sequence floors: one file each, as espd requires
    (both TUNs are espd0, so espd's default, per TUN name, would be one file for both),
    kept for the whole run, so a restarted espd goes on past its floors."""
    return work / f"{name}.seq"


class EspdPair:
    """An espd in each namespace for one transform; ``profile`` puts one under cProfile."""

    def __init__(
        self,
        hosts: tuple[Host, Host],
        transform: Transform,
        work: Path,
        *,
        mtu: int = MTU,
        profile: tuple[int, Path] | None = None,
        espd_options: Sequence[str] = (),
    ) -> None:
        self.hosts = hosts
        self.daemons: list[Daemon] = []
        try:
            for index, host in enumerate(hosts):
                conf = work / f"{host.ns.name}-{transform.name}.conf"
                conf.write_text(setkey_text(transform, index))
                espd = [
                    *("-m", "cryptoapi", "espd", "--tun", TUN, "-f", str(conf)),
                    *("--mtu", str(mtu), "--seq-state", str(seq_state(work, host.ns.name))),
                    *espd_options,
                ]
                if profile is not None and profile[0] == index:
                    espd = ["-m", "cProfile", "-o", str(profile[1]), *espd]
                label = f"espd in {host.ns.name}"
                self.daemons.append(host.ns.start(PYTHON, *espd, label=label, cwd=str(ROOT)))
            for daemon in self.daemons:
                daemon.wait_for("espd: ready", READY)
        except BaseException:
            self.stop()
            raise

    @property
    def pids(self) -> tuple[int, int]:
        return self.daemons[0].pid, self.daemons[1].pid

    def counters(self) -> tuple[dict[str, int], dict[str, int]]:
        """Each espd's counters now (SIGUSR1)."""
        found = []
        for daemon in self.daemons:
            start = daemon.out_size()
            found.append(netns.parse_counters(daemon.output_after(start, signal.SIGUSR1)))
        return found[0], found[1]

    def check_alive(self) -> None:
        for daemon in self.daemons:
            if daemon.process.poll() is not None:
                raise BenchError(f"{daemon.label} exited: {daemon.stderr().strip()[-1000:]}")

    def stop(self) -> list[dict[str, int]]:
        """Stop both (SIGTERM); the counters each printed at exit."""
        for daemon in self.daemons:
            daemon.stop()
        return [netns.parse_counters(daemon.stdout()) for daemon in self.daemons]


def handled(counters: dict[str, int]) -> int:
    """Packets an espd took in: from the TUN, and from the ESP sockets."""
    return counters.get("EspdTunInPackets", 0) + counters.get("EspdReceivePackets", 0)


def espd_run(name: str, pair: EspdPair, secs: int) -> TcpRun:
    """One measured iperf3 run through ``pair``."""
    pids = pair.pids
    load = netns.loadavg1()
    before = pair.counters()
    machine0 = netns.snapshot()
    cpu0 = [netns.cpu_split(pid) for pid in pids]
    rcvbuf0 = [netns.udp_rcvbuf_errors(pid) for pid in pids]
    drops0 = [netns.link_drops(pid, TUN)["tx_drop"] for pid in pids]
    result = iperf3(pair.hosts[0], secs)
    cpu1 = [netns.cpu_split(pid) for pid in pids]
    machine1 = netns.snapshot()
    rcvbuf1 = [netns.udp_rcvbuf_errors(pid) for pid in pids]
    drops1 = [netns.link_drops(pid, TUN)["tx_drop"] for pid in pids]
    after = pair.counters()
    pair.check_alive()
    mine = {*pids, os.getpid(), *(d.pid for d in pair.hosts[1].ns.daemons)}
    return TcpRun(
        **_from_iperf(name, result),
        machine=netns.machine_use(machine0, machine1, mine, ("iperf3", "ip")),
        cpu_s=(round(sum(cpu1[0]) - sum(cpu0[0]), 2), round(sum(cpu1[1]) - sum(cpu0[1]), 2)),
        sys_s=(round(cpu1[0][1] - cpu0[0][1], 2), round(cpu1[1][1] - cpu0[1][1], 2)),
        loadavg1_before=load,
        udp_rcvbuf_errors=(rcvbuf1[0] - rcvbuf0[0], rcvbuf1[1] - rcvbuf0[1]),
        packets=(handled(after[0]) - handled(before[0]), handled(after[1]) - handled(before[1])),
        tun_tx_drops=(drops1[0] - drops0[0], drops1[1] - drops0[1]),
    )


def warm_up(pair: EspdPair) -> None:
    """A one-second run: the tunnel carries TCP (and the SAs' transforms are built and
    self-tested on their first packets, outside the measured runs)."""
    try:
        result = iperf3(pair.hosts[0], 1)
    except BenchError as error:
        a, b = pair.counters()
        shown = {k: v for k, v in {**a, **b}.items() if v and k.startswith(("Xfrm", "Espd"))}
        raise BenchError(f"no TCP through the tunnel ({error}); counters: {shown}") from None
    if not result["end"]["sum_received"]["bytes"]:
        raise BenchError("no TCP bytes through the tunnel")


def measure_espd(
    hosts: tuple[Host, Host],
    transform: Transform,
    work: Path,
    runs: int,
    secs: int,
    *,
    mtu: int = MTU,
    label: str = "tcp",
    espd_options: Sequence[str] = (),
) -> Side:
    side = Side()
    try:
        pair = EspdPair(hosts, transform, work, mtu=mtu, espd_options=espd_options)
    except BenchError as error:
        return Side(error=str(error))
    try:
        warm_up(pair)
        for number in range(1, runs + 1):
            side.runs.append(espd_run(f"{label}{number}", pair, secs))
            print(f"  espd {transform.name} {label}{number}: {_line(side.runs[-1])}", flush=True)
            time.sleep(2)  # as bench.sh: the queues drain between runs
    except (BenchError, KeyError, ValueError, OSError) as error:
        side.error = f"{type(error).__name__}: {error}"
    finally:
        pair.stop()
    return side


def _line(run: TcpRun) -> str:
    line = f"{run.recv_mbps:7.1f} Mbit/s (retr {run.retransmits})"
    for index, name in enumerate("AB"):
        line += f" {name} {run.cpu_s[index]:.2f}s CPU"
        if run.sys_s is not None:
            line += f" ({run.sys_s[index]:.2f} sys, {run.packets[index]} pkt)"
    drops = f"UDP rcvbuf drops {run.udp_rcvbuf_errors[0]}/{run.udp_rcvbuf_errors[1]}"
    if run.sys_s is not None:
        drops += f", TUN drops {run.tun_tx_drops[0]}/{run.tun_tx_drops[1]}"
    return (
        f"{line}; iperf3 {run.iperf3_cpu_s:.2f}s; {drops}; load {run.loadavg1_before},"
        f" machine {run.machine.cpu_s:.2f}s CPU (busy {run.machine.busy},"
        f" irq+softirq {run.machine.irq_s:.2f}s, others"
        f" {run.machine.others_cpu_s:.2f}s {list(run.machine.others_top[:2])},"
        f" kernel threads {run.machine.kernel_threads_cpu_s:.2f}s, unattributed"
        f" {run.unattributed_s:.2f}s)"
    )


@contextlib.contextmanager
def iperf3_server(host: Host) -> Iterator[Daemon]:
    argv = ("iperf3", "-s", "-B", host.inner, "-p", str(IPERF_PORT), "--forceflush")
    server = host.ns.start(*argv, label=f"iperf3 server in {host.ns.name}")
    try:
        server.wait_for("Server listening", netns.WAIT, stream="stdout")
        yield server
    finally:
        server.stop()


# -- the anchor --------------------------------------------------------------------------


def measure_anchor(transform: Transform, work: Path, runs: int, secs: int) -> Side:
    """``run.sh OUT PROPOSAL`` (TCP runs only), its per-run files parsed."""
    why = _anchor_unavailable()
    if why:
        return Side(error=why, skipped=True)
    out, wd = work / "anchor", work / "anchor-wd"
    env = {
        **os.environ,
        "WD": str(wd),
        "TCP_RUNS": str(runs),
        "TCP_SECS": str(secs),
        "UDP_RATES": " ",
        "PY": PYTHON,
    }
    # UDP_RATES="" would mean the default rates to bench.sh's ${UDP_RATES:-...}: a blank
    # is set and non-empty, and its for loop then has nothing to run.
    timeout = 90 + runs * (secs + 10)
    try:
        log = _run_anchor(
            ["bash", str(ANCHOR / "run.sh"), str(out), transform.proposal], env, timeout
        )
    finally:
        _anchor_cleanup(env)
    (wd / "run.log").write_text(log)
    side = Side(notes=[line for line in log.splitlines() if "selected proposal: ESP" in line])
    directory = out / transform.proposal
    for number in range(1, runs + 1):
        try:
            side.runs.append(_anchor_run(directory, transform.proposal, f"tcp{number}"))
        except (OSError, KeyError, ValueError) as error:
            side.error = f"run tcp{number}: no result ({error}); run.sh said: {log[-1500:]}"
            break
        print(f"  anchor {transform.proposal} tcp{number}: {_line(side.runs[-1])}", flush=True)
    return side


def _anchor_unavailable() -> str | None:
    if not (ANCHOR / "run.sh").exists():
        return f"no anchor scripts at {ANCHOR}"
    missing = [t for t in ("swanctl", "iperf3", "ping") if shutil.which(t) is None]
    if missing or not os.path.exists("/usr/lib/ipsec/charon"):
        return (
            f"strongSwan's anchor needs {', '.join(missing) or '/usr/lib/ipsec/charon'}"
            f" (scripts/bench-deps installs them; {ANCHOR / 'README.md'})"
        )
    taken = [ns for ns in ("ssA", "ssB") if netns.netns_exists(ns)]
    if taken:
        return f"namespace {', '.join(taken)} exists: another anchor run? (not touched)"
    return None


def _run_anchor(argv: list[str], env: dict[str, str], timeout: float) -> str:
    """Run the anchor in its own process group; on timeout that group is ended."""
    process = subprocess.Popen(
        argv,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                output, _ = process.communicate(timeout=netns.WAIT)
                break
        else:
            output = ""
        output += f"\n(run.sh: no exit within {timeout:.0f} s, stopped)"
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(netns.WAIT)
        raise
    if process.returncode:
        output += f"\n(run.sh exit status {process.returncode})"
    return output


def _anchor_cleanup(env: dict[str, str]) -> None:
    """What run.sh leaves when it fails before its trap is set (netns_up.sh failing):
    its charons (by the PIDs it recorded) and its namespaces. Called only after
    _anchor_unavailable found no ssA/ssB, so any there now are this run's."""
    for script in ("stop_charons.sh", "netns_down.sh"):
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(
                ["bash", str(ANCHOR / script)],
                env=env,
                capture_output=True,
                timeout=30,
                check=False,
            )


ANCHOR_TOOLS = ("iperf3", "charon", "ping", "ip", "cat", "awk", "sleep", "bash", "date", "cut")
"""What the anchor's scripts run (summarize.py leaves the same out of "other tenants")."""


def _anchor_run(directory: Path, label: str, name: str) -> TcpRun:
    result = json.loads((directory / f"{label}-{name}.json").read_text())
    if "error" in result:
        raise ValueError(result["error"])
    cpu = json.loads((directory / f"{label}-{name}.cpu.json").read_text())
    snapshots = []
    for number in (0, 1):
        with (directory / f"{label}-{name}.procstat{number}").open(errors="replace") as lines:
            snapshots.append(netns.parse_snapshot(lines))
    mine = {int(pid) for pid in (directory / f"{label}-{name}.mypids").read_text().split()}
    return TcpRun(
        **_from_iperf(name, result),
        machine=netns.machine_use(snapshots[0], snapshots[1], mine, ANCHOR_TOOLS),
        cpu_s=(cpu["charonA_cpu_s"], cpu["charonB_cpu_s"]),
        loadavg1_before=float(cpu["loadavg1_before"]),
        udp_rcvbuf_errors=(cpu["udp_rcvbuf_errors_A"], cpu["udp_rcvbuf_errors_B"]),
    )


# -- the profile -------------------------------------------------------------------------

FuncKey = tuple[str, int, str]
RawStats = dict[FuncKey, tuple[int, int, float, float, dict[FuncKey, tuple[Any, ...]]]]

STAGES = ("tun", "offload", "udp", "lookup", "crypto", "framing", "loop", "epoll_wait")
STAGE_NAMES = {
    "tun": "TUN read/write",
    "offload": "TUN offload (cut/coalesce)",
    "udp": "UDP send/recv",
    "lookup": "SPD/SAD lookup",
    "crypto": "crypto",
    "framing": "ESP framing",
    "loop": "loop overhead",
    "epoll_wait": "epoll_wait (busy)",
    "idle": "idle (estimate)",
    "setup": "start-up",
}
LOOKUP = frozenset(
    ("_plan", "_plan_generations", "_decide", "_allowed", "_verdict", "state_of", "_forget_gone")
)
"""datapath.py's SPD/SAD functions (the SAD's dict lookup on input is inline in _input,
counted as framing)."""


_RULES = (
    ("/cryptoapi/esp/espd/sockets.py", "udp"),
    ("/cryptoapi/esp/espd/tun.py", "tun"),
    ("/cryptoapi/esp/espd/", "loop"),
    ("/cryptoapi/esp/policies.py", "lookup"),
    ("/cryptoapi/pfkey/db/selector.py", "lookup"),
    ("/cryptoapi/pfkey/db/statefind.py", "lookup"),
    ("/cryptoapi/esp/gso.py", "offload"),
    ("/cryptoapi/esp/gro.py", "offload"),
    ("/cryptoapi/esp/vnet.py", "offload"),
    ("/cryptoapi/esp/crypto.py", "crypto"),
    ("/cryptoapi/esp/", "framing"),
    ("/cryptoapi/selftest/", "setup"),
    ("/cryptoapi/registry/", "setup"),
    ("/cryptoapi/pfkey/", "setup"),
    ("/cryptoapi/cli/", "setup"),
    ("/cryptoapi/", "crypto"),  # providers, templates, transforms
    ("/cryptography/", "crypto"),
    ("/selectors.py", "loop"),
    ("<frozen importlib", "setup"),
    ("/importlib/", "setup"),
)
"""Where a function's own time goes, by the first part of its file name that matches."""


def stage_of(key: FuncKey) -> str:
    """The stage a function's own time belongs to; "" when its callers decide (builtins
    and the standard library: ``isinstance``, ``abc``, ``struct`` serve every stage);
    "setup" for start-up work (imports, self-tests, the setkey file)."""
    path, _, name = key
    if path == "~":
        if name in ("<built-in method posix.read>", "<built-in method posix.write>"):
            return "tun"
        if "recvmsg" in name or "sendmsg" in name:
            return "udp"
        if "select.epoll" in name:
            return "epoll_wait"
        return ""
    path = path.replace(os.sep, "/")
    if path.endswith("/cryptoapi/esp/datapath.py") and name in LOOKUP:
        return "lookup"
    return next((stage for part, stage in _RULES if part in path), "")


def _resolve(
    stats: RawStats, key: FuncKey, seen: frozenset[FuncKey], memo: dict[FuncKey, dict[str, float]]
) -> dict[str, float]:
    """The stages ``key``'s time belongs to, as fractions: its own, or else its callers',
    weighted by the time each call site spent in it (through callers that defer too)."""
    stage = stage_of(key)
    if stage:
        return {stage: 1.0}
    if key in memo:
        return memo[key]
    callers = stats[key][4] if key in stats else {}
    weights = {c: float(n[2]) for c, n in callers.items() if c not in seen}
    total = sum(weights.values())
    if not total or len(seen) > 8:
        return {"setup": 1.0}  # the top of the program, or a deep chain of deferrals
    found: dict[str, float] = {}
    for caller, weight in weights.items():
        for where, part in _resolve(stats, caller, seen | {key}, memo).items():
            found[where] = found.get(where, 0.0) + part * weight / total
    memo[key] = found
    return found


def stage_times(stats: RawStats) -> tuple[dict[str, float], list[tuple[float, str, str]]]:
    """Seconds of self time per stage (see :func:`_resolve`), and every function's
    (seconds, main stage, name)."""
    totals = dict.fromkeys((*STAGES, "idle", "setup"), 0.0)
    functions = []
    memo: dict[FuncKey, dict[str, float]] = {}
    for key, (_, _, tottime, _, _) in stats.items():
        shares = _resolve(stats, key, frozenset(), memo)
        for stage, part in shares.items():
            totals[stage] += tottime * part
        functions.append((tottime, max(shares, key=lambda k: shares[k]), _short(key)))
    functions.sort(reverse=True)
    return totals, functions


def _short(key: FuncKey) -> str:
    path, line, name = key
    if path == "~":
        return name
    parts = Path(path).parts
    where = "/".join(parts[parts.index("cryptoapi") :]) if "cryptoapi" in parts else parts[-1]
    return f"{where}:{line}({name})"


@dataclass
class Profile:
    """One espd's profile: seconds per stage, packets, and per packet."""

    side: str
    transform: str
    packets: int
    cpu_s: float
    mbps: float
    seconds: dict[str, float]
    top: list[tuple[float, str, str]]
    polls: int = 0  # epoll_wait calls: loop turns
    unprofiled_us_per_packet: float | None = None

    def us(self, stage: str) -> float:
        return self.seconds[stage] / self.packets * 1e6 if self.packets else float("nan")

    def scaled_us(self, stage: str) -> float | None:
        """The stage's share of the profiled busy time, applied to the unprofiled CPU time
        per packet (cProfile's per-call cost inflates call-heavy stages less this way)."""
        busy = sum(self.seconds[s] for s in STAGES)
        if self.unprofiled_us_per_packet is None or not busy:
            return None
        return self.seconds[stage] / busy * self.unprofiled_us_per_packet

    def summary(self) -> dict[str, object]:
        return {
            "side": self.side,
            "transform": self.transform,
            "packets": self.packets,
            "cpu_s": self.cpu_s,
            "mbps_during_profile": self.mbps,
            "loop_turns": self.polls,
            "packets_per_turn": self.packets / self.polls if self.polls else None,
            "seconds": self.seconds,
            "us_per_packet_profiled": {s: self.us(s) for s in (*STAGES, "idle", "setup")},
            "us_per_packet_scaled": {s: self.scaled_us(s) for s in STAGES},
            "unprofiled_us_per_packet": self.unprofiled_us_per_packet,
            "top": [{"seconds": t, "stage": s, "function": f} for t, s, f in self.top],
        }


def profile_side(
    hosts: tuple[Host, Host], transform: Transform, work: Path, secs: int, index: int
) -> Profile:
    """One run with espd ``index`` (0: espA, the TCP sender's side) under cProfile."""
    path = work / f"espd-{transform.name}-{NAMESPACES[index]}.prof"
    pair = EspdPair(hosts, transform, work, profile=(index, path))
    try:
        warm_up(pair)
        run = espd_run("profile", pair, secs)
        cpu = netns.cpu_seconds(pair.pids[index])
    finally:
        counters = pair.stop()
    with path.open("rb") as file:
        stats = cast(RawStats, marshal.load(file))
    seconds, functions = stage_times(stats)
    # cProfile's clock is the wall clock: epoll's time includes waiting for packets. Its
    # busy part is taken as its calls times what a poll with a ready fd costs here.
    polls = sum(v[1] for k, v in stats.items() if stage_of(k) == "epoll_wait")
    busy = min(seconds["epoll_wait"], polls * ready_poll_us() / 1e6)
    seconds["idle"] = seconds["epoll_wait"] - busy
    seconds["epoll_wait"] = busy
    return Profile(
        side=NAMESPACES[index],
        transform=transform.name,
        packets=handled(counters[index]),
        cpu_s=cpu,
        mbps=run.recv_mbps,
        seconds=seconds,
        top=functions[:25],
        polls=polls,
    )


def ready_poll_us() -> float:
    """Microseconds of one ``epoll.poll(0)`` that finds a readable fd (what selectors
    calls, and what the profile times)."""
    import select

    left, right = socket.socketpair()
    with left, right, select.epoll() as epoll:
        right.send(b"x")
        epoll.register(left.fileno(), select.EPOLLIN)
        return _per_call(lambda: epoll.poll(0, 8), 20000)


# -- levers ------------------------------------------------------------------------------


def datapath_floor(transform: Transform) -> dict[str, float]:
    """Microseconds per call of the data path alone (no I/O, no loop): ``output_esp`` of a
    1400-byte packet and of a 52-byte ACK, and ``input_esp`` of the ESP they became; the
    best of ROUNDS rounds (the machine is shared)."""
    from cryptoapi.esp import Datapath
    from cryptoapi.pfkey import KeyManager
    from cryptoapi.pfkey.setkey import LocalTransport, apply, parse

    def datapath(index: int) -> Datapath:
        key_manager = KeyManager()
        for outcome in apply(parse(setkey_text(transform, index)), LocalTransport(key_manager)):
            assert outcome.ok, outcome.describe_errors()
        return Datapath(key_manager, encap_port=4500)

    left, right = datapath(0), datapath(1)
    src, dst = socket.inet_aton(OUTER[0]), socket.inet_aton(OUTER[1])
    found = {}
    for label, size in (("1400B", 1400), ("ack52B", 52)):
        packet = _tcp_packet(size)
        sealed = left.output_esp(packet)[0]
        assert right.input_esp(sealed.payload, sealed.src, sealed.dst, udp=True) == packet
        outputs, inputs = [], []
        for _ in range(ROUNDS):
            outputs.append(_per_call_each(left.output_esp, [packet] * 2000))
            esps = [left.output_esp(packet)[0].payload for _ in range(2000)]  # new numbers
            inputs.append(
                _per_call_each(lambda esp: right.input_esp(esp, src, dst, udp=True), esps)
            )
        found[f"output_esp_{label}_us"] = min(outputs)
        found[f"input_esp_{label}_us"] = min(inputs)
    return found


def _tcp_packet(size: int) -> bytes:
    from cryptoapi.esp import ip

    src, dst = bytes((10, 93, 1, 1)), bytes((10, 93, 2, 1))
    tcp = (40000).to_bytes(2, "big") + IPERF_PORT.to_bytes(2, "big") + bytes(8)
    tcp += bytes((0x50, 0x10)) + bytes(6)  # data offset 5, ACK
    body = tcp + os.urandom(size - 20 - len(tcp))
    return ip.ipv4_header(src, dst, 6, len(body), tos=0, ttl=64, df=True, ident=1) + body


def _per_call_each(call: Callable[[bytes], object], inputs: list[bytes]) -> float:
    start = time.perf_counter()
    for data in inputs:
        call(data)
    return round((time.perf_counter() - start) / len(inputs) * 1e6, 2)


def _per_call(call: Callable[[], object], number: int = 4000) -> float:
    start = time.perf_counter()
    for _ in range(number):
        call()
    return round((time.perf_counter() - start) / number * 1e6, 2)


def syscall_costs() -> dict[str, float]:
    """Microseconds per call on loopback, for 1400-byte datagrams, each send followed by
    its receive (nothing queues, nothing blocks): espd's forms (sendmsg with IP_PKTINFO to
    an address given as text, recvmsg with ancillary space) against a connected socket's
    send and recv_into; and os.write/os.read of a pipe (the TUN's write and read are
    syscalls of the same kind)."""
    from cryptoapi.esp.espd import sockets

    payload = os.urandom(1400)
    with contextlib.ExitStack() as stack:
        rx = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        tx = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        rx.bind(("127.0.0.1", 0))
        rx.settimeout(1.0)  # bounded, should a datagram ever be lost
        rx.setsockopt(socket.IPPROTO_IP, sockets.IP_PKTINFO, 1)
        tx.bind(("127.0.0.1", 0))
        where, own = rx.getsockname(), socket.inet_aton("127.0.0.1")
        info = [(socket.IPPROTO_IP, sockets.IP_PKTINFO, sockets._IN_PKTINFO.pack(0, own, own))]
        buffer = bytearray(65535)

        def sendmsg() -> None:
            tx.sendmsg([payload], info, 0, (socket.inet_ntop(socket.AF_INET, own), where[1]))

        found = dict(
            zip(
                ("sendmsg_pktinfo_us", "recvmsg_ancillary_us"),
                _alternating(sendmsg, lambda: rx.recvmsg(65535, sockets._ANCILLARY)),
                strict=True,
            )
        )
        tx.connect(where)
        found.update(
            zip(
                ("send_connected_us", "recv_into_us"),
                _alternating(lambda: tx.send(payload), lambda: rx.recv_into(buffer)),
                strict=True,
            )
        )
        read_fd, write_fd = os.pipe()
        stack.callback(os.close, read_fd)
        stack.callback(os.close, write_fd)
        found.update(
            zip(
                ("pipe_write_us", "pipe_read_us"),
                _alternating(lambda: os.write(write_fd, payload), lambda: os.read(read_fd, 65535)),
                strict=True,
            )
        )
    return found


def _alternating(
    first: Callable[[], object], second: Callable[[], object], number: int = 2000
) -> tuple[float, float]:
    """Microseconds per call of each, called in turn ``number`` times; the best of
    ROUNDS rounds for each."""
    best = [float("inf"), float("inf")]
    clock = time.perf_counter
    for _ in range(ROUNDS):
        spent = [0.0, 0.0]
        for _ in range(number):
            t0 = clock()
            first()
            t1 = clock()
            second()
            spent[0] += t1 - t0
            spent[1] += clock() - t1
        best = [min(b, s / number * 1e6) for b, s in zip(best, spent, strict=True)]
    return round(best[0], 2), round(best[1], 2)


def second_espd(hosts: tuple[Host, Host], transform: Transform, work: Path) -> str:
    """Whether a second espd can serve espA's TUN next to the first (UDP port 4501)."""
    pair = EspdPair(hosts, transform, work)
    try:
        conf = work / f"{NAMESPACES[0]}-{transform.name}.conf"
        second = hosts[0].ns.start(
            PYTHON,
            "-m",
            "cryptoapi",
            "espd",
            "--tun",
            TUN,
            "-f",
            str(conf),
            "--udp-port",
            "4501",
            "--seq-state",
            str(seq_state(work, "second")),
            label="second espd",
            cwd=str(ROOT),
        )
        try:
            second.wait_for("espd: ready", READY)
            return "a second espd attached to the TUN (unexpected)"
        except BenchError as error:
            return str(error).replace("\n", " ")
        finally:
            second.stop()
    finally:
        pair.stop()


def machine_levers(hosts: tuple[Host, Host], transform: Transform, work: Path) -> dict[str, object]:
    """The levers measured once: a second espd on the TUN, the syscalls' costs."""
    found: dict[str, object] = {}
    for name, measure in (
        ("second_espd_on_the_tun", lambda: second_espd(hosts, transform, work)),
        ("syscalls_loopback", syscall_costs),
    ):
        try:
            found[name] = measure()
        except Exception as error:
            found[name] = f"failed: {error!r}"
    return found


# -- the whole run -----------------------------------------------------------------------


@dataclass
class Result:
    transform: Transform
    espd: Side
    anchor: Side | None = None
    plain: Side | None = None  # espd --no-offload, with --plain
    profiles: list[Profile] = field(default_factory=list)
    levers: dict[str, object] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        ours, theirs = self.espd.median_mbps, self.anchor.median_mbps if self.anchor else None
        return ours / theirs if ours is not None and theirs else None

    def summary(self) -> dict[str, object]:
        return {
            "transform": dataclasses.asdict(self.transform),
            "espd": self.espd.summary(),
            "anchor": self.anchor.summary() if self.anchor else None,
            "plain": self.plain.summary() if self.plain else None,
            "ratio": self.ratio,
            "profiles": [p.summary() for p in self.profiles],
            "levers": self.levers,
        }


def bench_transform(
    hosts: tuple[Host, Host],
    transform: Transform,
    work: Path,
    options: argparse.Namespace,
    anchor_first: bool,
) -> Result:
    print(f"=== {transform.name} (anchor {transform.proposal})", flush=True)
    runs, secs = options.runs, options.secs

    def anchor() -> Side | None:
        if options.no_anchor:
            return None
        side = measure_anchor(transform, work / transform.name, runs, secs)
        if side.skipped:
            skipped(f"  anchor {transform.proposal}", side.error or "")
        elif side.error:
            print(f"  anchor {transform.proposal}: {side.error}", flush=True)
        return side

    first = anchor() if anchor_first else None
    espd = measure_espd(hosts, transform, work, runs, secs, espd_options=options.espd_arg)
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
            except (BenchError, OSError, KeyError, ValueError, EOFError) as error:
                print(f"  profile {NAMESPACES[index]}: {error}", flush=True)
                continue
            profile.unprofiled_us_per_packet = espd.us_per_packet(index)
            result.profiles.append(profile)
            print_profile(profile)
    if options.levers:
        result.levers = levers(hosts, transform, work, options)
    return result


def levers(
    hosts: tuple[Host, Host], transform: Transform, work: Path, options: argparse.Namespace
) -> dict[str, object]:
    found: dict[str, object] = {}
    try:  # in this process: an import error of a tree being edited lands here
        found["datapath_floor"] = datapath_floor(transform)
    except Exception as error:
        found["datapath_floor"] = f"failed: {error!r}"
    print(f"  data path alone: {found['datapath_floor']}", flush=True)
    for mtu in options.lever_mtu:
        side = measure_espd(
            hosts, transform, work, options.runs, options.secs, mtu=mtu, label=f"mtu{mtu}-"
        )
        found[f"tun_mtu_{mtu}"] = side.summary()
        print(f"  TUN MTU {mtu}: median {side.median_mbps} Mbit/s {side.error or ''}", flush=True)
    return found


def print_profile(profile: Profile) -> None:
    print(
        f"  profile {profile.side} ({profile.transform}): {profile.packets} packets,"
        f" {profile.packets / max(1, profile.polls):.2f} per loop turn,"
        f" {profile.mbps} Mbit/s under cProfile; unprofiled"
        f" {_fmt(profile.unprofiled_us_per_packet)} us CPU/packet"
    )
    for stage in (*STAGES, "idle", "setup"):
        scaled = profile.scaled_us(stage) if stage in STAGES else None
        print(
            f"    {STAGE_NAMES[stage]:<20} {profile.us(stage):8.2f} us/pkt"
            f" profiled  {_fmt(scaled):>7} us/pkt scaled"
        )
    for seconds, stage, name in profile.top[:12]:
        print(f"      {seconds / max(1, profile.packets) * 1e6:7.2f} us  {stage:<10} {name}")


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def print_table(results: Sequence[Result]) -> None:
    print(
        "\ntransform              espd Mbit/s  strongSwan Mbit/s   ratio"
        "  espd CPU s/GB  charon CPU s/GB  espd us CPU/pkt A/B"
    )
    for r in results:
        anchor = r.anchor or Side()
        print(
            f"{r.transform.name:<22} {_fmt(r.espd.median_mbps, 1):>11}"
            f"  {_fmt(anchor.median_mbps, 1):>17}  {_fmt(r.ratio, 3):>6}"
            f"  {_fmt(r.espd.cpu_per_gb, 1):>13}  {_fmt(anchor.cpu_per_gb, 1):>15}"
            f"  {_fmt(r.espd.us_per_packet(0), 1)}/{_fmt(r.espd.us_per_packet(1), 1)}"
        )
        if r.plain is not None:
            ratio = (
                r.plain.median_mbps / anchor.median_mbps
                if r.plain.median_mbps and anchor.median_mbps
                else None
            )
            print(
                f"  --no-offload         {_fmt(r.plain.median_mbps, 1):>11}"
                f"  {'':>17}  {_fmt(ratio, 3):>6}  {_fmt(r.plain.cpu_per_gb, 1):>13}"
            )
        for side, what in (
            (r.espd, "espd"),
            (r.plain or Side(), "espd --no-offload"),
            (anchor, "anchor"),
        ):
            if side.error:
                print(f"    {what}{' (skipped)' if side.skipped else ''}: {side.error[:300]}")


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
    parser.add_argument("--no-anchor", action="store_true", help="skip strongSwan")
    parser.add_argument(
        "--espd-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="pass ARG to the measured espds (repeatable; e.g. --espd-arg=--tso)",
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
    runs, secs = (
        netns.env_int(os.environ, f"ESPD_BENCH_{n}", d) for n, d in (("RUNS", 3), ("SECS", 10))
    )
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
            netns.tunnel_hosts(
                NAMESPACES, VETHS, OUTER, INNER, NETS, tun=TUN, tun_mtu=MTU
            ) as hosts,
            iperf3_server(hosts[1]),
        ):
            for number, transform in enumerate(transforms):
                results.append(bench_transform(hosts, transform, work, options, number % 2 == 1))
            if options.levers:
                extra.update(machine_levers(hosts, transforms[0], work))
                print(f"  second espd: {extra['second_espd_on_the_tun']}")
                print(f"  syscalls (loopback): {extra['syscalls_loopback']}", flush=True)
    except BenchError as error:
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


def save(
    path: Path, options: argparse.Namespace, results: Sequence[Result], extra: dict[str, object]
) -> None:
    saved = {
        "runs": options.runs,
        "secs": options.secs,
        "tun_mtu": MTU,
        "cpus": os.cpu_count(),
        "results": [r.summary() for r in results],
        **extra,
    }
    path.write_text(json.dumps(saved, indent=1, default=str))


if __name__ == "__main__":
    raise SystemExit(main())
