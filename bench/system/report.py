"""``bench.espd``'s results: :class:`Result`, everything measured for one transform; the
table printed at the end (Mbit/s, their ratio to the anchor's, CPU seconds per GB and per
packet) and the JSON file of ``--json``."""

import argparse
import dataclasses
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.system.profile import Profile
from bench.system.records import Side, fmt
from bench.system.topology import MTU, Transform


@dataclass
class Result:
    transform: Transform
    espd: Side
    anchor: Side | None = None
    plain: Side | None = None  # espd --no-offload, with --plain
    profiles: list[Profile] = field(default_factory=list)
    levers: dict[str, object] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        ours, theirs = self.espd.median_mbps, self.anchor.median_mbps if self.anchor else None
        return ours / theirs if ours is not None and theirs else None

    def summary(self) -> dict[str, object]:
        return {
            "transform": dataclasses.asdict(self.transform),
            "espd": self.espd.summary(),
            "anchor": self.anchor.summary() if self.anchor else None,
            "plain": self.plain.summary() if self.plain else None,
            "ratio": self.ratio,
            "profiles": [p.summary() for p in self.profiles],
            "levers": self.levers,
        }


def print_table(results: Sequence[Result]) -> None:
    print(
        "\ntransform              espd Mbit/s  strongSwan Mbit/s   ratio"
        "  espd CPU s/GB  charon CPU s/GB  espd us CPU/pkt A/B"
    )
    for r in results:
        anchor = r.anchor or Side()
        print(
            f"{r.transform.name:<22} {fmt(r.espd.median_mbps, 1):>11}"
            f"  {fmt(anchor.median_mbps, 1):>17}  {fmt(r.ratio, 3):>6}"
            f"  {fmt(r.espd.cpu_per_gb, 1):>13}  {fmt(anchor.cpu_per_gb, 1):>15}"
            f"  {fmt(r.espd.us_per_packet(0), 1)}/{fmt(r.espd.us_per_packet(1), 1)}"
        )
        if r.plain is not None:
            ratio = (
                r.plain.median_mbps / anchor.median_mbps
                if r.plain.median_mbps and anchor.median_mbps
                else None
            )
            print(
                f"  --no-offload         {fmt(r.plain.median_mbps, 1):>11}"
                f"  {'':>17}  {fmt(ratio, 3):>6}  {fmt(r.plain.cpu_per_gb, 1):>13}"
            )
        if r.espd.rtt_ms is not None:
            ours, theirs = r.espd.rtt_ms, anchor.rtt_ms
            print(
                f"  ping RTT median (ms) {fmt(ours, 3):>11}  {fmt(theirs, 3):>17}"
                f"  {fmt(ours / theirs if theirs else None, 3):>6}"
            )
        if r.espd.udp:
            best, theirs = r.espd.udp_best_mbps, anchor.udp_best_mbps
            print(
                f"  UDP, under 1% lost   {fmt(best, 1):>11}  {fmt(theirs, 1):>17}"
                f"  {fmt(best / theirs if best and theirs else None, 3):>6}"
            )
        for side, what in (
            (r.espd, "espd"),
            (r.plain or Side(), "espd --no-offload"),
            (anchor, "anchor"),
        ):
            if side.error:
                print(f"    {what}{' (skipped)' if side.skipped else ''}: {side.error[:300]}")


def save(
    path: Path, options: argparse.Namespace, results: Sequence[Result], extra: dict[str, object]
) -> None:
    saved = {
        "runs": options.runs,
        "secs": options.secs,
        "tun_mtu": MTU,
        "cpus": os.cpu_count(),
        "results": [r.summary() for r in results],
        **extra,
    }
    path.write_text(json.dumps(saved, indent=1, default=str))
