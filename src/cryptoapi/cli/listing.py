"""cryptoapi list: every implementation, as the kernel's /proc/crypto shows them.

With names, only the implementations of those names or drivers are shown, and template
names are built on request first ('list "gcm(aes)"' shows every gcm(aes) that can be
built), as 'selftest NAME' does; a name nobody provides is an error (exit status 1).
"""

import argparse
from typing import Any

from cryptoapi.alg import AlgInfo
from cryptoapi.cli import jsonout
from cryptoapi.cli.options import add_selftests_option
from cryptoapi.errors import AlgorithmNotFound
from cryptoapi.registry.registry import Registry


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "list",
        help="list the implementations (the /proc/crypto view)",
        description=__doc__,
    )
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="only these algorithm names or drivers, e.g. sha256, 'hmac(sha256)', sha1-generic",
    )
    parser.add_argument(
        "--json", action="store_true", help='print {"schema": 1, "algorithms": [...]}'
    )
    add_selftests_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    registry = Registry(args.selftests)
    wanted = drivers_of(registry, args.names) if args.names else None
    infos = [i for i in registry.algorithms() if wanted is None or i.driver in wanted]
    if args.json:
        jsonout.dump({"algorithms": [info.as_dict() for info in infos]})
    else:
        print("\n\n".join(proc_crypto_record(info) for info in infos))
    return 0


def drivers_of(registry: Registry, names: list[str]) -> set[str]:
    """Every driver of each name (templates built over every inner implementation), or
    the driver itself; AlgorithmNotFound naming the first that nobody provides."""
    drivers: set[str] = set()
    for name in names:
        try:
            drivers.update(registry.implementations(name) or [registry.lookup(name).driver])
        except AlgorithmNotFound:
            raise AlgorithmNotFound(f"no algorithm or driver named {name!r}") from None
    return drivers


def proc_crypto_record(info: AlgInfo) -> str:
    """One record in /proc/crypto's ``key : value`` layout (``module`` is the provider,
    under the kernel's name for it, as in /proc/crypto; JSON says ``provider``)."""
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
