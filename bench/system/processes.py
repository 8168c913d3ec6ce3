"""The processes ``bench.espd`` starts in its namespaces: :class:`Daemon`, one with its
output collected as it comes, and :class:`EspdPair`, an espd in each namespace.

A Daemon has its own session, so a Ctrl-C reaches only the benchmark, which then stops
it; two threads collect its standard output and error so that no pipe ever fills. Leaving
the harness's ``hosts()`` stops whatever is still running; every wait is bounded.
"""

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from bench.system.topology import MTU, TUN, Transform, setkey_text
from tests import netns
from tests.netns import Host, Namespace, StepError

PYTHON = sys.executable
READY = 30.0  # espd's start (imports, the setkey file) on a loaded machine


class Daemon:
    """A process started in a namespace, its output collected as it comes."""

    def __init__(self, ns: Namespace, *argv: str, label: str) -> None:
        self.label = label
        self.process = ns.start(*argv, stdin=subprocess.DEVNULL, start_new_session=True)
        self._out = bytearray()
        self._err = bytearray()
        self._changed = threading.Condition()
        assert self.process.stdout is not None and self.process.stderr is not None
        self._readers = [
            threading.Thread(target=self._drain, args=(pipe.fileno(), buf), daemon=True)
            for pipe, buf in ((self.process.stdout, self._out), (self.process.stderr, self._err))
        ]
        for reader in self._readers:
            reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _drain(self, fd: int, into: bytearray) -> None:
        while chunk := os.read(fd, 1 << 16):
            with self._changed:
                into += chunk
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def stdout(self, start: int = 0) -> str:
        with self._changed:
            return self._out[start:].decode(errors="replace")

    def stderr(self) -> str:
        with self._changed:
            return self._err.decode(errors="replace")

    def wait_for(self, text: str, timeout: float, *, stream: str = "stderr") -> None:
        """Wait (bounded) for ``text`` in the stream; StepError, with what it said, if it
        does not come or the process exits first."""
        wanted = text.encode()
        buf = self._err if stream == "stderr" else self._out
        deadline = time.monotonic() + timeout
        with self._changed:
            while wanted not in buf:
                left = deadline - time.monotonic()
                said = self._err.decode(errors="replace").strip()[-2000:]
                if self.process.poll() is not None:
                    raise StepError(f"{self.label} exited ({self.process.returncode}): {said}")
                if left <= 0:
                    raise StepError(f"{self.label}: no {text!r} within {timeout:.0f} s: {said}")
                self._changed.wait(min(left, 0.2))

    def output_after(self, start: int, sig: int, *, quiet: float = 0.15) -> str:
        """Send ``sig`` and return what standard output gets after byte ``start`` once it
        has grown and then stayed quiet for ``quiet`` seconds (bounded by WAIT)."""
        self.process.send_signal(sig)
        deadline = time.monotonic() + netns.WAIT
        with self._changed:
            while len(self._out) == start and time.monotonic() < deadline:
                self._changed.wait(0.1)
            size = -1
            while size != len(self._out) and time.monotonic() < deadline:
                size = len(self._out)
                self._changed.wait(quiet)
            return self._out[start:].decode(errors="replace")

    def out_size(self) -> int:
        with self._changed:
            return len(self._out)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signal the process (if it still runs) and wait, bounded; SIGKILL if it does not
        exit. Its exit status."""
        code = netns.stop(self.process, sig)
        for reader in self._readers:
            reader.join(netns.WAIT)
        return code


def seq_state(work: Path, name: str) -> Path:
    """Where the espd ``name`` keeps its sequence floors: one file each, as espd requires
    (both TUNs are espd0, so espd's default, per TUN name, would be one file for both),
    kept for the whole run, so a restarted espd goes on past its floors."""
    return work / f"{name}.seq"


class EspdPair:
    """An espd in each namespace for one transform; ``profile`` puts one under cProfile."""

    def __init__(
        self,
        hosts: tuple[Host, Host],
        transform: Transform,
        work: Path,
        *,
        mtu: int = MTU,
        profile: tuple[int, Path] | None = None,
        espd_options: Sequence[str] = (),
    ) -> None:
        self.hosts = hosts
        self.daemons: list[Daemon] = []
        try:
            for index, host in enumerate(hosts):
                conf = work / f"{host.ns.name}-{transform.name}.conf"
                conf.write_text(setkey_text(transform, index))
                espd = [
                    *("-m", "cryptoapi", "espd", "--tun", TUN, "-f", str(conf)),
                    *("--mtu", str(mtu), "--seq-state", str(seq_state(work, host.ns.name))),
                    *espd_options,
                ]
                if profile is not None and profile[0] == index:
                    espd = ["-m", "cProfile", "-o", str(profile[1]), *espd]
                label = f"espd in {host.ns.name}"
                self.daemons.append(Daemon(host.ns, PYTHON, *espd, label=label))
            for daemon in self.daemons:
                daemon.wait_for("espd: ready", READY)
        except BaseException:
            self.stop()
            raise

    @property
    def pids(self) -> tuple[int, int]:
        return self.daemons[0].pid, self.daemons[1].pid

    def counters(self) -> tuple[dict[str, int], dict[str, int]]:
        """Each espd's counters now (SIGUSR1)."""
        found = []
        for daemon in self.daemons:
            start = daemon.out_size()
            found.append(netns.parse_stats(daemon.output_after(start, signal.SIGUSR1)))
        return found[0], found[1]

    def check_alive(self) -> None:
        for daemon in self.daemons:
            if daemon.process.poll() is not None:
                raise StepError(f"{daemon.label} exited: {daemon.stderr().strip()[-1000:]}")

    def stop(self) -> list[dict[str, int]]:
        """Stop both (SIGTERM); the counters each printed at exit."""
        for daemon in self.daemons:
            daemon.stop()
        return [netns.parse_stats(daemon.stdout()) for daemon in self.daemons]


def handled(counters: dict[str, int]) -> int:
    """Packets an espd took in: from the TUN, and from the ESP sockets."""
    return counters.get("EspdTunInPackets", 0) + counters.get("EspdReceivePackets", 0)
