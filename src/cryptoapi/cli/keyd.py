"""cryptoapi keyd: run the PF_KEY v2 key daemon on a Unix socket.

    cryptoapi keyd --socket /run/cryptoapi/keyd.sock [--state /var/lib/cryptoapi/keys.db]

The socket (mode 0600) speaks PF_KEY v2, one message per datagram; only the daemon's owner
may connect. With --state the SAs and policies are kept in an SQLite file (mode 0600)
and every acknowledged change is committed first, so they survive a crash or kill -9;
--sync normal trades power-loss durability for speed. The state file is the daemon's
alone: locked while it runs (a second daemon on it exits 1, naming the first's pid), never
opened through a symbolic link, and refused unless it is a key database of this user that
others cannot read, or absent (then it is made); keys of deleted SAs are gone from it and
its WAL before the deletion is acknowledged. SIGTERM or SIGINT stops the daemon and removes
the socket, with one line saying which signal and what was written.

The status socket (--control PATH, default the socket's name with .ctl: keyd.sock gives
keyd.ctl; mode 0600, owner only; --control none for none) answers each connection with
keyd's status as JSON: its SAs by state and their usage, policies, clients and counters
(cryptoapi keyd-status). Log records go to standard error, INFO and above unless
--log-level says otherwise; under systemd they carry their level into the journal.

High availability: --state postgresql://user@host/db keeps the state in PostgreSQL
(pip install 'cryptoapi[postgresql]'), each acknowledged change committed durably first
(synchronous_commit on), in the schema cryptoapi_keyd (another program's schema of that
name is refused, never touched). One keyd is active on a database: the holder of its
advisory lock; a second one exits 1, naming the first, unless started with --standby. A
standby loads every SA and policy, follows each change the active commits, answers DUMP,
GET and SPDDUMP, and refuses writes with EROFS; when the active's database session ends
(it exits or is killed; its host is lost, once the server notices) a standby takes the lock
within about 0.1 s and serves writes. An active that loses its database answers writes
with EAGAIN (nothing it cannot commit is acknowledged), keeps answering reads, and comes
back as a standby once the database answers again. A URL that does not connect exits 1
with one line. SIGUSR1 logs the role; keyd-status shows it under "ha".

Encryption-only ESP SAs (a cipher with no authentication algorithm: nothing detects a forged
packet) are refused with EINVAL, as RFC 8221 asks; --allow-unauthenticated-esp admits them,
unsafely (an espd following this daemon needs the same flag to carry them).
"""

import argparse
import os
import sys
from typing import Any

from cryptoapi._counts import counted
from cryptoapi.cli.logs import logging_to_stderr
from cryptoapi.cli.options import (
    add_control_option,
    add_log_level_option,
    add_selftests_option,
    add_unauthenticated_option,
)
from cryptoapi.pfkey.daemon.control import control_path
from cryptoapi.pfkey.daemon.pgconnect import shown
from cryptoapi.pfkey.daemon.pgstore import PgStore
from cryptoapi.pfkey.daemon.server import KeyDaemon, serve
from cryptoapi.pfkey.km.manager import KeyManager
from cryptoapi.registry.registry import Registry


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "keyd",
        help="run the PF_KEY v2 key daemon on a Unix socket",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--socket", required=True, help="the Unix socket to listen on")
    parser.add_argument(
        "--state",
        help="SQLite file, or postgresql:// URL, keeping SAs and policies across restarts",
    )
    parser.add_argument(
        "--standby",
        action="store_true",
        help="with a postgresql:// --state: follow the active keyd, take over when it goes",
    )
    parser.add_argument(
        "--sync",
        choices=("full", "normal"),
        default="full",
        help="commit durability: full survives power loss, normal only a crash (default full)",
    )
    add_control_option(parser, default="the socket's name with .ctl")
    add_log_level_option(parser)
    add_selftests_option(parser)
    add_unauthenticated_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    key_manager = KeyManager(
        Registry(args.selftests) if args.selftests else None,
        allow_unauthenticated=args.allow_unauthenticated,
    )

    def ready(daemon: KeyDaemon, loaded: tuple[int, int]) -> None:
        restored = (
            f"; {counted(loaded[0], 'SA')} and {counted(loaded[1], 'policy', 'policies')}"
            f" from {shown(args.state) if args.state else None}"
        )
        if isinstance(daemon.gate, PgStore):
            restored += f" ({daemon.gate.role})"
        print(
            f"keyd: listening on {daemon.path} (pid {os.getpid()})"
            + (restored if args.state else ""),
            file=sys.stderr,
            flush=True,
        )

    control = args.control or control_path(args.socket)
    with logging_to_stderr("keyd", "cryptoapi.pfkey", args.log_level):
        return serve(
            args.socket,
            km=key_manager,
            state=args.state,
            synchronous=args.sync,
            ready=ready,
            control=None if control == "none" else control,
            standby=args.standby,
        )
