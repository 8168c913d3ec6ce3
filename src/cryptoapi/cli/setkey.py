"""cryptoapi setkey: ipsec-tools setkey statements for the key daemon, or a dry run.

    cryptoapi setkey -f ipsec.conf --socket PATH    # apply to the daemon at PATH
    cryptoapi setkey -f ipsec.conf                  # dry run: check and show what it makes
    cryptoapi setkey -c < statements                # statements from standard input
    cryptoapi setkey -D [-P] --socket PATH          # dump the SAD (with -P the SPD)
    cryptoapi setkey -F [-P] --socket PATH          # flush the SAD (with -P the SPD)
    cryptoapi setkey -x --socket PATH               # print every message keyd sends, until ^C

The whole input is parsed before anything is sent: an error names file, line and column and
nothing changes. Without --socket the statements run against an in-process key manager
(a dry run) and the SAs and policies it would hold are listed; with -D that listing is
the dump itself (printed once, as setkey -D prints it) and the dry-run summary goes to
stderr. -F runs before the file and -D after it. Listings are ipsec-tools' setkey -D/-DP
format, field for field; keys are shown only with --show-keys. Statements the key manager
refuses are reported (each with its reason) and make the exit status 1. An input that cannot be
read (missing, a directory, not UTF-8) is one line, cryptoapi: FILE: reason, and status
1; so is a key daemon that goes away partway, naming the FILE:LINE reached (the
statements before it were sent). -D or -F without --socket and without input acts on an
empty in-process key manager: stdout is what setkey prints for an empty SAD (status 0, as
ipsec-tools'), and a note on stderr says it was a dry run.

-x is ipsec-tools' promiscuous mode: it turns SADB_X_PROMISC on and prints each message the
daemon sends (every request any client makes, every reply and broadcast) with the time of
day, its sadb_msg header and, for an SA or a policy, its -D form, until SIGINT or SIGTERM
(status 0) or until the daemon goes away (status 1).

Encryption-only ESP SAs (-E with a cipher and no -A) are refused, EINVAL, as RFC 8221
asks: nothing would detect a forged packet. In a dry run --allow-unauthenticated-esp
admits them, unsafely; with --socket the daemon decides (keyd --allow-unauthenticated-esp).
"""

import argparse
import contextlib
import json
import signal
import sys
import time
from collections.abc import Iterator
from typing import Any

from cryptoapi._counts import counted
from cryptoapi.cli.options import add_unauthenticated_option
from cryptoapi.errors import CryptoError, InvalidArgument
from cryptoapi.pfkey.daemon.client import PfkeyClient
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.manager import KeyManager
from cryptoapi.pfkey.setkey import (
    DaemonTransport,
    LocalTransport,
    Outcome,
    Position,
    Statement,
    apply,
    decode_text,
    parse,
)
from cryptoapi.pfkey.setkey.apply import Interrupted, Transport
from cryptoapi.pfkey.setkey.monitor import watch
from cryptoapi.pfkey.setkey.show import format_reply, policy_dict, sa_dict
from cryptoapi.pfkey.wire.constants import MsgType
from cryptoapi.pfkey.wire.message import Message

SHOWN = frozenset(("get", "getspi", "dump", "spddump"))
"""Statements whose replies are printed."""
NO_DAEMON = (
    "no --socket: a dry run against an empty in-process key manager "
    "(give --socket PATH for the key daemon's SAs)"
)


class Unreadable(CryptoError):
    """The input cannot be read (missing, a directory ...): the message names it and why."""


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
    parser.add_argument(
        "-x", dest="promisc", action="store_true", help="print every message keyd sends (^C ends)"
    )
    parser.add_argument("--socket", help="the key daemon's socket (default: a dry run)")
    parser.add_argument("--show-keys", action="store_true", help="show key material")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per reply")
    add_unauthenticated_option(parser, where=" (a dry run only: with --socket keyd decides)")
    parser.set_defaults(run=run)


def _statements(args: argparse.Namespace) -> list[Statement]:
    """-F first, then the input, then -D (all parsed before anything runs)."""
    if not (args.file or args.stdin or args.dump or args.flush):
        raise InvalidArgument("nothing to do: give -f FILE, -c, -D or -F")
    if args.spd and not (args.dump or args.flush):
        raise InvalidArgument("-P goes with -D or -F")
    if args.allow_unauthenticated and args.socket:
        raise InvalidArgument(
            "--allow-unauthenticated-esp is for a dry run; with --socket keyd's own flag decides"
        )
    out = []
    if args.flush:
        kind = MsgType.X_SPDFLUSH if args.spd else MsgType.FLUSH
        out.append(_builtin("spdflush" if args.spd else "flush", "-F", kind))
    if args.file:
        out += parse(_read_file(args.file), args.file)
    elif args.stdin:
        out += parse(_read_stdin(), "<stdin>")
    if args.dump:
        kind = MsgType.X_SPDDUMP if args.spd else MsgType.DUMP
        out.append(_builtin("spddump" if args.spd else "dump", "-D", kind))
    return out


