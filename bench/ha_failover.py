"""The failover's outage, end to end (issue 23, item 5; goal <= 1 s).

Run: ``python -m bench.ha_failover [--runs N]`` (as root: network namespaces).

The topology and the stream are the failover test's (:mod:`tests.ha.failover`): a peer, two
gateways on one link with a shared tunnel address (keyd on one PostgreSQL database, active
and ``--standby``, each with an espd ``--hold-until-active``) and the host behind them. A
paced TCP stream and a 5 ms UDP probe run from that host to the peer; the active gateway's
keyd and espd are killed with SIGKILL and its links go down; the standby takes over and the
shared addresses move to it (with gratuitous ARP, as keepalived's ``notify_master`` would).
A throwaway PostgreSQL server is started for the run (``tests/ha/pgserver.py``), a fresh
database and fresh namespaces for each run.

Printed per run, then the median:
- **outage**: at the peer, from the last ESP packet of the old active to the first of the
  new one (its espd's capture; the probe bounds the error to 5 ms);
- keyd's part: from the kill to the standby keyd saying it is active;
- the address's part: to the shared addresses added and announced.
"""

import argparse
import statistics

from bench.common import goal_note, skipped
from tests.ha import failover
from tests.ha.failover import gateway_packets, outage, stream_through_failover
from tests.ha.pgserver import running, unavailable
from tests.netns import stop
from tests.netns import unavailable as no_namespaces
from tests.pfkey.keyd import short_dir


def one_run(url: str) -> tuple[float, float, float]:
    """(outage, kill to active keyd, kill to addresses moved), in seconds."""
    with short_dir() as where, failover.site(where) as site:
        site.start(url)
        result = stream_through_failover(site, where)
        if result.received.get("sha256") != result.sent["sha256"]:
            raise SystemExit("the stream did not arrive intact")
        assert site.peer_espd is not None
        stop(site.peer_espd.process)
        gap, _, _ = outage(gateway_packets(site.pcap))
    takeover = result.takeover
    return gap, takeover.active - takeover.killed, takeover.moved - takeover.killed


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ha_failover")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    why = unavailable() or no_namespaces()
    if why is not None:
        skipped("failover outage", why)
        return
    rows = []
    with running() as server:
        for run in range(1, args.runs + 1):
            gap, active, moved = one_run(server.new_database())
            rows.append((gap, active, moved))
            print(f"run {run}: outage {gap * 1e3:6.0f} ms  (keyd active after {active * 1e3:.0f} "
                  f"ms, addresses moved after {moved * 1e3:.0f} ms)", flush=True)  # fmt: skip
    gap, active, moved = (statistics.median(column) for column in zip(*rows, strict=True))
    label = f"failover outage at the peer, median of {args.runs}"
    print(f"{label:<52} {gap:8.3f} s  {goal_note(gap, '<= 1 s')}", flush=True)
    print(f"{'  of which: kill to the standby keyd active':<52} {active:8.3f} s", flush=True)
    print(f"{'  kill to the addresses moved, 3 ARPs sent':<52} {moved:8.3f} s", flush=True)


if __name__ == "__main__":
    main()
