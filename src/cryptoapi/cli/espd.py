"""cryptoapi espd: a userspace IPsec endpoint between a TUN device and ESP.

    cryptoapi espd --tun esp0 -f ipsec.conf [--udp-port 4500] [--raw-esp] [--no-offload]
                   [--pcap esp.pcap]
    cryptoapi espd --tun esp0 --socket /run/cryptoapi/keyd.sock

Plaintext packets the host routes into the TUN device NAME (opened, or created; brought up
with MTU --mtu) are protected by the SAs and policies of a setkey file (-f) or of the
key daemon at --socket, which espd follows (its dump, then its changes; keys are fetched
with GET). ESP goes in UDP from --udp-port to the peer's (RFC 3948, as strongSwan's
kernel-libipsec sends it), or with --raw-esp as IP protocol 50. ESP received is checked,
decrypted and written to the TUN device. Addresses and routes on the TUN device are the
administrator's (ip addr, ip route).

The UDP sockets use the kernel's UDP GSO and GRO where it has them: the ESP packets of one
turn of the loop to one peer go out in few sendmsg calls (UDP_SEGMENT), and a recvmsg may
bring several datagrams (UDP_GRO). The TUN device carries a virtio-net header: the TCP
segments decrypted in one turn are written to it coalesced, one packet per run of a flow.
The kernel also hands espd TCP and UDP super-segments of up to 64 KB (TSO/USO), which espd
cuts and checksums itself: one read where there were up to 48. That cutting and the
coalescing are done in C (gso.c, gro.c, built on first use); where they cannot be built
they are done in Python, and TSO is then off unless --tso asks for it, since Python spends
more CPU cutting than the kernel does. --no-tso leaves the cutting to the kernel. espd
logs at start which offloads the TUN device and each socket use, and which language cuts
and coalesces; --no-offload reads, writes, sends and receives one packet per call. Raw
ESP sockets never offload.

--seq-state FILE keeps, for each SA's keys, a floor under its next sequence number (an
SQLite file, mode 0600, made if absent; default /var/lib/cryptoapi/espd-TUN.seq). The
sequence number is the IV of AES-GCM, AES-CCM, AES-CTR and ChaCha20-Poly1305, so after a
restart, kill -9 and power loss included, each SA goes on past its floor (skipping at most
65,536 numbers) and never sends an IV twice under a key; the peer's replay window accepts
it at once. Two espds need two files (a second one on the same file is refused).

Following keyd, espd reports each SA's usage to it (bytes, packets, first use, last
sequence number) every 2 seconds while it moves, at once after each 65,536 packets an SA
sends, and at exit, so that setkey -D --socket shows what the SAs carried, as ip -s xfrm
state does for the kernel's. keyd keeps the last sequence number as the SA's checkpoint;
an espd following a keyd that took over (PostgreSQL, --standby) sends above the
checkpoint raised by the takeover margin, so no sequence number is sent twice.

--hold-until-active (with --socket) is for the standby gateway of a pair whose keyds
share a PostgreSQL database: espd follows its keyd but carries nothing until that keyd is
active (it asks keyd's status socket, the --socket name with .ctl unless given, every
0.1 s); then it follows keyd anew and sends above the sequence numbers keyd's takeover
raised. A keyd that stands by again stops it. The tunnel address moves by other means
(README, "High availability").

--control PATH is the status socket (mode 0600, owner only; default the --seq-state file's
name with .ctl, /var/lib/cryptoapi/espd-TUN.ctl; --control none for none): each connection
is answered with espd's status as JSON, its counters and each SA's bytes, packets,
sequence numbers, replay window and drops (cryptoapi espd-status). Log records go to
standard error, INFO and above unless --log-level says otherwise (under systemd with their
level, for the journal); SIGTERM ends espd with one line saying what it sent and wrote.

--pcap FILE records every ESP packet sent and received (whole IP packets; for UDP the
outer IP/UDP header is rebuilt) for Wireshark or tshark. SIGUSR1 prints the counters
(/proc/net/xfrm_stat layout, then espd's own) to standard output, as does the exit;
SIGTERM or SIGINT stops espd (exit status 0).

If the TUN device goes away while espd runs (ip link del; its reads and writes fail with
EBADFD, ENODEV or, once no device of the name is left, EIO), espd prints its counters and
exits with status 1 and one line, "espd: TUN device NAME is gone (read: ...); exiting",
rather than spin: start it again once the device is back.

What stops espd from starting is said in one line, status 1, naming what failed: the
setkey file (FILE: reason, or FILE:LINE:COLUMN for a parse error or a byte that is not
UTF-8, or each statement refused), the UDP port ("espd: UDP port 4500: Address already in
use (another espd or IKE daemon?)"), the TUN device ("espd: TUN device esp0: Device or
resource busy (another espd holds it)"; EPERM: CAP_NET_ADMIN is needed), the raw ESP
sockets, the sequence floor file or the key daemon.

Encryption-only ESP SAs (a cipher with no authentication algorithm) are refused, as RFC
8221 asks: nothing would detect a forged or altered packet. --allow-unauthenticated-esp
admits them (from the setkey file, or from a keyd started with the same flag), which is
unsafe: their packets are unauthenticated by definition.
"""

