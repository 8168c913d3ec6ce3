"""The one network-namespace harness, for the espd tests and for ``bench.espd``.

:func:`hosts` builds two namespaces joined by a veth pair (the "outer" link), each with a
persistent TUN device carrying its "inner" address and a route to the other's inner network
through the TUN, as strongSwan's kernel-libipsec routes into ``ipsec0``. The TUN devices
exist before any espd opens them (``ip tuntap add``), so addresses and routes survive an
espd being killed and restarted. A :class:`Layout` names the addresses: the tests' default
(TEST-NET-1 outside, 10.1.0.1 and 10.2.0.1 inside, fresh namespace names per call) or the
benchmark's (fixed names that another run must not be holding). IPv6 is off where the
layout says (the tests': on the veth, so that the link carries nothing the test did not
cause, no router solicitations).

Every process is started with ``ip netns exec`` and tracked; leaving the context manager
ends them (SIGTERM, then SIGKILL), ends anything else left in the namespaces (only this
run's processes can be there) and deletes the namespaces, even after a failure. Every wait
is bounded. Traffic never leaves the namespaces: every address used is inside them.

:func:`tunnel_setkey` writes the setkey statements of a tunnel (its SAs, then the mirrored
out/in policies) for the tests here, ``bench.esp`` and ``bench.espd``. A step that fails
raises :class:`StepError`, an AssertionError, so that in a test it reads as a failure.
"""

import contextlib
import itertools
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
WAIT = 15.0
"""The longest any single step waits (a command, a start, an exit, a transfer)."""

_names = itertools.count()


class StepError(AssertionError):
    """A step that failed (a command, a start, a wait); the message says why and what the
    process printed."""


# -- can this machine do it? -------------------------------------------------------------


