"""A key daemon for the espd tests: ``cryptoapi keyd`` in a test namespace, waited for, and
setkey statements loaded into it (helpers shared by the tests that run espd under keyd)."""

import subprocess
import sys

from cryptoapi.pfkey.daemon.client import PfkeyClient
from cryptoapi.pfkey.setkey import DaemonTransport, apply, parse
from tests.esp import netns
from tests.esp.netns import Host


def keyd(host: Host, name: str) -> tuple[subprocess.Popen[str], str]:
    """``cryptoapi keyd`` started in ``host``'s namespace, its state in a file beside its
    socket: (process, socket path)."""
    path, state = str(host.work / f"{name}.sock"), str(host.work / f"{name}.db")
    command = (sys.executable, "-m", "cryptoapi", "keyd", "--socket", path, "--state", state)
    return host.ns.start(*command), path


def listening(process: subprocess.Popen[str]) -> None:
    """Wait (bounded) for keyd's ``listening`` line."""
    assert process.stderr is not None
    netns.wait_for_line(process.stderr.fileno(), "keyd: listening")


def setkey(path: str, text: str) -> None:
    """Load setkey statements into the key daemon at ``path`` (as ``cryptoapi setkey -f
    FILE --socket PATH`` does; a Unix socket is reached from any namespace)."""
    with PfkeyClient(path, timeout=netns.WAIT) as client:
        outcomes = apply(parse(text), DaemonTransport(client))
    assert not [line for o in outcomes for line in o.describe_errors()]
