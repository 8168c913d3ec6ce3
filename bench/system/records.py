"""What ``bench.espd`` measured: :class:`TcpRun`, one iperf3 TCP run and what the
endpoints spent on it, and :class:`Side`, every run of one endpoint kind (espd or the
anchor) for one transform; and the one line a run is shown as."""

import dataclasses
import math
import statistics
from dataclasses import dataclass, field

from bench.system.procfs import MachineUse

GB = 1e9


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
    machine: MachineUse
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
class UdpRun:
    """One iperf3 UDP run at a fixed offered rate: what arrived, and the share lost."""

    rate: str  # iperf3's -b, e.g. "600M"
    recv_mbps: float
    lost_percent: float
    udp_rcvbuf_errors: tuple[int, int] | None = None
    """Udp RcvbufErrors in the A and B namespaces during the run: B's counts both the
    tunnel's ESP socket (espd's) and iperf3's."""
    tun_tx_drops: tuple[int, int] | None = None
    """Packets each TUN's queue dropped, espd not reading in time (espd runs only)."""
    esp_socket_drops: tuple[int, int] | None = None
    """Of ``udp_rcvbuf_errors``, those of espd's ESP socket (espd runs only)."""


LOSS_LIMIT = 1.0
"""The loss, in percent, under which a UDP rate counts as carried (issue 21)."""


@dataclass
class Side:
    """Every run of one endpoint kind (espd or the anchor) for one transform."""

    runs: list[TcpRun] = field(default_factory=list)
    error: str | None = None
    skipped: bool = False  # error says why this side cannot run here: not a failure
    notes: list[str] = field(default_factory=list)
    udp: list[UdpRun] = field(default_factory=list)
    rtt_ms: float | None = None  # the median idle ping through the tunnel
    rtt_avg_ms: float | None = None  # ... and the average

    def set_rtt(self, rtt: tuple[float, float] | None) -> None:
        """Keep a (median, average) RTT (None: no reply)."""
        self.rtt_ms, self.rtt_avg_ms = rtt if rtt is not None else (None, None)

    def rtt_line(self) -> str:
        """The RTT as the run's log shows it."""
        return f"{fmt(self.rtt_ms, 3)} ms median, {fmt(self.rtt_avg_ms, 3)} ms average"

    @property
    def udp_best_mbps(self) -> float | None:
        """The most a UDP run carried losing under :data:`LOSS_LIMIT` percent."""
        carried = [r.recv_mbps for r in self.udp if r.lost_percent < LOSS_LIMIT]
        return max(carried) if carried else None

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
            "udp": [dataclasses.asdict(r) for r in self.udp],
            "udp_best_mbps": self.udp_best_mbps,
            "rtt_ms": self.rtt_ms,
            "rtt_avg_ms": self.rtt_avg_ms,
            "runs": [
                {
                    **dataclasses.asdict(r),
                    "cpu_s_per_gb": r.cpu_per_gb,
                    "unattributed_s": r.unattributed_s,
                }
                for r in self.runs
            ],
        }


def run_line(run: TcpRun) -> str:
    """One run on one line, as it is printed when measured."""
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


def udp_line(run: UdpRun) -> str:
    line = f"{run.recv_mbps:7.1f} Mbit/s received, {run.lost_percent:.2f}% lost"
    if run.udp_rcvbuf_errors is not None:
        line += f"; UDP rcvbuf drops {run.udp_rcvbuf_errors[0]}/{run.udp_rcvbuf_errors[1]}"
    if run.esp_socket_drops is not None:
        line += f" (espd's sockets {run.esp_socket_drops[0]}/{run.esp_socket_drops[1]})"
    if run.tun_tx_drops is not None:
        line += f", TUN drops {run.tun_tx_drops[0]}/{run.tun_tx_drops[1]}"
    return line


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"
