"""The anchor: strongSwan's kernel-libipsec (``../shared/tools/strongswan-anchor``) in the
same topology as ``bench.espd``'s espds (its namespaces ssA/ssB), measured by its own
``run.sh`` with the same TCP_RUNS/TCP_SECS and no UDP runs, its JSON files parsed.

Without its scripts, strongSwan or ping the anchor's rows are skipped, saying why. What
``run.sh`` leaves when it fails before its own cleanup is set up is removed here.
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from bench.system import procfs
from bench.system.iperf import UDP_LEN, UDP_SECS, from_iperf, udp_result
from bench.system.latency import INTERVAL, PINGS, rtt_ms
from bench.system.records import Side, TcpRun, run_line, udp_line
from bench.system.topology import Transform
from tests import netns

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
ANCHOR = Path(os.environ.get("ESPD_BENCH_ANCHOR", ROOT.parent / "shared/tools/strongswan-anchor"))


def measure_anchor(
    transform: Transform, work: Path, runs: int, secs: int, udp_rates: Sequence[str] = ()
) -> Side:
    """``run.sh OUT PROPOSAL`` (the TCP runs, then one UDP run per rate), its per-run files
    parsed."""
    why = _anchor_unavailable()
    if why:
        return Side(error=why, skipped=True)
    out, wd = work / "anchor", work / "anchor-wd"
    env = {
        **os.environ,
        "WD": str(wd),
        "TCP_RUNS": str(runs),
        "TCP_SECS": str(secs),
        "UDP_RATES": " ".join(udp_rates) or " ",
        "UDP_SECS": str(UDP_SECS),
        "UDP_LEN": str(UDP_LEN),
        "PY": PYTHON,
    }
    # UDP_RATES="" would mean the default rates to bench.sh's ${UDP_RATES:-...}: a blank
    # is set and non-empty, and its for loop then has nothing to run.
    timeout = 90 + runs * (secs + 10) + len(udp_rates) * (UDP_SECS + 10)
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
        print(f"  anchor {transform.proposal} tcp{number}: {run_line(side.runs[-1])}", flush=True)
    for rate in udp_rates:
        try:
            name = f"{transform.proposal}-udp-{rate}"
            run = udp_result(rate, json.loads((directory / f"{name}.json").read_text()))
            cpu = json.loads((directory / f"{name}.cpu.json").read_text())
            run.udp_rcvbuf_errors = (cpu["udp_rcvbuf_errors_A"], cpu["udp_rcvbuf_errors_B"])
            side.udp.append(run)
        except (OSError, KeyError, ValueError) as error:
            side.error = f"run udp-{rate}: no result ({error})"
            break
        print(f"  anchor {transform.proposal} udp-{rate}: {udp_line(side.udp[-1])}", flush=True)
    side.set_rtt(anchor_rtt_ms(transform, env))
    print(f"  anchor {transform.proposal} ping: {side.rtt_line()}", flush=True)
    return side


ANCHOR_PING = """
set -e
. "$ANCHOR/common.sh"
"$HERE/netns_up.sh" >/dev/null
trap '"$HERE/stop_charons.sh"; "$HERE/netns_down.sh" >/dev/null' EXIT
"$HERE/stop_charons.sh"
"$HERE/gen_conf.sh" "$PROPOSAL"
"$HERE/start_charons.sh" >/dev/null
STRONGSWAN_CONF=$WD/A/strongswan.conf timeout 30 swanctl --initiate --child net \\
    --uri unix://$WD/A/charon.vici >/dev/null
ip netns exec $NSA ping -c 1 -W 2 -I $INA $INB >/dev/null || true
ip netns exec $NSA ping -c $PINGS -i $INTERVAL -I $INA $INB
"""
"""run.sh's steps for one proposal, with a ping where it runs bench.sh (the names are the
anchor's common.sh's)."""


def anchor_rtt_ms(transform: Transform, env: dict[str, str]) -> tuple[float, float] | None:
    """The (median, average) idle RTT through the anchor's tunnel for ``transform``;
    ``env`` is the one run.sh was given."""
    env = {
        **env,
        "ANCHOR": str(ANCHOR),
        "PROPOSAL": transform.proposal,
        "PINGS": str(PINGS),
        "INTERVAL": INTERVAL,
    }
    try:
        output = _run_anchor(["bash", "-c", ANCHOR_PING], env, timeout=120)
    finally:
        _anchor_cleanup(env)
    return rtt_ms(output)


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
            snapshots.append(procfs.parse_snapshot(lines))
    mine = {int(pid) for pid in (directory / f"{label}-{name}.mypids").read_text().split()}
    return TcpRun(
        **from_iperf(name, result),
        machine=procfs.machine_use(snapshots[0], snapshots[1], mine, ANCHOR_TOOLS),
        cpu_s=(cpu["charonA_cpu_s"], cpu["charonB_cpu_s"]),
        loadavg1_before=float(cpu["loadavg1_before"]),
        udp_rcvbuf_errors=(cpu["udp_rcvbuf_errors_A"], cpu["udp_rcvbuf_errors_B"]),
    )
