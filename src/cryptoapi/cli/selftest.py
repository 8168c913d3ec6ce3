"""``cryptoapi selftest``: register everything, run every self-test, report, exit 1 on failure."""

import argparse
import json
import sys
import time
from typing import Any

from cryptoapi.alg import AlgInfo, SelfTest
from cryptoapi.cli.table import format_table
from cryptoapi.registry.registry import Registry


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "selftest", help="run the known-answer self-test of every implementation"
    )
    parser.add_argument("names", nargs="*", help="only these names or drivers")
    parser.add_argument("--mode", choices=("eager", "lazy", "full"), default="eager")
    parser.add_argument("--json", action="store_true", help="print a JSON list of objects")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    registry = Registry(args.mode)
    registry.instantiate_all(args.names)
    infos = registry.run_selftests(args.names)
    elapsed_ms = (time.perf_counter() - started) * 1e3
    if args.json:
        json.dump([_record(info) for info in infos], sys.stdout, indent=2)
        print()
    else:
        print(_table(infos))
        print(_summary(infos, elapsed_ms, args.mode))
    return 1 if any(info.selftest is SelfTest.FAILED for info in infos) else 0


def _record(info: AlgInfo) -> dict[str, object]:
    return {
        "name": info.name,
        "driver": info.driver,
        "provider": info.provider,
        "priority": info.priority,
        "type": str(info.type),
        "result": str(info.selftest),
        "time_us": None if info.selftest_us is None else round(info.selftest_us, 1),
    }


def _table(infos: list[AlgInfo]) -> str:
    rows = [
        (i.name, i.driver, i.provider, i.priority, str(i.selftest), i.selftest_us or 0.0)
        for i in sorted(infos, key=lambda i: (i.name, -i.priority, i.driver))
    ]
    return format_table(("name", "driver", "provider", "priority", "result", "time_us"), rows)


def _summary(infos: list[AlgInfo], elapsed_ms: float, mode: str) -> str:
    counts = {result: 0 for result in SelfTest}
    for info in infos:
        counts[info.selftest] += 1
    parts = ", ".join(f"{n} {result}" for result, n in counts.items() if n)
    return f"\nselftest ({mode}): {len(infos)} implementations: {parts}; {elapsed_ms:.1f} ms"
