"""Ping through a tunnel, idle: ``PINGS`` echo requests ``INTERVAL`` apart, after one
that warms the path; the median and the average of the replies' RTTs. Through a pair of
espds here; the anchor's (:func:`~.anchor.anchor_rtt_ms`) uses the same settings and
parser. The median is the one compared: on a shared virtual machine a few replies wait for
a halted vCPU, and the average of 50 moved the anchor's RTT from 0.60 to 1.96 ms between
transforms of one run.

And the machine's floor under it (:func:`wake_floor_us`): an idle RTT through a userspace
tunnel is mostly process wake-ups (espd's: four per round trip), and on a virtual machine
waking a process whose CPU is idle costs what a halted vCPU takes to run again. A UDP echo
between two Python processes in the two namespaces, as idle as the pings, shows it: its
round trip is two such wake-ups, as the kernel places the processes and with both pinned
to one CPU (where the waker is still running, so nothing is halted)."""

import json
import re
import statistics
import subprocess

from bench.system.topology import INNER
from tests.netns import PYTHON, Host, stop, wait_for_line

PINGS = 200
INTERVAL = "0.02"
_TIME = re.compile(r" time=([\d.]+) ms")


def rtt_ms(output: str) -> tuple[float, float] | None:
    """(median, average) of the RTTs of ``ping``'s replies, in ms (None without any)."""
    times = [float(found) for found in _TIME.findall(output)]
    if not times:
        return None
    return statistics.median(times), statistics.fmean(times)


def espd_rtt_ms(client: Host) -> tuple[float, float] | None:
    """The (median, average) RTT from ``client``'s inner address to the other side's,
    through espd."""
    server = INNER[1] if client.inner == INNER[0] else INNER[0]
    ns = client.ns
    warm = ns.argv("ping", "-c", "1", "-W", "2", "-I", client.inner, server)
    subprocess.run(warm, capture_output=True, timeout=10, check=False)
    argv = ns.argv("ping", "-c", str(PINGS), "-i", INTERVAL, "-I", client.inner, server)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    return rtt_ms(done.stdout)


def wake_floor_us(hosts: tuple[Host, Host]) -> dict[str, float]:
    """The median RTT (us) of a UDP echo between the hosts' outer addresses, ``PINGS``
    round trips ``INTERVAL`` apart: ``as placed`` by the kernel and ``one CPU`` (both ends
    pinned to CPU 0)."""
    client, server = hosts
    floors = {}
    for label, pin in (("as placed", ()), ("one CPU", ("taskset", "-c", "0"))):
        echo = server.ns.start(*pin, PYTHON, "-m", "tests.esp.netns", "udp-echo",
                               "--bind", server.outer)  # fmt: skip
        try:
            assert echo.stdout is not None
            wait_for_line(echo.stdout.fileno(), "ready")
            argv = client.ns.argv(
                *pin, PYTHON, "-m", "tests.esp.netns", "udp-rtt", "--dst", server.outer,
                "--count", str(PINGS), "--interval", INTERVAL,
            )  # fmt: skip
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
            floors[label] = float(json.loads(done.stdout.splitlines()[-1])["median_us"])
        finally:
            stop(echo)
    return floors
