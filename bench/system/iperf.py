"""TCP and UDP through the tunnel: iperf3 from espA to espB's inner address (its server
started once, for the whole run), and the measured runs through a pair of espds: per TCP
run the receiver-side Mbit/s, both espds' CPU seconds (utime + stime of /proc/PID/stat),
packets handled (their SIGUSR1 counters), UDP receive-buffer drops, TUN queue drops and
the load average before, as the anchor's bench.sh records; per UDP run at an offered
rate, what arrived, the share lost and the kernel queues' drops."""

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from bench.system import procfs
from bench.system.latency import espd_rtt_ms
from bench.system.processes import Daemon, EspdPair, handled
from bench.system.records import Side, TcpRun, UdpRun, run_line, udp_line
from bench.system.topology import INNER, MTU, TUN, Transform
from tests import netns
from tests.netns import Host, StepError

IPERF_PORT = 5201
UDP_SECS = 5
"""Seconds per UDP run, as the anchor's bench.sh."""
UDP_LEN = 1348
"""The UDP payload of the UDP runs, as the anchor's bench.sh: a 1376-byte inner packet."""
ESP_PORT = 4500
"""Where each espd receives ESP (the setkey files' NAT-T port)."""


def iperf3(client: Host, secs: int, *extra: str) -> dict[str, Any]:
    """One iperf3 run (TCP, or what ``extra`` says) from ``client`` to the other side's
    inner address; its JSON."""
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
        *extra,
    )
    try:
        done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=secs + 30)
    except subprocess.TimeoutExpired:
        raise StepError(f"iperf3: no result within {secs + 30} s") from None
    try:
        result: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise StepError(f"iperf3 printed no JSON: {done.stdout[-500:]} {done.stderr}") from None
    if "error" in result:
        raise StepError(f"iperf3: {result['error']}")
    return result


def from_iperf(name: str, result: dict[str, Any]) -> dict[str, Any]:
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


def udp_result(rate: str, result: dict[str, Any]) -> UdpRun:
    """What a UDP run's JSON says arrived (the server's count, as iperf3 reports it)."""
    total = result["end"]["sum"]
    lost = float(total.get("lost_percent", 0.0))
    received = result["end"].get("sum_received", {}).get("bits_per_second")
    if received is None:  # older iperf3: the sender's rate less what was lost
        received = total["bits_per_second"] * (1 - lost / 100)
    return UdpRun(rate, round(received / 1e6, 1), round(lost, 2))


def udp_runs(pair: EspdPair, rates: Sequence[str], secs: int, label: str) -> list[UdpRun]:
    """One UDP run per offered rate through ``pair``, printed as measured, with where the
    kernel's queues dropped packets on the way."""
    runs = []
    for rate in rates:
        before = queue_drops(pair.pids)
        result = iperf3(pair.hosts[0], secs, "-u", "-b", rate, "-l", str(UDP_LEN))
        after = queue_drops(pair.pids)
        run = udp_result(rate, result)
        moved = _moved(before, after)
        run.udp_rcvbuf_errors, run.tun_tx_drops = moved.udp_rcvbuf, moved.tun_tx
        run.esp_socket_drops = moved.esp_socket
        runs.append(run)
        print(f"  {label} udp-{rate}: {udp_line(runs[-1])}", flush=True)
        time.sleep(2)
    return runs


class Drops(NamedTuple):
    """What the kernel's queues dropped in each side's namespace (espA, espB)."""

    udp_rcvbuf: tuple[int, int]
    """Udp RcvbufErrors, every UDP socket's."""
    tun_tx: tuple[int, int]
    """The TUN's queue: packets espd did not read in time."""
    esp_socket: tuple[int, int]
    """espd's ESP sockets' own (part of ``udp_rcvbuf``)."""


def queue_drops(pids: Sequence[int]) -> Drops:
    """What the kernel's queues have dropped so far in the namespaces of ``pids``."""
    a, b = pids
    return Drops(
        (procfs.udp_rcvbuf_errors(a), procfs.udp_rcvbuf_errors(b)),
        (procfs.link_drops(a, TUN)["tx_drop"], procfs.link_drops(b, TUN)["tx_drop"]),
        (procfs.udp_port_drops(a, ESP_PORT), procfs.udp_port_drops(b, ESP_PORT)),
    )