import argparse
import contextlib
import errno
import logging
import os
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from cryptoapi._counts import counted
from cryptoapi.cli.logs import logging_to_stderr
from cryptoapi.cli.options import (
    add_control_option,
    add_log_level_option,
    add_selftests_option,
    add_unauthenticated_option,
)
from cryptoapi.errors import CryptoError
from cryptoapi.esp.espd.pcap import LINKTYPES, PcapWriter
from cryptoapi.esp.espd.tun import DEFAULT_MTU, TunDevice, open_tun

if TYPE_CHECKING:
    from cryptoapi.esp import Datapath
    from cryptoapi.esp.espd.endpoint import Endpoint
    from cryptoapi.esp.espd.follower import Follower
    from cryptoapi.esp.espd.notices import Notices
    from cryptoapi.esp.espd.role import KeydRole
    from cryptoapi.esp.espd.sockets import EspSocket
    from cryptoapi.esp.seqfloor import SequenceFloors
    from cryptoapi.pfkey.km.manager import KeyManager

log = logging.getLogger(__name__)

STATE_DIRECTORY = "/var/lib/cryptoapi"

UDP_HINTS = {
    errno.EADDRINUSE: "another espd or IKE daemon?",
    errno.EACCES: "a port below 1024 needs CAP_NET_BIND_SERVICE",
}
TUN_HINTS = {
    errno.EBUSY: "another espd holds it",
    errno.EPERM: "CAP_NET_ADMIN is needed",
    errno.EINVAL: "is it a TAP device, or the MTU out of range?",
    errno.ENOENT: "no TUN driver: modprobe tun",
}
RAW_HINTS = {errno.EPERM: "CAP_NET_RAW is needed"}
"""The likely cause of a start-up error, by errno, said after it (see :func:`_naming`)."""


class StartFailed(Exception):
    """espd cannot start: the message is one line naming what failed and why."""


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "espd",
        help="run a userspace IPsec (ESP) endpoint on a TUN device",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--tun", required=True, metavar="NAME", help="the TUN device")
    keys = parser.add_mutually_exclusive_group(required=True)
    keys.add_argument("--socket", help="follow the key daemon listening on this socket")
    keys.add_argument("-f", dest="file", metavar="FILE", help="SAs and policies (setkey)")
    parser.add_argument("--udp-port", type=int, default=4500, help="UDP port (default 4500)")
    parser.add_argument("--raw-esp", action="store_true", help="send ESP as IP protocol 50")
    offloads = parser.add_mutually_exclusive_group()
    offloads.add_argument(
        "--no-offload",
        dest="offload",
        action="store_false",
        help="no TUN or UDP offloads: one packet per read, write, send and receive",
    )
    offloads.add_argument(
        "--tso",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="read TCP/UDP super-segments from the TUN and cut them in espd"
        " (default: on where espd's gso.c builds, so that the cutting is done in C)",
    )
    parser.add_argument(
        "--seq-state",
        metavar="FILE",
        help=f"sequence floors kept across restarts (default {STATE_DIRECTORY}/espd-TUN.seq)",
    )
    parser.add_argument("--pcap", metavar="FILE", help="record every ESP packet here")
    parser.add_argument(
        "--pcap-link", choices=sorted(LINKTYPES), default="raw", help="capture link type"
    )
    parser.add_argument(
        "--mtu", type=int, default=DEFAULT_MTU, help=f"TUN MTU, 0 to keep (default {DEFAULT_MTU})"
    )
    parser.add_argument(
        "--hold-until-active",
        nargs="?",
        const="",
        metavar="KEYD_CONTROL",
        help="with --socket: carry nothing until keyd is active (asked at its status "
        "socket, default the --socket name with .ctl): a standby gateway",
    )
    add_control_option(parser, default="the --seq-state file's name with .ctl")
    add_log_level_option(parser)
    add_selftests_option(parser)
    add_unauthenticated_option(parser, where=" (from -f or from keyd)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        with (
            logging_to_stderr("espd", "cryptoapi", args.log_level),
            contextlib.ExitStack() as cleanup,
        ):
            built = _build(args, cleanup)
            if built is None:
                return 1
            endpoint, greeting = built
            cleanup.pop_all()  # the endpoint closes what it holds
            # said once SIGUSR1 and SIGTERM are handled: whoever waits for it may use them
            return endpoint.run(ready=lambda: print(greeting, file=sys.stderr, flush=True))
    except OSError as error:
        print(f"espd: {_reason(error)}", file=sys.stderr)
        return 1
    except (StartFailed, CryptoError) as error:
        print(f"espd: {error}", file=sys.stderr)
        return 1


