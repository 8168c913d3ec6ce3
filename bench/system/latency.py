"""Ping through a tunnel, idle: ``PINGS`` echo requests ``INTERVAL`` apart, after one
that warms the path; the average RTT ``ping`` reports. Through a pair of espds here; the
anchor's (:func:`~.anchor.anchor_rtt_ms`) uses the same settings and parser.

And the machine's floor under it (:func:`wake_floor_us`): an idle RTT through a userspace
tunnel is mostly process wake-ups (espd's: four per round trip), and on a virtual machine
waking a process whose CPU is idle costs what a halted vCPU takes to run again. A UDP echo
between two Python processes in the two namespaces, as idle as the pings, shows it: its
round trip is two such wake-ups, as the kernel places the processes and with both pinned
to one CPU (where the waker is still running, so nothing is halted)."""

import json
import re
import subprocess

from bench.system.topology import INNER
from tests.netns import PYTHON, Host, stop, wait_for_line

PINGS = 50
INTERVAL = "0.02"
_RTT = re.compile(r"rtt min/avg/max/mdev = [\d.]+/([\d.]+)/")


def average_rtt_ms(output: str) -> float | None:
    """The average of ``ping``'s summary line, in ms (None without one)."""
    found = _RTT.search(output)
    return float(found.group(1)) if found else None


def espd_rtt_ms(client: Host) -> float | None:
    """The average RTT from ``client``'s inner address to the other side's, through espd."""
    server = INNER[1] if client.inner == INNER[0] else INNER[0]
    ns = client.ns
    warm = ns.argv("ping", "-c", "1", "-W", "2", "-I", client.inner, server)
    subprocess.run(warm, capture_output=True, timeout=10, check=False)
    argv = ns.argv("ping", "-q", "-c", str(PINGS), "-i", INTERVAL, "-I", client.inner, server)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    return average_rtt_ms(done.stdout)


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