def _moved(before: Drops, after: Drops) -> Drops:
    """How much each count of :func:`queue_drops` grew on each side."""
    pairs = zip(before, after, strict=True)
    return Drops(*((end[0] - start[0], end[1] - start[1]) for start, end in pairs))


def espd_run(name: str, pair: EspdPair, secs: int) -> TcpRun:
    """One measured iperf3 run through ``pair``."""
    pids = pair.pids
    load = procfs.loadavg1()
    before = pair.counters()
    machine0 = procfs.snapshot()
    cpu0 = [procfs.cpu_split(pid) for pid in pids]
    drops0 = queue_drops(pids)
    result = iperf3(pair.hosts[0], secs)
    cpu1 = [procfs.cpu_split(pid) for pid in pids]
    machine1 = procfs.snapshot()
    moved = _moved(drops0, queue_drops(pids))
    after = pair.counters()
    pair.check_alive()
    mine = {*pids, os.getpid(), *(p.pid for p in pair.hosts[1].ns.processes)}
    return TcpRun(
        **from_iperf(name, result),
        machine=procfs.machine_use(machine0, machine1, mine, ("iperf3", "ip")),
        cpu_s=(round(sum(cpu1[0]) - sum(cpu0[0]), 2), round(sum(cpu1[1]) - sum(cpu0[1]), 2)),
        sys_s=(round(cpu1[0][1] - cpu0[0][1], 2), round(cpu1[1][1] - cpu0[1][1], 2)),
        loadavg1_before=load,
        udp_rcvbuf_errors=moved.udp_rcvbuf,
        packets=(handled(after[0]) - handled(before[0]), handled(after[1]) - handled(before[1])),
        tun_tx_drops=moved.tun_tx,
    )


def warm_up(pair: EspdPair) -> None:
    """A one-second run: the tunnel carries TCP (and the SAs' transforms are built and
    self-tested on their first packets, outside the measured runs)."""
    try:
        result = iperf3(pair.hosts[0], 1)
    except StepError as error:
        a, b = pair.counters()
        shown = {k: v for k, v in {**a, **b}.items() if v and k.startswith(("Xfrm", "Espd"))}
        raise StepError(f"no TCP through the tunnel ({error}); counters: {shown}") from None
    if not result["end"]["sum_received"]["bytes"]:
        raise StepError("no TCP bytes through the tunnel")


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
    udp_rates: Sequence[str] = (),
) -> Side:
    side = Side()
    try:
        pair = EspdPair(hosts, transform, work, mtu=mtu, espd_options=espd_options)
    except StepError as error:
        return Side(error=str(error))
    try:
        warm_up(pair)
        side.set_rtt(espd_rtt_ms(pair.hosts[0]))
        print(f"  espd {transform.name} ping: {side.rtt_line()}", flush=True)
        for number in range(1, runs + 1):
            side.runs.append(espd_run(f"{label}{number}", pair, secs))
            print(f"  espd {transform.name} {label}{number}: {run_line(side.runs[-1])}", flush=True)
            time.sleep(2)  # as bench.sh: the queues drain between runs
        side.udp = udp_runs(pair, udp_rates, UDP_SECS, f"espd {transform.name}")
    except (StepError, KeyError, ValueError, OSError) as error:
        side.error = f"{type(error).__name__}: {error}"
    finally:
        pair.stop()
    return side


@contextlib.contextmanager
def iperf3_server(host: Host) -> Iterator[Daemon]:
    argv = ("iperf3", "-s", "-B", host.inner, "-p", str(IPERF_PORT), "--forceflush")
    server = Daemon(host.ns, *argv, label=f"iperf3 server in {host.ns.name}")
    try:
        server.wait_for("Server listening", netns.WAIT, stream="stdout")
        yield server
    finally:
        server.stop()
