"""The ``cryptoapi`` command: the main entry point and what every subcommand shares.

Exit status: 0 on success; 1 when the command failed (an algorithm that does not exist, a
self-test that failed, a key the daemon refused: one line on stderr, never a traceback); 2
for a usage error (argparse's message); 130 on Ctrl-C; 141 (128 + SIGPIPE, what a shell
reports for ``yes | head -1``) when the reader of standard output went away early, as in
``cryptoapi list | head -1``. That last case is silent: Python's documented recipe
(https://docs.python.org/3/library/signal.html#note-on-sigpipe) flushes inside the ``try``
and, on BrokenPipeError, points standard output at /dev/null so that the flush at exit
cannot fail again.
"""

import argparse
import os
import sys
from collections.abc import Sequence

from cryptoapi.cli import (
    boot,
    espd,
    fips_install,
    fuzz,
    kdf,
    keyd,
    listing,
    pfkey_exec,
    rng,
    selftest,
    setkey,
    status,
)
from cryptoapi.errors import CryptoError

DESCRIPTION = """\
Look up, test, fuzz and use the crypto algorithms of cryptoapi, and run its IPsec key
daemon. Each command has its own --help."""

EPILOG = """\
exit status: 0 done; 1 failed (one line on stderr says why); 2 a usage error; 3 (fuzz)
no mismatch, but a --time budget left implementations untested; 130 interrupted; 141 the
reader of the output closed it early (as in 'cryptoapi list | head -1'), like any command
killed by SIGPIPE."""

EXIT_FAILURE = 1
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: a shell's status for a writer whose reader left


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command in ``argv`` (default: ``sys.argv``) and return its exit status."""
    args = build_parser().parse_args(argv)
    if args.fips:  # before any registry exists; inherited by the daemons it starts
        os.environ["CRYPTOAPI_FIPS"] = "1"
    try:
        status: int = args.run(args)
        sys.stdout.flush()  # inside the try: a reader that left shows up here at the latest
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except CryptoError as error:  # the errno stays on the exception, for callers of the API
        return _fail(str(error))
    except OSError as error:  # a file or socket the user named: say which and why
        return _fail(_os_error(error))
    return status


def build_parser() -> argparse.ArgumentParser:
    """The ``cryptoapi`` parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="cryptoapi",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=_version())
    parser.add_argument(
        "--fips",
        action="store_true",
        help="run in FIPS mode (as CRYPTOAPI_FIPS=1): approved algorithms only, self-tests "
        "that cannot be off, any failure fatal; needs 'cryptoapi fips-install' first",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (
        listing,
        selftest,
        boot,
        fuzz,
        kdf,
        rng,
        keyd,
        setkey,
        espd,
        pfkey_exec,
        status,
        fips_install,
    ):
        command.add_parser(commands)
    return parser


def _version() -> str:
    import cryptoapi

    return f"cryptoapi {cryptoapi.__version__}"


def _discard_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so Python's final flush has nowhere to fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no file descriptor (a test capturing it)
        pass
    finally:
        os.close(devnull)


def _fail(message: str) -> int:
    print(f"cryptoapi: {message}", file=sys.stderr)
    return EXIT_FAILURE


def _os_error(error: OSError) -> str:
    """``FILE: reason`` as a Unix tool says it, not Python's ``[Errno 2] ...``."""
    reason = error.strerror or str(error)
    return f"{error.filename}: {reason}" if error.filename is not None else reason
