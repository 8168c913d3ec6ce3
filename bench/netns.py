"""Namespaces, processes and /proc readings for :mod:`bench.espd` (not a benchmark itself).

:func:`tunnel_hosts` builds two network namespaces joined by a veth pair (the "outer" link),
each with a persistent TUN device carrying its inner address and a route to the other's
inner network through it, as strongSwan's kernel-libipsec routes into ``ipsec0``. The TUN
devices exist before any espd attaches (``ip tuntap add``), so addresses and routes survive
an espd being restarted. Every address is inside the namespaces: traffic never leaves them.

:class:`Daemon` is a process this benchmark started (its own session, so a Ctrl-C reaches
only the benchmark, which then stops it), with standard output and error collected by two
threads so that no pipe ever fills. Leaving :func:`tunnel_hosts` stops what was started in
the namespaces and deletes them, even after a failure; every wait is bounded.
"""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

WAIT = 15.0
"""The longest a single step (a command, a start, an exit) waits."""
HZ = os.sysconf("SC_CLK_TCK")


class BenchError(Exception):
    """A step that failed; the message says why (and what the process printed)."""


def run(argv: Sequence[str], *, timeout: float = WAIT) -> str:
    """Run a command to completion (bounded); its standard output; BenchError if it fails."""
    try:
        done = subprocess.run(
            list(argv), check=False, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"{' '.join(argv)}: no exit within {timeout:.0f} s") from None
    if done.returncode:
        raise BenchError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return done.stdout


def netns_exists(name: str) -> bool:
    return os.path.exists(f"/run/netns/{name}")


def unavailable(*tools: str) -> str | None:
    """Why the benchmark cannot run here (None when it can)."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, veth and TUN devices)"
    if not os.path.exists("/dev/net/tun"):
        return "needs /dev/net/tun"
    missing = [tool for tool in ("ip", *tools) if shutil.which(tool) is None]
    if missing:
        return f"needs {', '.join(missing)} on PATH"
    return None


# -- processes ----------------------------------------------------------------------------


class Daemon:
    """A process started here, its output collected as it comes."""

    def __init__(self, argv: Sequence[str], *, label: str, cwd: str | None = None) -> None:
        self.label = label
        self.process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self._out = bytearray()
        self._err = bytearray()
        self._changed = threading.Condition()
        assert self.process.stdout is not None and self.process.stderr is not None
        self._readers = [
            threading.Thread(target=self._drain, args=(pipe.fileno(), buf), daemon=True)
            for pipe, buf in ((self.process.stdout, self._out), (self.process.stderr, self._err))
        ]
        for reader in self._readers:
            reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _drain(self, fd: int, into: bytearray) -> None:
        while chunk := os.read(fd, 1 << 16):
            with self._changed:
                into += chunk
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def stdout(self, start: int = 0) -> str:
        with self._changed:
            return self._out[start:].decode(errors="replace")

    def stderr(self) -> str:
        with self._changed:
            return self._err.decode(errors="replace")

    def wait_for(self, text: str, timeout: float, *, stream: str = "stderr") -> None:
        """Wait (bounded) for ``text`` in the stream; BenchError, with what it said, if it
        does not come or the process exits first."""
        wanted = text.encode()
        buf = self._err if stream == "stderr" else self._out
        deadline = time.monotonic() + timeout
        with self._changed:
            while wanted not in buf:
                left = deadline - time.monotonic()
                said = self._err.decode(errors="replace").strip()[-2000:]
                if self.process.poll() is not None:
                    raise BenchError(f"{self.label} exited ({self.process.returncode}): {said}")
                if left <= 0:
                    raise BenchError(f"{self.label}: no {text!r} within {timeout:.0f} s: {said}")
                self._changed.wait(min(left, 0.2))

    def output_after(self, start: int, sig: int, *, quiet: float = 0.15) -> str:
        """Send ``sig`` and return what standard output gets after byte ``start`` once it
        has grown and then stayed quiet for ``quiet`` seconds (bounded by WAIT)."""
        self.process.send_signal(sig)
        deadline = time.monotonic() + WAIT
        with self._changed:
            while len(self._out) == start and time.monotonic() < deadline:
                self._changed.wait(0.1)
            size = -1
            while size != len(self._out) and time.monotonic() < deadline:
                size = len(self._out)
                self._changed.wait(quiet)
            return self._out[start:].decode(errors="replace")

    def out_size(self) -> int:
        with self._changed:
            return len(self._out)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = WAIT) -> int:
        """Signal the process (if it still runs) and wait, bounded; SIGKILL if it does not
        exit. Its exit status."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        for reader in self._readers:
            reader.join(timeout)
        return self.process.returncode


