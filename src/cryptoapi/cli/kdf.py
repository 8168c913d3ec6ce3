"""``cryptoapi kdf``: derive keying material with a KDF and print it as hex.

    cryptoapi kdf 'kdf108ctr(hmac(sha256))' --key HEX --info HEX --length 32 \\
        [--mode-option counter_bits=8 --mode-option counter_location=after ...]
    cryptoapi kdf 'hkdf(hmac(sha256))' --key IKM_HEX --salt HEX --info HEX --length 42

``--info`` is the fixed input of the SP 800-108 modes, or HKDF's info. Mode options are
typed by name (``counter_bits`` and ``split`` are ints, ``counter`` is true/false, ``iv`` is
hex, anything else a string the KDF checks). Bad input raises InvalidArgument; the key is
never echoed.
"""

import argparse
import json
from collections.abc import Callable
from typing import Any

from cryptoapi.errors import InvalidArgument
from cryptoapi.registry.registry import Registry


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "kdf", help="derive key material (kdf108ctr/fb/dp, hkdf) and print it as hex"
    )
    parser.add_argument("name", help="the KDF, e.g. 'kdf108ctr(hmac(sha256))'")
    parser.add_argument("--key", required=True, help="key derivation key (HKDF: IKM), hex")
    parser.add_argument("--salt", help="HKDF salt, hex")
    parser.add_argument(
        "--info", required=True, help="fixed input (SP 800-108) or info (HKDF), hex"
    )
    parser.add_argument("--length", required=True, help="bytes to derive")
    parser.add_argument(
        "--mode-option", action="append", default=[], metavar="KEY=VALUE",
        help="a derive option, e.g. counter_bits=8, counter_location=middle, split=50, "
        "counter=false, iv=HEX (repeatable)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print a JSON object")
    parser.add_argument("--selftests", help="self-test mode (off, lazy, eager, full)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    key = _hex(args.key, "--key")
    info = _hex(args.info, "--info")
    salt = {} if args.salt is None else {"salt": _hex(args.salt, "--salt")}
    length = _int(args.length, "--length")
    options = dict(_mode_option(text) for text in args.mode_option)
    kdf = Registry(args.selftests).alloc_kdf(args.name)
    kdf.setkey(key, **salt)
    okm = kdf.derive(info, length, **options)
    if args.json:
        print(json.dumps({"name": kdf.alg_name, "driver": kdf.driver_name, "okm": okm.hex()}))
    else:
        print(okm.hex())
    return 0


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
