"""cryptoapi rng: N bytes from a DRBG on standard output.

    cryptoapi rng 32 > key.bin
    cryptoapi rng 16 --hex
    cryptoapi rng 1048576 --driver drbg_pr_ctr_aes256 | ...

The bytes come from stdrng (the best tested SP 800-90A DRBG, seeded from os.urandom)
or the driver named, in requests of at most 64 KiB, written as they are made: raw bytes,
or with --hex one line of hex. A reader that closes early ends the command quietly
(exit status 141, as for any writer killed by SIGPIPE).
"""

import argparse
import sys
from typing import Any

from cryptoapi.cli.options import add_selftests_option, non_negative_int
from cryptoapi.registry.registry import RNG_REQUEST, Registry


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "rng",
        help="write N random bytes from an SP 800-90A DRBG (stdrng) to stdout",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("count", type=non_negative_int, metavar="N", help="bytes to write")
    parser.add_argument("--hex", action="store_true", help="write hex and a newline, not bytes")
    parser.add_argument(
        "--driver",
        default="stdrng",
        metavar="NAME",
        help="the generator: stdrng (default) or a driver such as drbg_nopr_hmac_sha256",
    )
    add_selftests_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    rng = Registry(args.selftests).alloc_rng(args.driver)
    out = sys.stdout.buffer
    for done in range(0, args.count, RNG_REQUEST):
        chunk = rng.generate(min(RNG_REQUEST, args.count - done))
        out.write(chunk.hex().encode() if args.hex else chunk)
    if args.hex:
        out.write(b"\n")
    return 0
