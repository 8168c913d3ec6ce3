"""cryptoapi keyd-status, cryptoapi espd-status: ask a running daemon for its status.

    cryptoapi keyd-status [--socket /run/cryptoapi/keyd.sock | --control PATH]
    cryptoapi espd-status [--tun esp0 | --seq-state FILE | --control PATH]

Each daemon answers on its status socket (owner only) with one JSON object, printed here
as it came: keyd its SAs by state and their usage, policies, clients and counters; espd its
role, uptime, key source, counters and each SA's bytes, packets, sequence numbers, replay
window and drops. No signal is sent and nothing in the daemon waits for this command. The
socket is found as the daemon finds it: --control, else beside keyd's --socket, or beside
espd's --seq-state (by default /var/lib/cryptoapi/espd-TUN.seq). Exit status 1, with one
line, when no daemon answers.
"""

import argparse
import json
import sys
from typing import Any

from cryptoapi.cli.espd import seq_state_path
from cryptoapi.pfkey.daemon.control import control_path, query


def add_parser(commands: Any) -> None:
    keyd = _parser(commands, "keyd-status", "show a running keyd's status (JSON)")
    keyd.add_argument("--socket", default="/run/cryptoapi/keyd.sock", help="keyd's socket")
    keyd.set_defaults(run=run, where=lambda args: control_path(args.socket))
    espd = _parser(commands, "espd-status", "show a running espd's status (JSON)")
    espd.add_argument("--tun", default="esp0", help="espd's TUN device (default esp0)")
    espd.add_argument("--seq-state", metavar="FILE", help="espd's sequence floor file")
    espd.set_defaults(run=run, where=_espd_control)


def _parser(commands: Any, name: str, summary: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=summary,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--control", metavar="PATH", help="the daemon's status socket")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait (default 5)")
    return parser


def _espd_control(args: argparse.Namespace) -> str:
    """espd's default status socket, beside its sequence floor file (as espd finds it)."""
    return control_path(seq_state_path(args))


def run(args: argparse.Namespace) -> int:
    path = args.control or args.where(args)
    try:
        status = query(path, timeout=args.timeout)
    except OSError as error:
        print(f"{args.command}: {path}: {error.strerror or error}", file=sys.stderr)
        return 1
    except ValueError as error:
        print(f"{args.command}: {path}: not a status: {error}", file=sys.stderr)
        return 1
    print(json.dumps(status, indent=2))
    return 0