def _reason(error: OSError) -> str:
    """``FILE: reason`` as a Unix tool says it, not Python's ``[Errno N] ...``."""
    reason = error.strerror or str(error)
    return f"{error.filename}: {reason}" if error.filename is not None else reason


@contextlib.contextmanager
def _naming(what: str, hints: Mapping[int, str] | None = None) -> Iterator[None]:
    """Turn an OSError (or ValueError) of the block into StartFailed: ``what: reason``
    and, from ``hints``, the likely cause, one line instead of a traceback or a bare
    ``[Errno N]``."""
    try:
        yield
    except OSError as error:
        reason = _reason(error)
        if error.filename == what:  # "tunnel.conf: tunnel.conf: ..." says it twice
            reason = reason.removeprefix(f"{what}: ")
        hint = (hints or {}).get(error.errno or 0)
        raise StartFailed(f"{what}: {reason}" + (f" ({hint})" if hint else "")) from None
    except ValueError as error:  # an interface name the kernel cannot take
        if isinstance(error, CryptoError):  # a SetkeyError names its own file:line:column
            raise
        raise StartFailed(f"{what}: {error}") from None


def _floors(args: argparse.Namespace) -> "SequenceFloors":
    """The sequence floor file (see the module docstring), claimed for this espd."""
    from cryptoapi.esp.seqfloor import SequenceFloors

    if args.seq_state is None:
        os.makedirs(STATE_DIRECTORY, mode=0o700, exist_ok=True)
    return SequenceFloors(seq_state_path(args))


def seq_state_path(args: argparse.Namespace) -> str:
    """The sequence floor file: --seq-state, else espd-TUN.seq in the state directory."""
    return args.seq_state or os.path.join(STATE_DIRECTORY, f"espd-{args.tun}.seq")


def _watch_status(
    args: argparse.Namespace,
    endpoint: "Endpoint",
    datapath: "Datapath",
    follower: "Follower | None",
) -> None:
    """Answer ``cryptoapi espd-status`` on the status socket (--control; by default beside
    the sequence floor file), unless --control none (or it cannot be made: a warning)."""
    import time

    from cryptoapi.esp.espd.status import espd_status
    from cryptoapi.pfkey.daemon.control import ControlServer, control_path

    path = args.control or control_path(seq_state_path(args))
    if path == "none":
        return
    started = time.monotonic()
    control = ControlServer.open(
        path, lambda: espd_status(endpoint, datapath, started=started, follower=follower)
    )
    if control is not None:
        endpoint.watch(control)


