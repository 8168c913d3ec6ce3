"""The ``cryptoapi`` command: one subcommand per module in this package."""

import argparse
from collections.abc import Sequence

from cryptoapi.cli import boot, espd, fuzz, kdf, keyd, listing, selftest, setkey
from cryptoapi.errors import CryptoError


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cryptoapi", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    listing.add_parser(commands)
    selftest.add_parser(commands)
    boot.add_parser(commands)
    fuzz.add_parser(commands)
    kdf.add_parser(commands)
    keyd.add_parser(commands)
    setkey.add_parser(commands)
    espd.add_parser(commands)
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except CryptoError as error:
        parser.exit(1, f"cryptoapi: {error} (errno {error.errno})\n")
    return status
