"""Ping through a tunnel, idle: ``PINGS`` echo requests ``INTERVAL`` apart, after one
that warms the path; the average RTT ``ping`` reports. Through a pair of espds here; the
anchor's (:func:`~.anchor.anchor_rtt_ms`) uses the same settings and parser."""

import re
import subprocess

from bench.system.topology import INNER
from tests.netns import Host

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