def _build(
    args: argparse.Namespace, cleanup: contextlib.ExitStack
) -> "tuple[Endpoint, str] | None":
    """The loop, each part it needs closed by ``cleanup`` if a later one fails, and the
    line that says it is ready; None (after saying why) when the setkey file has refused
    statements."""
    from cryptoapi.esp import Datapath
    from cryptoapi.esp.espd import keyfile
    from cryptoapi.esp.espd.endpoint import Endpoint
    from cryptoapi.esp.espd.notices import Notices
    from cryptoapi.esp.espd.reports import UsageReports
    from cryptoapi.pfkey.km.manager import KeyManager
    from cryptoapi.pfkey.wire.constants import SaType
    from cryptoapi.registry.registry import Registry

    key_manager = KeyManager(
        Registry(args.selftests) if args.selftests else None,
        allow_unauthenticated=args.allow_unauthenticated,
    )
    refused: list[str] = []
    if args.file:
        with _naming(args.file):
            refused = keyfile.load(key_manager, args.file)
    if args.hold_until_active is not None and not args.socket:
        refused.append("--hold-until-active follows a key daemon: give --socket")
    for line in refused:
        print(f"espd: {line}", file=sys.stderr)
    if refused:
        return None
    notices = Notices()
    follower = _follow(args.socket, key_manager, notices, cleanup) if args.socket else None
    encap = None if args.raw_esp else args.udp_port
    if follower is not None:  # keyd hears what only packets tell (see espd.notices)
        key_manager.registered.add(SaType.ESP)
        notices.forward = follower.report
    floors = _floors(args)
    cleanup.callback(floors.close)
    datapath = Datapath(
        key_manager, encap_port=encap, notify=notices, floors=floors, drops_clear=True
    )
    if follower is not None:  # and how much the SAs carried, every few seconds
        notices.reports = UsageReports(key_manager, datapath.states, follower.connection)
        floors.on_reserve = notices.reports.checkpoint  # and every N packets (checkpoints)
    tun, sockets = _devices(args, cleanup)
    endpoint = Endpoint(
        datapath, tun, sockets, follower=follower, notices=notices, pcap=_pcap(args, cleanup)
    )
    _watch_status(args, endpoint, datapath, follower)
    if args.hold_until_active is not None and follower is not None:
        endpoint.role = _role(args, follower)
    where = "raw ESP and " if args.raw_esp else ""
    greeting = (
        f"espd: ready on {tun.name}, {where}UDP/{args.udp_port}: "
        f"{counted(len(key_manager.sad), 'SA')}, "
        f"{counted(len(key_manager.spd), 'policy', 'policies')} (pid {os.getpid()})"
    )
    return endpoint, greeting


def _role(args: argparse.Namespace, follower: "Follower") -> "KeydRole":
    """What tells the endpoint whether keyd is active (see cryptoapi.esp.espd.role)."""
    from cryptoapi.esp.espd.role import KeydRole
    from cryptoapi.pfkey.daemon.control import control_path

    return KeydRole(args.hold_until_active or control_path(args.socket), follower)


def _follow(
    path: str, key_manager: "KeyManager", notices: "Notices", cleanup: contextlib.ExitStack
) -> "Follower":
    """A follower of the key daemon at ``path``, connected and synced (PfkeyError if not);
    what the local key manager says meanwhile (EXPIREs) goes to ``notices``."""
    from cryptoapi.esp.espd.follower import Follower
    from cryptoapi.esp.espd.mirror import Mirror

    follower = Follower(path, Mirror(key_manager, notices))
    follower.connect()
    cleanup.callback(follower.close)
    return follower


def _devices(
    args: argparse.Namespace, cleanup: contextlib.ExitStack
) -> "tuple[TunDevice, list[EspSocket]]":
    """The TUN device and the ESP sockets (OSError if the host refuses them)."""
    from cryptoapi.esp.espd.sockets import open_sockets

    with _naming(f"TUN device {args.tun}", TUN_HINTS):
        tun = open_tun(
            args.tun, mtu=args.mtu or None, offload=args.offload, segmentation=_tso(args)
        )
    cleanup.callback(tun.close)
    kinds = [(False, f"UDP port {args.udp_port}", UDP_HINTS)]
    if args.raw_esp:
        kinds.append((True, "raw ESP socket (IP protocol 50)", RAW_HINTS))
    sockets: list[EspSocket] = []
    for raw, what, hints in kinds:
        with _naming(what, hints):
            opened = open_sockets(udp_port=args.udp_port, raw=raw, offload=args.offload)
        for sock in opened:
            cleanup.callback(sock.close)
            log.info("%s: offloads: %s", sock, sock.offloads())
        sockets += opened
    log.info("TUN device %s: offloads: %s", tun.name, tun.offloads)
    return tun, sockets


def _tso(args: argparse.Namespace) -> bool:
    """--tso as given, else on where super-segments are cut in C (gso.c builds): cut in
    Python they cost more CPU than the kernel spends segmenting."""
    if not args.offload or args.tso is not None:
        return args.offload and bool(args.tso)
    from cryptoapi.esp import gso

    return gso.splitter()[1] == "C"


def _pcap(args: argparse.Namespace, cleanup: contextlib.ExitStack) -> PcapWriter | None:
    if not args.pcap:
        return None
    pcap = PcapWriter(args.pcap, linktype=LINKTYPES[args.pcap_link])
    cleanup.callback(pcap.close)
    return pcap