def unavailable(*tools: str) -> str | None:
    """Why namespaces cannot be used here, with ``tools`` on PATH (None when they can)."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, veth and TUN devices)"
    if not os.path.exists("/dev/net/tun"):
        return "needs /dev/net/tun"
    missing = [tool for tool in ("ip", *tools) if shutil.which(tool) is None]
    if missing:
        return f"needs {', '.join(missing)} on PATH"
    probe = f"espdprobe{os.getpid()}"
    made = subprocess.run(
        ["ip", "netns", "add", probe], check=False, capture_output=True, timeout=WAIT
    )
    if made.returncode:
        return f"ip netns does not work here: {made.stderr.decode().strip()}"
    subprocess.run(["ip", "netns", "del", probe], check=False, capture_output=True, timeout=WAIT)
    return None


# -- namespaces and their processes ------------------------------------------------------


def run(*argv: str, timeout: float = WAIT) -> str:
    """Run a command to completion (bounded); its output; StepError if it fails."""
    try:
        done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise StepError(f"{' '.join(argv)}: no exit within {timeout:.0f} s") from None
    if done.returncode:
        raise StepError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return done.stdout


def netns_exists(name: str) -> bool:
    return os.path.exists(f"/run/netns/{name}")


@dataclass
class Namespace:
    """One network namespace made here and the processes started in it."""

    name: str
    processes: list[subprocess.Popen[str]] = field(default_factory=list)

    def ip(self, *argv: str) -> str:
        return run("ip", "-n", self.name, *argv)

    def argv(self, *argv: str) -> list[str]:
        """``argv`` run inside the namespace (``ip netns exec`` execs it: same pid)."""
        return ["ip", "netns", "exec", self.name, *argv]

    def sysctl(self, key: str, value: str) -> None:
        path = "/proc/sys/" + key.replace(".", "/")
        run(*self.argv("sh", "-c", f"echo {value} > {path}"))

    def start(
        self, *argv: str, stdin: int | None = None, start_new_session: bool = False
    ) -> subprocess.Popen[str]:
        """A process in the namespace (``ip netns exec`` execs it: the pid is its own), its
        standard output and error piped; ``start_new_session``: in a session of its own,
        so that a Ctrl-C reaches only the caller, which then stops it."""
        process = subprocess.Popen(
            self.argv(*argv),
            cwd=ROOT,
            text=True,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=start_new_session,
        )
        self.processes.append(process)
        return process

    def close(self) -> None:
        """Stop its processes, anything else left inside (only ours can be there), delete."""
        for process in self.processes:
            stop(process)
        with contextlib.suppress(StepError):
            for pid in run("ip", "netns", "pids", self.name).split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)  # a child of one of our processes
        subprocess.run(
            ["ip", "netns", "del", self.name], check=False, capture_output=True, timeout=WAIT
        )


def stop(process: subprocess.Popen[str], sig: int = signal.SIGTERM) -> int:
    """Signal ``process`` (if running) and wait, bounded; SIGKILL if it does not exit."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)
        try:
            process.wait(WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(WAIT)
    return process.returncode


@contextlib.contextmanager
def namespace(tag: str, *, name: str | None = None) -> Iterator[Namespace]:
    """A namespace with its loopback up, deleted on exit: ``name``, or by default a fresh
    name (unique per process and call) ending in ``tag``. StepError if ``name`` exists
    already (another run: nothing of it is touched)."""
    if name is None:
        name = f"espd{os.getpid()}{tag}{next(_names)}"
    elif netns_exists(name):
        raise StepError(f"namespace {name} exists: another run? (ip netns del)")
    run("ip", "netns", "add", name)
    ns = Namespace(name)
    try:
        ns.ip("link", "set", "lo", "up")
        yield ns
    finally:
        ns.close()


# -- two hosts ---------------------------------------------------------------------------


@dataclass
class Host:
    """One side: its namespace, outer (veth) and inner (TUN) address, devices, the other
    side's addresses, and the inner networks routed (its own and the peer's; the inner
    addresses, /32, unless given)."""

    ns: Namespace
    outer: str
    inner: str
    peer_outer: str
    peer_inner: str
    veth: str = "veth0"
    tun: str = "esp0"
    work: Path = Path()
    net: str = ""
    peer_net: str = ""

    def __post_init__(self) -> None:
        self.net = self.net or f"{self.inner}/32"
        self.peer_net = self.peer_net or f"{self.peer_inner}/32"

    def espd(self, *options: str) -> "Espd":
        """Start ``cryptoapi espd --tun TUN OPTIONS`` here (call ``ready()`` on it), its
        sequence floors in this host's file of the work directory unless OPTIONS say."""
        if "--seq-state" not in options:
            options = (*options, "--seq-state", str(self.seq_state))
        process = self.ns.start(PYTHON, "-m", "cryptoapi", "espd", "--tun", self.tun, *options)
        return Espd(process)

    @property
    def seq_state(self) -> Path:
        """This host's espd sequence floor file (kept across its espd's restarts)."""
        return self.work / f"{self.ns.name}.seq"

    def conf(self, text: str) -> str:
        """Write a setkey file for this host; its path."""
        path = self.work / f"{self.ns.name}.conf"
        path.write_text(text)
        return str(path)


@dataclass(frozen=True)
class Layout:
    """The names and addresses of two hosts (the tests', by default)."""

    names: tuple[str, str] | None = None  # None: fresh names (tags "a", "b")
    veths: tuple[str, str] = ("veth0", "veth0")
    outer: tuple[str, str] = ("192.0.2.1", "192.0.2.2")  # on the veths, /24
    inner: tuple[str, str] = ("10.1.0.1", "10.2.0.1")  # on the TUNs, /32
    nets: tuple[str, str] | None = None  # routed into the TUNs; None: the inner addresses
    tun: str = "esp0"
    tun_mtu: int = 1500
    veth_mtu: int = 1500
    ipv6_off: tuple[str, ...] | None = None  # net.ipv6.conf.X.disable_ipv6; None: the veth


@contextlib.contextmanager
def hosts(layout: Layout = Layout()) -> Iterator[tuple[Host, Host]]:
    """Two namespaces joined by a veth pair, a TUN device and routes on each (see the
    module docstring); a private work directory for their files."""
    nets = layout.nets or ("", "")
    with contextlib.ExitStack() as stack:
        spaces = [
            stack.enter_context(namespace(tag, name=layout.names[i] if layout.names else None))
            for i, tag in enumerate("ab")
        ]
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="espd")))
        left, right = (
            Host(
                ns=spaces[i],
                outer=layout.outer[i],
                inner=layout.inner[i],
                peer_outer=layout.outer[1 - i],
                peer_inner=layout.inner[1 - i],
                veth=layout.veths[i],
                tun=layout.tun,
                work=work,
                net=nets[i],
                peer_net=nets[1 - i],
            )
            for i in (0, 1)
        )
        mtu = str(layout.veth_mtu)
        run("ip", "link", "add", left.veth, "netns", left.ns.name, "mtu", mtu, "type", "veth",
            "peer", "name", right.veth, "netns", right.ns.name, "mtu", mtu)  # fmt: skip
        for host in (left, right):
            for conf in layout.ipv6_off or (host.veth,):
                host.ns.sysctl(f"net.ipv6.conf.{conf}.disable_ipv6", "1")
            _configure(host, layout.tun_mtu)
        yield left, right


@contextlib.contextmanager
def lone_host() -> Iterator[Host]:
    """One namespace with a persistent TUN device and no peer, for what espd does alone
    (its start-up errors, losing its TUN device); a private work directory."""
    with contextlib.ExitStack() as stack:
        ns = stack.enter_context(namespace("l"))
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="espd")))
        host = Host(ns, "192.0.2.1", "10.1.0.1", "192.0.2.2", "10.2.0.1", work=work)
        ns.ip("tuntap", "add", "dev", host.tun, "mode", "tun")
        yield host


