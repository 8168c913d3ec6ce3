"""Options several commands share, spelled and checked the same way in each.

Numbers are checked by argparse ``type`` functions, so nonsense such as ``--iterations 0``
is a usage error (exit status 2, argparse's message naming the option) before any work
starts, not a traceback or a silent empty run later.
"""

import argparse

from cryptoapi.cli.logs import LEVELS
from cryptoapi.selftest.manager import Mode

SELFTEST_MODES = tuple(mode.value for mode in Mode)
"""The self-test policies, in the order the README's table explains them."""

SELFTEST_HELP = (
    "when implementations are tested: off (never), lazy (on first use), eager (when they "
    "register, on a thread pool), full (eager plus differential fuzzing); default: {default}"
)


def add_selftests_option(parser: argparse.ArgumentParser, *, default: str | None = None) -> None:
    """``--selftests {off,lazy,eager,full}``; without ``default`` the registry decides
    (``CRYPTOAPI_SELFTESTS``, else lazy), as the library does."""
    shown = default or "$CRYPTOAPI_SELFTESTS, else lazy"
    parser.add_argument(
        "--selftests",
        choices=SELFTEST_MODES,
        default=default,
        help=SELFTEST_HELP.format(default=shown),
    )


UNAUTHENTICATED_ESP_HELP = (
    "UNSAFE: admit encryption-only ESP SAs (a cipher such as aes-cbc with no -A), whose "
    "forged or altered packets nothing detects; refused by default, as RFC 8221 asks{where}"
)


def add_unauthenticated_option(parser: argparse.ArgumentParser, *, where: str = "") -> None:
    """``--allow-unauthenticated-esp``: the key manager's ``allow_unauthenticated``, the
    one way to admit an ESP SA without integrity (see ``cryptoapi.pfkey.km.admit``);
    ``where`` adds to the help what the flag applies to."""
    parser.add_argument(
        "--allow-unauthenticated-esp",
        dest="allow_unauthenticated",
        action="store_true",
        help=UNAUTHENTICATED_ESP_HELP.format(where=where),
    )


def positive_int(text: str) -> int:
    """An integer of at least 1 (a count of cases, of processes)."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """An integer of at least 0 (a seed, a case number)."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be zero or a positive integer, not {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number of seconds greater than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, not {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value


def _int(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a decimal integer, not {text!r}") from None


def add_log_level_option(parser: argparse.ArgumentParser) -> None:
    """``--log-level {debug,info,warning,error}`` for a daemon (see ``cli.logs``)."""
    parser.add_argument(
        "--log-level",
        choices=LEVELS,
        default="info",
        help="the least severe log records written to standard error (default info)",
    )


def add_control_option(parser: argparse.ArgumentParser, *, default: str) -> None:
    """``--control PATH``: a daemon's status socket (``cryptoapi.pfkey.daemon.control``)."""
    parser.add_argument(
        "--control",
        metavar="PATH",
        help=f"the status socket (owner only; default {default}); 'none' for no status socket",
    )
