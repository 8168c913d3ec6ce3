"""cryptoapi pfkey-exec: run a program with its PF_KEY sockets connected to keyd.

    cryptoapi pfkey-exec [--socket /run/cryptoapi/keyd.sock] -- racoon -F -f racoon.conf

An unmodified PF_KEY v2 client (racoon, ipsec-tools' setkey, strongSwan's kernel-pfkey)
opens socket(PF_KEY, SOCK_RAW, PF_KEY_V2), which fails on a kernel without NET_KEY, as in
many containers, and would reach the kernel's key manager, not keyd, anyway. pfkey-exec
replaces itself with the program (exec: same pid, signals and exit status), with a small
library of this package in LD_PRELOAD that connects each PF_KEY socket to keyd's socket
(--socket, default $CRYPTOAPI_KEYD_SOCKET, else /run/cryptoapi/keyd.sock) and gives it the
kernel's semantics: a send's reply is queued when send() returns, and IPsec BYPASS
policies on the program's own IKE sockets succeed. Everything else passes through. When
keyd is not reachable, the program's socket(PF_KEY) fails (ENOENT or ECONNREFUSED) and the
library says so in one line on stderr; the program decides what to do then.

The library is compiled from its C source on first use with the system's C compiler ($CC,
cc or gcc) into ~/.cache/cryptoapi ($XDG_CACHE_HOME), once per source and compiler
version; --print-library builds it and prints its path (for LD_PRELOAD by hand, with
CRYPTOAPI_KEYD_SOCKET). Programs that are setuid ignore LD_PRELOAD, as the dynamic loader
requires.

exit status: the program's; 1 if the library cannot be built (no compiler: one line says
so); 126 if the program cannot be run, 127 if it is not found (as env(1)).
"""

import argparse
import os
import sys
from typing import Any

from cryptoapi.pfkey.daemon.preload import SOCKET_ENV, library

DEFAULT_SOCKET = "/run/cryptoapi/keyd.sock"
EXIT_CANNOT_RUN = 126
EXIT_NOT_FOUND = 127


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "pfkey-exec",
        help="run a program with its PF_KEY sockets connected to keyd",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--socket",
        default=os.environ.get(SOCKET_ENV) or DEFAULT_SOCKET,
        help=f"keyd's socket (default ${SOCKET_ENV}, else {DEFAULT_SOCKET})",
    )
    parser.add_argument(
        "--print-library", action="store_true", help="build the library, print its path, exit"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    parser.set_defaults(run=run, usage=parser.error)


def run(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command and not args.print_library:
        args.usage("a command to run is required: cryptoapi pfkey-exec -- CMD ARGS...")
    preload = library()
    if args.print_library:
        print(preload)
        return 0
    return _exec(command, preload_environment(os.environ, str(preload), args.socket))


def preload_environment(
    environment: "os._Environ[str] | dict[str, str]", preload: str, socket_path: str
) -> dict[str, str]:
    """``environment`` with ``preload`` first in LD_PRELOAD and keyd's socket, made
    absolute (the program may change directory), in ``SOCKET_ENV``."""
    earlier = environment.get("LD_PRELOAD", "")
    return {
        **environment,
        "LD_PRELOAD": f"{preload} {earlier}".strip(),
        SOCKET_ENV: os.path.abspath(socket_path),
    }


def _exec(command: list[str], environment: dict[str, str]) -> int:
    """Replace this process with ``command``; the exit status if that fails."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvpe(command[0], command, environment)
    except FileNotFoundError:
        print(f"cryptoapi pfkey-exec: {command[0]}: command not found", file=sys.stderr)
        return EXIT_NOT_FOUND
    except OSError as error:
        print(f"cryptoapi pfkey-exec: {command[0]}: {error.strerror}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    raise AssertionError("unreachable: execvpe returned")  # pragma: no cover
