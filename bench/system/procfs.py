"""/proc readings for ``bench.espd``: a process's CPU seconds, the machine's use between two
snapshots (and who else used it: the machines are shared), the load average, UDP receive
buffer drops and a device's drops in a process's namespace.

The snapshot format is the anchor's (``bench.sh`` saves /proc/stat and every
/proc/PID/stat as ``procstat0``/``procstat1``), so both sides are read alike.
"""

import contextlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

HZ = os.sysconf("SC_CLK_TCK")


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


def udp_port_drops(pid: int, port: int) -> int:
    """Datagrams dropped so far by the UDP sockets bound to ``port`` in ``pid``'s namespace
    (the last column of /proc/PID/net/udp and udp6: a full receive buffer, mostly)."""
    dropped = 0
    for table in ("udp", "udp6"):
        try:
            with open(f"/proc/{pid}/net/{table}") as sockets:
                rows = [line.split() for line in sockets][1:]
        except OSError:
            continue
        dropped += sum(int(row[-1]) for row in rows if int(row[1].split(":")[1], 16) == port)
    return dropped


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