def _configure(host: Host, tun_mtu: int) -> None:
    ns = host.ns
    ns.ip("addr", "add", f"{host.outer}/24", "dev", host.veth)
    ns.ip("link", "set", host.veth, "up")
    ns.ip("tuntap", "add", "dev", host.tun, "mode", "tun")
    ns.ip("link", "set", host.tun, "mtu", str(tun_mtu))
    ns.ip("addr", "add", f"{host.inner}/32", "dev", host.tun)
    ns.ip("link", "set", host.tun, "up")
    ns.ip("route", "add", host.peer_net, "dev", host.tun, "src", host.inner)


# -- a tunnel's setkey statements --------------------------------------------------------


@dataclass(frozen=True)
class TunnelSa:
    """One SA of a tunnel: from ``src`` to ``dst`` (outer addresses), its SPI and setkey's
    algorithm options (``-E aes-gcm-16 0x...``, ``-E aes-cbc 0x... -A hmac-sha256 0x...``)."""

    src: str
    dst: str
    spi: int
    algorithms: str


def tunnel_setkey(
    sas: Sequence[TunnelSa],
    *,
    here: str,
    there: str,
    net: str,
    peer_net: str,
    replay: int | None = None,
    flush: bool = False,
) -> str:
    """setkey statements for a tunnel as one endpoint (outer address ``here``) sees it: the
    SAs (tunnel mode, the same on both sides; ``-r replay`` when given), then the policies
    ``net`` to ``peer_net`` out through ``here``-``there`` and back in, which mirror the
    peer's; ``flush`` and ``spdflush`` first if asked."""
    window = "" if replay is None else f" -r {replay}"
    statements = ["flush;", "spdflush;"] if flush else []
    statements += [
        f"add {sa.src} {sa.dst} esp {sa.spi:#x} -m tunnel{window} {sa.algorithms};" for sa in sas
    ]
    statements += [
        f"spdadd {net} {peer_net} any -P out ipsec esp/tunnel/{here}-{there}/require;",
        f"spdadd {peer_net} {net} any -P in ipsec esp/tunnel/{there}-{here}/require;",
    ]
    return "\n".join([*statements, ""])


# -- espd --------------------------------------------------------------------------------


@dataclass
class Espd:
    """A running espd and what it printed on standard error."""

    process: subprocess.Popen[str]
    stderr: list[str] = field(default_factory=list)

    def ready(self) -> "Espd":
        """Wait (bounded) for espd's ``ready`` line; AssertionError if it exits first."""
        assert self.process.stderr is not None
        try:
            self.stderr += wait_for_line(self.process.stderr.fileno(), "espd: ready")
        except AssertionError as error:
            stop(self.process, signal.SIGKILL)
            raise AssertionError(f"espd did not get ready: {error}{self.rest()}") from None
        return self

    def stats(self) -> dict[str, int]:
        """SIGUSR1, and the counters espd prints (one write, so the block is whole once
        its first bytes are there; read until the pipe stays quiet for a moment)."""
        assert self.process.stdout is not None
        self.process.send_signal(signal.SIGUSR1)
        fd = self.process.stdout.fileno()
        text, wait = b"", WAIT
        while select.select([fd], [], [], wait)[0]:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            text, wait = text + chunk, 0.1
        assert text, "espd printed no counters on SIGUSR1"
        return parse_stats(text.decode())

    def rest(self) -> str:
        """What espd wrote after the lines read (once it has exited)."""
        if self.process.poll() is None or self.process.stderr is None:
            return ""
        return self.process.stderr.read()

    def finish(self, sig: int = signal.SIGTERM) -> tuple[int, str, str]:
        """Stop espd; (exit status, standard output, the rest of standard error)."""
        code = stop(self.process, sig)
        out = self.process.stdout.read() if self.process.stdout else ""
        return code, out, "".join(self.stderr) + self.rest()


def espd_command(*args: str) -> subprocess.CompletedProcess[str]:
    """``cryptoapi espd ARGS`` run to its end here, outside any namespace (for what stops
    it before it opens a device), bounded."""
    return subprocess.run(
        [PYTHON, "-m", "cryptoapi", "espd", *args],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )


def wait_for_line(fd: int, wanted: str, timeout: float = WAIT) -> list[str]:
    """Read the pipe ``fd`` (unbuffered, so nothing hides in a buffer from ``select``)
    until a line containing ``wanted``; the lines read. StepError, with them, if it
    does not come within ``timeout`` or the pipe closes first."""
    text, deadline = b"", time.monotonic() + timeout
    while wanted.encode() not in text:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise StepError(f"no {wanted!r} in time; got {text.decode()!r}")
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            raise StepError(f"the pipe closed before {wanted!r}; got {text.decode()!r}")
        text += chunk
    return text.decode().splitlines(keepends=True)


def parse_stats(text: str) -> dict[str, int]:
    """``name<TAB>value`` lines (espd's SIGUSR1 output, ``/proc/net/xfrm_stat``'s layout)
    as a dict; other lines are passed over, and the last value of a name wins (a later
    block is a later reading)."""
    found: dict[str, int] = {}
    for match in re.finditer(r"^(\w+)\s+(-?\d+)\s*$", text, re.MULTILINE):
        found[match.group(1)] = int(match.group(2))
    return found
