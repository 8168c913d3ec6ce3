"""cryptoapi fips-install: write the package's integrity MAC (as 'openssl fipsinstall').

Computes an HMAC-SHA-256 over the installed package's files and writes it beside them
(fips.mac in the package directory, or $CRYPTOAPI_FIPS_MAC); in FIPS mode the package
checks it before any algorithm is offered. Run it again after every install or upgrade.
A self-check against accidental change, not a signature: anyone who can write the files
can write a matching MAC (docs/fips.md says what it does and does not cover).
"""

import argparse
import time
from typing import Any

from cryptoapi.fips import integrity


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "fips-install",
        help="write the integrity MAC that FIPS mode checks (as openssl fipsinstall)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="only check the MAC already written (exit status 1 if missing or different)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.check:
        return _check()
    path = integrity.install()
    files = len(integrity.covered_files(integrity.package_dir()))
    print(f"wrote the HMAC-SHA-256 of {files} files of {integrity.package_dir()} to {path}")
    return 0


def _check() -> int:
    started = time.perf_counter()
    reason = integrity.failure()
    elapsed = (time.perf_counter() - started) * 1e3
    if reason is not None:
        print(f"cryptoapi: integrity check failed: {reason}")
        return 1
    print(f"integrity check passed ({integrity.mac_path()}, {elapsed:.1f} ms)")
    return 0
