"""cryptoapi kdf: derive keying material with a KDF and print it as hex.

    cryptoapi kdf 'kdf108ctr(hmac(sha256))' --key-file kdk.bin --info HEX --length 32 \\
        [--mode-option counter_bits=8 --mode-option counter_location=after ...]
    xxd -r -p ikm.hex | cryptoapi kdf 'hkdf(hmac(sha256))' --key-file - --info HEX \\
        --salt HEX --length 42

The key comes from a file of raw bytes (--key-file FILE, or - for standard input: every
byte, a trailing newline included), or in hex on the command line (--key HEX), where
ps(1) and the shell's history show it to others: use --key only for test vectors.

--info is the fixed input of the SP 800-108 modes, or HKDF's info. Mode options are
typed by name (counter_bits and split are integers, counter is true or false, iv is hex,
anything else a string the KDF checks). Bad input is one line on stderr and exit status
1; the key is never echoed.
"""

import argparse
import sys
from collections.abc import Callable
from typing import Any

from cryptoapi.cli import jsonout
from cryptoapi.cli.options import add_selftests_option
from cryptoapi.errors import InvalidArgument
from cryptoapi.registry.registry import Registry


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "kdf",
        help="derive key material (kdf108ctr/fb/dp, hkdf) and print it as hex",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", help="the KDF, e.g. 'kdf108ctr(hmac(sha256))'")
    key = parser.add_mutually_exclusive_group(required=True)
    key.add_argument(
        "--key-file", metavar="FILE",
        help="read the key derivation key (HKDF: the IKM) from FILE as raw bytes; - is stdin",
    )  # fmt: skip
    key.add_argument(
        "--key", metavar="HEX",
        help="the key in hex; WARNING: ps and the shell's history show it to others",
    )  # fmt: skip
    parser.add_argument("--salt", metavar="HEX", help="HKDF salt, hex")
    parser.add_argument(
        "--info",
        required=True,
        metavar="HEX",
        help="fixed input (SP 800-108) or info (HKDF), hex; may be empty",
    )
    parser.add_argument("--length", required=True, metavar="N", help="bytes to derive")
    parser.add_argument(
        "--mode-option", action="append", default=[], metavar="KEY=VALUE",
        help="a derive option, e.g. counter_bits=8, counter_location=middle, split=50, "
        "counter=false, iv=HEX (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"schema": 1, "name": ..., "driver": ..., "provider": ..., "okm": HEX}',
    )
    add_selftests_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    key = _hex(args.key, "--key") if args.key is not None else _read_key(args.key_file)
    info = _hex(args.info, "--info")
    salt = {} if args.salt is None else {"salt": _hex(args.salt, "--salt")}
    length = _int(args.length, "--length")
    options: dict[str, Any] = dict(_mode_option(text) for text in args.mode_option)
    registry = Registry(args.selftests)
    kdf = registry.alloc_kdf(args.name)
    kdf.setkey(key, **salt)
    okm = kdf.derive(info, length, **options)
    if args.json:
        provider = registry.lookup(kdf.driver_name).provider
        names = {"name": kdf.alg_name, "driver": kdf.driver_name, "provider": provider}
        jsonout.dump({**names, "okm": okm.hex()})
    else:
        print(okm.hex())
    return 0


def _read_key(path: str) -> bytes:
    """Every byte of the file ``path`` (``-``: standard input); InvalidArgument naming the
    file, never its contents, if it cannot be read."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as stream:
            return stream.read()
    except OSError as error:
        raise InvalidArgument(f"--key-file {path}: {error.strerror or error}") from None


def _hex(text: str, what: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise InvalidArgument(f"{what} is not valid hex") from None


def _int(text: str, what: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise InvalidArgument(f"{what} must be a decimal integer, not {text!r}") from None


def _bool(text: str, what: str) -> bool:
    lowered = text.lower()
    if lowered in ("true", "yes", "1"):
        return True
    if lowered in ("false", "no", "0"):
        return False
    raise InvalidArgument(f"{what} must be true or false, not {text!r}")


def _str(text: str, what: str) -> str:
    return text


OPTION_TYPES: dict[str, Callable[[str, str], object]] = {
    "counter_bits": _int,
    "split": _int,
    "counter": _bool,
    "iv": _hex,
}
"""How each known mode option's value is read; other options stay strings."""


def _mode_option(text: str) -> tuple[str, object]:
    name, equals, value = text.partition("=")
    name = name.strip()
    if not equals or not name:
        raise InvalidArgument(f"--mode-option takes KEY=VALUE, not {text!r}")
    parse = OPTION_TYPES.get(name, _str)
    return name, parse(value.strip(), f"mode option {name}")
