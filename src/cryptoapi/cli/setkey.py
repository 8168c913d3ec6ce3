"""``cryptoapi setkey``: ipsec-tools setkey statements for the key daemon, or a dry run.

    cryptoapi setkey -f ipsec.conf --socket PATH    # apply to the daemon at PATH
    cryptoapi setkey -f ipsec.conf                  # dry run: check and show what it makes
    cryptoapi setkey -c < statements                # statements from standard input
    cryptoapi setkey -D [-P] --socket PATH          # dump the SAD (with -P the SPD)
    cryptoapi setkey -F [-P] --socket PATH          # flush the SAD (with -P the SPD)

The whole input is parsed before anything is sent: an error names file, line and column and
nothing changes. Without ``--socket`` the statements run against an in-process key manager
(a dry run) and the SAs and policies it would hold are listed. ``-F`` runs before the file
and ``-D`` after it. Keys are shown only with ``--show-keys``. Statements the key manager
refuses are reported (errno and reason) and make the exit status 1.
"""

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from typing import Any

from cryptoapi.errors import InvalidArgument
from cryptoapi.pfkey.client import PfkeyClient
from cryptoapi.pfkey.constants import MsgType
from cryptoapi.pfkey.manager import KeyManager
from cryptoapi.pfkey.message import Message
from cryptoapi.pfkey.setkey import (
    DaemonTransport,
    LocalTransport,
    Outcome,
    Position,
    Statement,
    apply,
    parse,
    parse_file,
)
from cryptoapi.pfkey.setkey.apply import Transport
from cryptoapi.pfkey.setkey.show import format_reply, policy_dict, sa_dict

SHOWN = frozenset(("get", "getspi", "dump", "spddump"))
"""Statements whose replies are printed."""


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "setkey",
        help="load setkey(8) statements into the key daemon, or check them (dry run)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("-f", dest="file", metavar="FILE", help="read statements from FILE")
    source.add_argument("-c", dest="stdin", action="store_true", help="read them from stdin")
    parser.add_argument("-D", dest="dump", action="store_true", help="dump the SAD")
    parser.add_argument("-F", dest="flush", action="store_true", help="flush the SAD")
    parser.add_argument("-P", dest="spd", action="store_true", help="-D/-F act on the SPD")
    parser.add_argument("--socket", help="the key daemon's socket (default: a dry run)")
    parser.add_argument("--show-keys", action="store_true", help="show key material")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per reply")
    parser.set_defaults(run=run)


def _statements(args: argparse.Namespace) -> list[Statement]:
    """-F first, then the input, then -D (all parsed before anything runs)."""
    if not (args.file or args.stdin or args.dump or args.flush):
        raise InvalidArgument("nothing to do: give -f FILE, -c, -D or -F")
    if args.spd and not (args.dump or args.flush):
        raise InvalidArgument("-P goes with -D or -F")
    out = []
    if args.flush:
        kind = MsgType.X_SPDFLUSH if args.spd else MsgType.FLUSH
        out.append(_builtin("spdflush" if args.spd else "flush", "-F", kind))
    if args.file:
        out += parse_file(args.file)
    elif args.stdin:
        out += parse(sys.stdin.read(), "<stdin>")
    if args.dump:
        kind = MsgType.X_SPDDUMP if args.spd else MsgType.DUMP
        out.append(_builtin("spddump" if args.spd else "dump", "-D", kind))
    return out


def _builtin(command: str, flag: str, kind: int) -> Statement:
    return Statement(command, Position(f"<{flag}>", 1, 1), (Message(kind),))


@contextlib.contextmanager
def _transport(args: argparse.Namespace) -> Iterator[tuple[Transport, KeyManager | None]]:
    if args.socket:
        with PfkeyClient(args.socket, timeout=args.timeout) as client:
            yield DaemonTransport(client), None
    else:
        km = KeyManager()
        yield LocalTransport(km), km


def run(args: argparse.Namespace) -> int:
    statements = _statements(args)
    with _transport(args) as (transport, km):
        outcomes = apply(statements, transport)
        listed: list[Message] = []
        if km is not None:  # the dry run: what would the daemon hold?
            for kind in (MsgType.DUMP, MsgType.X_SPDDUMP):
                dump = _builtin("dump", "dry run", kind)
                listed += apply([dump], transport)[0].replies
    errors = [line for o in outcomes for line in o.describe_errors()]
    if args.json:
        print(json.dumps(_json(outcomes, km, listed, args.show_keys), indent=2))
    else:
        _print(outcomes, km, listed, args.show_keys)
        for line in errors:
            print(f"cryptoapi setkey: {line}", file=sys.stderr)
    return 1 if errors else 0


def _print(
    outcomes: list[Outcome], km: KeyManager | None, listed: list[Message], show_keys: bool
) -> None:
    for outcome in outcomes:
        command = outcome.statement.command
        if command not in SHOWN:
            continue
        for reply in outcome.replies:
            print(format_reply(reply, show_keys=show_keys))
        if not outcome.replies and outcome.ok and command in ("dump", "spddump"):
            print("No SPD entries." if command == "spddump" else "No SAD entries.")
    if km is not None:
        sas = [m for m in listed if m.type == MsgType.DUMP]
        print(
            f"dry run (no --socket): {len(outcomes)} statements checked against an in-process "
            f"key manager, which now holds {len(sas)} SAs and {len(listed) - len(sas)} "
            "policies:"
        )
        for reply in listed:
            print(format_reply(reply, show_keys=show_keys))


def _json(
    outcomes: list[Outcome], km: KeyManager | None, listed: list[Message], show_keys: bool
) -> dict[str, Any]:
    def entry(reply: Message) -> dict[str, Any]:
        if reply.type in (MsgType.X_SPDDUMP, MsgType.X_SPDADD, MsgType.X_SPDUPDATE):
            return policy_dict(reply)
        return sa_dict(reply, show_keys=show_keys)

    out: dict[str, Any] = {
        "dry_run": km is not None,
        "statements": [
            {
                "command": o.statement.command,
                "where": str(o.statement.where),
                "errors": o.describe_errors(),
                "replies": [entry(r) for r in o.replies] if o.statement.command in SHOWN else [],
            }
            for o in outcomes
        ],
    }
    if km is not None:
        out["sas"] = [entry(m) for m in listed if m.type == MsgType.DUMP]
        out["policies"] = [entry(m) for m in listed if m.type == MsgType.X_SPDDUMP]
    return out