# -- namespaces ---------------------------------------------------------------------------


@dataclass
class Namespace:
    """A network namespace created here, and the daemons started in it."""

    name: str
    daemons: list[Daemon] = field(default_factory=list)

    def ip(self, *argv: str) -> str:
        return run(["ip", "-n", self.name, *argv])

    def argv(self, *argv: str) -> list[str]:
        """``argv`` run inside the namespace (``ip netns exec`` execs it: same pid)."""
        return ["ip", "netns", "exec", self.name, *argv]

    def sysctl(self, key: str, value: str) -> None:
        run(self.argv("sysctl", "-qw", f"{key}={value}"))

    def start(self, *argv: str, label: str, cwd: str | None = None) -> Daemon:
        daemon = Daemon(self.argv(*argv), label=label, cwd=cwd)
        self.daemons.append(daemon)
        return daemon

    def close(self) -> None:
        """Stop the daemons, anything else left inside (only ours can be there), delete."""
        for daemon in self.daemons:
            daemon.stop()
        with contextlib.suppress(BenchError):
            for pid in run(["ip", "netns", "pids", self.name]).split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
        subprocess.run(
            ["ip", "netns", "del", self.name], check=False, capture_output=True, timeout=WAIT
        )


@dataclass(frozen=True)
class Host:
    """One side of the tunnel: its namespace and addresses."""

    ns: Namespace
    veth: str
    outer: str  # on the veth, /24
    inner: str  # on the TUN, /32
    net: str  # its inner network (the policies' selector)
    peer_outer: str
    peer_net: str  # the other side's inner network, routed into the TUN
    tun: str


@contextlib.contextmanager
def tunnel_hosts(
    names: tuple[str, str],
    veths: tuple[str, str],
    outer: tuple[str, str],
    inner: tuple[str, str],
    nets: tuple[str, str],
    *,
    tun: str,
    tun_mtu: int,
) -> Iterator[tuple[Host, Host]]:
    """Two namespaces ``names`` joined by the veth pair ``veths`` (``outer`` addresses),
    each with the persistent TUN ``tun`` holding its ``inner`` address and a route to the
    other's network (``nets``); both deleted on exit. BenchError if a namespace of that
    name exists already (another run of this benchmark: nothing of it is touched)."""
    taken = [name for name in names if netns_exists(name)]
    if taken:
        raise BenchError(f"namespace {', '.join(taken)} exists: another run? (ip netns del)")
    with contextlib.ExitStack() as stack:
        spaces = []
        for name in names:
            run(["ip", "netns", "add", name])
            spaces.append(Namespace(name))
            stack.callback(spaces[-1].close)
        run(
            [
                "ip",
                "link",
                "add",
                veths[0],
                "netns",
                names[0],
                "type",
                "veth",
                "peer",
                "name",
                veths[1],
                "netns",
                names[1],
            ]
        )
        hosts = tuple(
            Host(spaces[i], veths[i], outer[i], inner[i], nets[i], outer[1 - i], nets[1 - i], tun)
            for i in (0, 1)
        )
        for host in hosts:
            _configure(host, tun_mtu)
        yield hosts[0], hosts[1]


def _configure(host: Host, tun_mtu: int) -> None:
    ns = host.ns
    ns.ip("link", "set", "lo", "up")
    ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1")  # no router solicitations
    ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1")
    ns.ip("addr", "add", f"{host.outer}/24", "dev", host.veth)
    ns.ip("link", "set", host.veth, "up")
    ns.ip("tuntap", "add", "dev", host.tun, "mode", "tun")
    ns.ip("link", "set", host.tun, "mtu", str(tun_mtu))
    ns.ip("addr", "add", f"{host.inner}/32", "dev", host.tun)
    ns.ip("link", "set", host.tun, "up")
    ns.ip("route", "add", host.peer_net, "dev", host.tun, "src", host.inner)


# -- /proc --------------------------------------------------------------------------------


def cpu_split(pid: int) -> tuple[float, float]:
    """(utime, stime) of ``pid`` (/proc/PID/stat), in seconds; zeros once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    return int(fields[11]) / HZ, int(fields[12]) / HZ  # fields 14 and 15 of proc(5)


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid``, in seconds; 0.0 once it is gone."""
    return sum(cpu_split(pid))


@dataclass(frozen=True)
class Snapshot:
    """The machine's busy and total jiffies, and each process's (comm, utime + stime)."""

    busy: int
    total: int
    irq: int  # irq + softirq jiffies: packet processing no process is charged for
    processes: dict[int, tuple[str, int]]


