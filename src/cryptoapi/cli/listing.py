"""``cryptoapi list``: every implementation, as the kernel's /proc/crypto shows them."""

import argparse
import json
import sys
from typing import Any

from cryptoapi.alg import AlgInfo
from cryptoapi.registry.registry import Registry


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "list", help="list every implementation (the /proc/crypto view)"
    )
    parser.add_argument("names", nargs="*", help="only these names or drivers")
    parser.add_argument("--json", action="store_true", help="print a JSON list of objects")
    parser.add_argument("--selftests", help="self-test mode (off, lazy, eager, full)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    infos = Registry(args.selftests).algorithms()
    if args.names:
        wanted = set(args.names)
        infos = [i for i in infos if i.name in wanted or i.driver in wanted]
    if args.json:
        json.dump([info.as_dict() for info in infos], sys.stdout, indent=2)
        print()
    else:
        print("\n\n".join(proc_crypto_record(info) for info in infos))
    return 0


def proc_crypto_record(info: AlgInfo) -> str:
    """One record in /proc/crypto's ``key : value`` layout."""
    fields = {
        "name": info.name,
        "driver": info.driver,
        "module": info.provider,
        "priority": info.priority,
        "selftest": info.selftest,
        "type": info.type,
        **info.sizes,
    }
    return "\n".join(f"{key:<12} : {value}" for key, value in fields.items())