def _read_file(name: str) -> str:
    """The text of the file ``name`` (what ``parse_file`` reads): Unreadable if it cannot
    be read, SetkeyError naming the place of a byte that is not UTF-8."""
    try:
        with open(name, "rb") as stream:
            raw = stream.read()
    except OSError as error:
        raise Unreadable(f"{name}: {error.strerror or error}") from None
    return decode_text(raw, name)


def _read_stdin() -> str:
    """Standard input as text, decoded here so that bad bytes are reported, not escaped."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream without bytes underneath (io.StringIO)
        return sys.stdin.read()
    return decode_text(buffer.read(), "<stdin>")


def _builtin(command: str, flag: str, kind: int) -> Statement:
    return Statement(command, Position(f"<{flag}>", 1, 1), (Message(kind),))


@contextlib.contextmanager
def _transport(args: argparse.Namespace) -> Iterator[tuple[Transport, KeyManager | None]]:
    if args.socket:
        with PfkeyClient(args.socket, timeout=args.timeout) as client:
            yield DaemonTransport(client), None
    else:
        km = KeyManager(allow_unauthenticated=args.allow_unauthenticated)
        yield LocalTransport(km), km


def run(args: argparse.Namespace) -> int:
    if args.promisc:
        return _promisc(args)
    try:
        statements = _statements(args)
        with _transport(args) as (transport, km):
            outcomes = apply(statements, transport)
            listed: list[Message] = []
            if km is not None:  # the dry run: what would the daemon hold?
                for kind in (MsgType.DUMP, MsgType.X_SPDDUMP):
                    dump = _builtin("dump", "dry run", kind)
                    listed += apply([dump], transport)[0].replies
    except Unreadable as error:
        return _fatal(str(error))
    except Interrupted as error:
        _report(args, list(error.outcomes), None, [])  # what was done before it
        return _fatal(str(error))
    return 1 if _report(args, outcomes, km, listed) else 0


def _promisc(args: argparse.Namespace) -> int:
    """``setkey -x``: watch the daemon until SIGINT/SIGTERM (0) or until it goes away (1)."""
    if args.file or args.stdin or args.dump or args.flush or args.spd:
        raise InvalidArgument("-x goes alone (with --socket, --show-keys)")
    if not args.socket:
        raise InvalidArgument(
            "-x needs --socket PATH: without a key daemon there is nothing to watch"
        )
    stopping: list[int] = []
    handlers = {sig: signal.signal(sig, lambda signum, _: stopping.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}  # fmt: skip
    try:
        with PfkeyClient(args.socket, timeout=args.timeout) as client:
            watch(client, _write, lambda: not stopping, show_keys=args.show_keys)
    except PfkeyError as error:
        return _fatal(str(error))
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    return 0


def _write(text: str) -> None:
    """Write and flush at once: a reader of a pipe sees each message when it comes."""
    sys.stdout.write(text)
    sys.stdout.flush()


def _fatal(message: str) -> int:
    print(f"cryptoapi: {message}", file=sys.stderr)
    return 1


def _report(
    args: argparse.Namespace, outcomes: list[Outcome], km: KeyManager | None, listed: list[Message]
) -> bool:
    """Print the outcomes (JSON or text) and, on stderr, each refusal; whether any."""
    errors = [line for o in outcomes for line in _refusals(o)]
    if args.json:
        print(json.dumps(_json(outcomes, km, listed, args.show_keys), indent=2))
    else:
        if km is not None and not (args.file or args.stdin):
            print(f"cryptoapi setkey: {NO_DAEMON}", file=sys.stderr)
            km = None  # nothing was checked: no summary
        _print(outcomes, km, listed, args.show_keys)
        for line in errors:
            print(f"cryptoapi setkey: {line}", file=sys.stderr)
    return bool(errors)


def _refusals(outcome: Outcome) -> list[str]:
    """``FILE:LINE:COL: command: reason`` per refusal, as a person reads it (the errno
    stays in the JSON and on the outcome)."""
    statement = outcome.statement
    return [f"{statement.where}: {statement.command}: {why}" for _code, why in outcome.errors]


def _print(
    outcomes: list[Outcome], km: KeyManager | None, listed: list[Message], show_keys: bool
) -> None:
    now = time.time()  # setkey's time(0), for every "current:" of this listing
    dumped = False
    for outcome in outcomes:
        command = outcome.statement.command
        if command not in SHOWN:
            continue
        dumped = dumped or command in ("dump", "spddump")
        for reply in outcome.replies:
            print(format_reply(reply, show_keys=show_keys, now=now))
        if not outcome.replies and outcome.ok and command in ("dump", "spddump"):
            print("No SPD entries." if command == "spddump" else "No SAD entries.")
    if km is None:
        return
    sas = [m for m in listed if m.type == MsgType.DUMP]
    summary = (
        f"dry run (no --socket): {counted(len(outcomes), 'statement')} checked against an "
        f"in-process key manager, which now holds {counted(len(sas), 'SA')} and "
        f"{counted(len(listed) - len(sas), 'policy', 'policies')}"
    )
    if dumped:  # -D listed them already: stdout stays exactly what setkey -D prints
        print(summary + ".", file=sys.stderr)
        return
    print(summary + ":")
    for reply in listed:
        print(format_reply(reply, show_keys=show_keys, now=now))


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
