"""``bench.espd --profile``: one more run per side with that side's espd under cProfile
(SIGTERM ends espd's loop, ``python -m cryptoapi`` then raises SystemExit, which cProfile
catches before writing the profile). Self time is grouped into stages (TUN read/write, UDP
send/recv, SPD/SAD lookup, crypto, ESP framing, loop; a builtin or standard-library function
counts where its callers are) and divided by the packets that espd handled (its counters at
exit). cProfile's clock is the wall clock, so epoll's time is mostly waiting: only its calls
times the cost of a ready poll count as work. The stages' shares are then applied to the
unprofiled CPU time per packet, since cProfile's own cost grows with the number of calls.
"""

import marshal
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from bench.system import procfs
from bench.system.iperf import espd_run, warm_up
from bench.system.processes import EspdPair, handled
from bench.system.records import fmt
from bench.system.topology import NAMESPACES, Transform
from tests.netns import Host

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
        cpu = procfs.cpu_seconds(pair.pids[index])
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


def _per_call(call: Callable[[], object], number: int = 4000) -> float:
    start = time.perf_counter()
    for _ in range(number):
        call()
    return round((time.perf_counter() - start) / number * 1e6, 2)


def print_profile(profile: Profile) -> None:
    print(
        f"  profile {profile.side} ({profile.transform}): {profile.packets} packets,"
        f" {profile.packets / max(1, profile.polls):.2f} per loop turn,"
        f" {profile.mbps} Mbit/s under cProfile; unprofiled"
        f" {fmt(profile.unprofiled_us_per_packet)} us CPU/packet"
    )
    for stage in (*STAGES, "idle", "setup"):
        scaled = profile.scaled_us(stage) if stage in STAGES else None
        print(
            f"    {STAGE_NAMES[stage]:<20} {profile.us(stage):8.2f} us/pkt"
            f" profiled  {fmt(scaled):>7} us/pkt scaled"
        )
    for seconds, stage, name in profile.top[:12]:
        print(f"      {seconds / max(1, profile.packets) * 1e6:7.2f} us  {stage:<10} {name}")
