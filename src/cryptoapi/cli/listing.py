"""cryptoapi list: every implementation, as the kernel's /proc/crypto shows them.

With names, only the implementations of those names or drivers are shown, and template
names are built on request first ('list "gcm(aes)"' shows every gcm(aes) that can be
built), as 'selftest NAME' does; a name nobody provides is an error (exit status 1).

The text is /proc/crypto's (the kernel's crypto/proc.c c_show and each type's show
function): the same keys in the same order, padded to 13 columns, each record followed by
a blank line, the newest registration first; being byte for byte the kernel's, it has no
key the kernel lacks. --table prints one line per implementation instead, with a '*' on
the one its name resolves to (the selected driver: what alloc_* would return, self-tested
per --selftests as a lookup is); --json has its own versioned schema, with "selected".

Each record says whether FIPS mode offers it: "fips_allowed" in --json, a "fips" column
in --table, and, in FIPS mode (--fips), the kernel's own line in the text: c_show prints
"fips : yes|no" after "internal" when the kernel runs with fips=1 (no for the algorithms
it keeps for use inside approved ones only).
"""

import argparse
from collections.abc import Callable
from typing import Any

from cryptoapi.alg import AlgInfo, AlgType, SelfTest
from cryptoapi.cli import jsonout
from cryptoapi.cli.options import add_selftests_option
from cryptoapi.cli.table import format_table
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
    view = parser.add_mutually_exclusive_group()
    view.add_argument(
        "--json",
        action="store_true",
        help='print {"schema": 1, "algorithms": [...]}, each with "selected": true or false',
    )
    view.add_argument(
        "--table",
        action="store_true",
        help="one line per implementation; '*' marks the one its name resolves to",
    )
    add_selftests_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    registry = Registry(args.selftests)
    wanted = drivers_of(registry, args.names) if args.names else None
    infos = [i for i in registry.algorithms() if wanted is None or i.driver in wanted]
    if args.json or args.table:
        chosen = selected(registry, infos)
        listed = {info.driver for info in infos}
        infos = [i for i in registry.algorithms() if i.driver in listed]  # tested since
        print_selected(infos, chosen, as_json=args.json)
    else:
        newest_first = sorted(infos, key=lambda info: -info.order)
        for info in newest_first:
            print(proc_crypto_record(info, fips=registry.fips), end="\n\n")  # c_show's seq_putc
    return 0


def drivers_of(registry: Registry, names: list[str]) -> set[str]:
    """Every driver of each name (templates built over every inner implementation), or
    the driver itself; the registry's AlgorithmNotFound (with its "did you mean") for the
    first name nobody provides."""
    drivers: set[str] = set()
    for name in names:
        drivers.update(registry.implementations(name) or [registry.lookup(name).driver])
    return drivers


def selected(registry: Registry, infos: list[AlgInfo]) -> set[str]:
    """The driver each listed name (of its type) resolves to: looked up as ``alloc_*``
    does, so with lazy self-tests the best candidates are tested first (the records are
    read again after: their test results change). A name whose every implementation
    failed selects none."""
    chosen: set[str] = set()
    for name, kind in dict.fromkeys((info.name, info.type) for info in infos):
        try:
            chosen.add(registry.lookup(name, kind).driver)
        except AlgorithmNotFound:
            continue
    return chosen


def print_selected(infos: list[AlgInfo], chosen: set[str], *, as_json: bool) -> None:
    """The records by name then priority, each marked selected or not: JSON, or a table
    with a '*' column."""
    if as_json:
        records = [{**info.as_dict(), "selected": info.driver in chosen} for info in infos]
        jsonout.dump({"algorithms": records})
        return
    headers = ("", "name", "driver", "provider", "priority", "type", "selftest", "fips")
    rows = [
        ("*" if info.driver in chosen else "", info.name, info.driver, info.provider,
         info.priority, str(info.type), str(info.selftest), _yes_no(info.fips_allowed))
        for info in infos
    ]  # fmt: skip
    print(format_table(headers, rows))


LAYOUTS: dict[AlgType, tuple[str, ...]] = {
    AlgType.SKCIPHER: (
        "async", "blocksize", "min keysize", "max keysize", "ivsize", "chunksize", "walksize",
        "statesize",
    ),
    AlgType.AEAD: ("async", "blocksize", "ivsize", "maxauthsize", "geniv"),
}  # fmt: skip
"""The keys a type's ``show`` prints after ``type`` where they are not simply its sizes in
``SIZES_BY_TYPE`` order (``crypto_skcipher_show``, ``crypto_aead_show``); every other type
(``shash``, ``cipher``, ``rng``, ``kpp``, and any added later) shows its sizes, spelled
with spaces (``min_keysize`` -> ``min keysize``)."""

DERIVED: dict[str, Callable[[AlgInfo], object]] = {
    "async": lambda info: "no",  # every implementation here completes in the call
    "chunksize": lambda info: info.blocksize,  # skcipher_prepare_alg's default
    "walksize": lambda info: info.blocksize,  # = chunksize, its default
    "statesize": lambda info: 0,  # no exportable mid-stream state
    "geniv": lambda info: "<none>",  # as crypto_aead_show prints it
}
"""Values of the kernel's keys that are not sizes of the record."""


def proc_crypto_record(info: AlgInfo, *, fips: bool = False) -> str:
    """One record in /proc/crypto's ``key : value`` layout (``module`` is the provider,
    under the kernel's name for it, as in /proc/crypto; JSON says ``provider``).
    ``selftest`` is ``passed`` or, for anything else, ``unknown``, as ``c_show`` reads
    ``CRYPTO_ALG_TESTED``; nothing here is internal-only. With ``fips`` (a registry in FIPS
    mode) the ``fips`` line follows ``internal``, as ``c_show`` prints it under fips=1."""
    fields: dict[str, object] = {
        "name": info.name,
        "driver": info.driver,
        "module": info.provider,
        "priority": info.priority,
        "refcnt": info.refcnt,
        "selftest": "passed" if info.selftest is SelfTest.PASSED else "unknown",
        "internal": "no",
    }
    if fips:
        fields["fips"] = _yes_no(info.fips_allowed)
    fields["type"] = info.type
    for key in LAYOUTS.get(info.type) or (size.replace("_", " ") for size in info.sizes):
        size = key.replace(" ", "_")
        fields[key] = info.sizes[size] if size in info.sizes else DERIVED[key](info)
    return "\n".join(f"{key:<12} : {value}" for key, value in fields.items())


def _yes_no(flag: bool) -> str:
    return "yes" if flag else "no"