def parse_snapshot(lines: Iterable[str]) -> Snapshot:
    """A :class:`Snapshot` from /proc/stat followed by /proc/PID/stat lines (what the
    anchor's bench.sh saves as ``procstat0``/``procstat1``)."""
    busy = total = irq = 0
    processes: dict[int, tuple[str, int]] = {}
    for line in lines:
        if line.startswith("cpu "):
            values = [int(v) for v in line.split()[1:9]]
            total = sum(values)
            busy = total - values[3] - values[4]
            irq = values[5] + values[6]
        elif line[:1].isdigit() and ") " in line:
            pid, rest = line.split(" (", 1)
            comm, fields = rest.rsplit(") ", 1)
            numbers = fields.split()
            processes[int(pid)] = (comm, int(numbers[11]) + int(numbers[12]))
    return Snapshot(busy, total, irq, processes)


def snapshot() -> Snapshot:
    lines: list[str] = []
    with open("/proc/stat") as stat:
        lines.append(stat.readline())
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{entry.name}/stat") as stat:
                lines.append(stat.read())
    return parse_snapshot(lines)


@dataclass(frozen=True)
class MachineUse:
    """Where the machine's CPU went during a run (see :func:`machine_use`)."""

    busy: float  # fraction of all cores
    cpu_s: float  # busy CPU seconds, all cores
    irq_s: float  # of which in interrupts and softirqs (the veth's and TUN's receive paths)
    kernel_threads_cpu_s: float  # ksoftirqd, kworker
    others_cpu_s: float  # the other tenants
    others_top: tuple[tuple[str, float], ...]  # their commands with most CPU seconds


def machine_use(
    before: Snapshot, after: Snapshot, mine: set[int], skip: Sequence[str]
) -> MachineUse:
    """Where the machine's CPU went between two snapshots: its busy fraction and CPU
    seconds, kernel threads' seconds, and the seconds of every other process that lived
    through both (not ``mine``, no command in ``skip``): the other tenants."""
    others = kernel = 0
    by_comm: dict[str, int] = {}
    for pid, (comm, ticks) in after.processes.items():
        spent = ticks - before.processes.get(pid, (comm, ticks))[1]
        if spent <= 0 or pid in mine or comm in skip:
            continue
        if comm.startswith(("ksoftirqd", "kworker")):
            kernel += spent
        else:
            others += spent
            by_comm[comm] = by_comm.get(comm, 0) + spent
    top = sorted(by_comm.items(), key=lambda item: -item[1])[:4]
    return MachineUse(
        busy=round((after.busy - before.busy) / max(1, after.total - before.total), 3),
        cpu_s=round((after.busy - before.busy) / HZ, 2),
        irq_s=round((after.irq - before.irq) / HZ, 2),
        kernel_threads_cpu_s=round(kernel / HZ, 2),
        others_cpu_s=round(others / HZ, 2),
        others_top=tuple((comm, round(ticks / HZ, 2)) for comm, ticks in top),
    )


def loadavg1() -> float:
    with open("/proc/loadavg") as load:
        return float(load.read().split()[0])


def udp_rcvbuf_errors(pid: int) -> int:
    """Udp RcvbufErrors of the namespace ``pid`` is in (/proc/PID/net/snmp); -1 if gone."""
    try:
        with open(f"/proc/{pid}/net/snmp") as snmp:
            udp = [line.split() for line in snmp if line.startswith("Udp:")]
    except OSError:
        return -1
    return int(dict(zip(udp[0], udp[1], strict=True))["RcvbufErrors"])


def link_drops(pid: int, device: str) -> dict[str, int]:
    """rx/tx drop counters of ``device`` in ``pid``'s namespace (/proc/PID/net/dev). For a
    TUN device "tx" is the kernel handing packets to the reader: tx drops are packets the
    reader (espd) did not take in time (the queue holds ``txqueuelen`` packets)."""
    try:
        with open(f"/proc/{pid}/net/dev") as dev:
            for line in dev:
                name, _, rest = line.partition(":")
                if name.strip() == device:
                    values = [int(v) for v in rest.split()]
                    return {"rx_drop": values[3], "tx_drop": values[11]}
    except OSError:
        pass
    return {"rx_drop": -1, "tx_drop": -1}


def parse_counters(text: str) -> dict[str, int]:
    """``name<TAB>value`` lines (espd's SIGUSR1 output, ``/proc/net/xfrm_stat``'s layout);
    the last value of each name wins (a later block is a later reading)."""
    found: dict[str, int] = {}
    for match in re.finditer(r"^(\w+)\s+(-?\d+)\s*$", text, re.MULTILINE):
        found[match.group(1)] = int(match.group(2))
    return found


def env_int(environ: Mapping[str, str], name: str, default: int) -> int:
    value = environ.get(name, "").strip()
    return int(value) if value else default
