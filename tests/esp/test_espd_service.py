"""espd and keyd run as services: espd's usage reaches keyd (setkey -D shows what the SAs
carried), each daemon answers its status socket with JSON, and each says in one line why
and how it stopped."""

import json
import re
import signal
import subprocess
import sys
import time

import pytest

from cryptoapi.pfkey.daemon.client import PfkeyClient
from cryptoapi.pfkey.setkey import DaemonTransport, apply, parse
from tests.esp import netns
from tests.esp.netns import Host

REASON = netns.unavailable()
needs_netns = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def start_keyd(host: Host) -> tuple[subprocess.Popen[str], str]:
    """keyd in ``host``'s namespace, state and status socket beside its socket; (process,
    socket path) once it listens."""
    path = str(host.work / "keyd.sock")
    command = (sys.executable, "-m", "cryptoapi", "keyd", "--socket", path, "--state",
               str(host.work / "keyd.db"), "--log-level", "debug")  # fmt: skip
    process = host.ns.start(*command)
    assert process.stderr is not None
    netns.wait_for_line(process.stderr.fileno(), "keyd: listening")
    return process, path


def load(path: str, text: str) -> None:
    with PfkeyClient(path, timeout=netns.WAIT) as client:
        outcomes = apply(parse(text), DaemonTransport(client))
    assert not [line for o in outcomes for line in o.describe_errors()]


def cryptoapi(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cryptoapi", *argv],
        capture_output=True, text=True, timeout=netns.WAIT, check=False,
    )  # fmt: skip


def dumped_usage(path: str) -> dict[str, dict[str, object]]:
    """setkey -D --json --socket: each SA's current lifetime, by SPI."""
    done = cryptoapi("setkey", "-D", "--json", "--socket", path)
    assert done.returncode == 0, done.stderr
    statements = json.loads(done.stdout)["statements"]
    return {sa["spi"]: sa for s in statements for sa in s["replies"] if "spi" in sa}


@needs_netns
def test_usage_reaches_keyd_and_both_daemons_answer_their_status_sockets():
    with netns.hosts() as (a, b):
        daemon, path = start_keyd(a)
        load(path, netns.tunnel_conf(a, b))
        control = str(a.work / "espd.ctl")
        espd_a = a.espd("--socket", path, "--control", control).ready()
        espd_b = b.espd("-f", b.conf(netns.tunnel_conf(b, a))).ready()
        assert netns.ping(a, b, count=8) == 8
        # within a report interval (2 s) and keyd's answer, setkey -D shows the traffic
        text = ""
        deadline = time.monotonic() + netns.WAIT
        # (a report sent while the pings ran counts fewer: wait for the one after them)
        while text.count("allocated: 8\t") != 2 or not re.search(r"current: [1-9]", text):
            assert time.monotonic() < deadline, f"no usage in keyd's dump:\n{text}"
            time.sleep(0.5)
            text = cryptoapi("setkey", "-D", "--socket", path).stdout
        assert re.search(r"last: \w{3} +\d+ [\d:]+ \d{4}", text), text
        assert text.count("seq=0x00000008") == 2  # the last sequence numbers (KAME seq=)
        assert "allocated: 8" in text  # 8 echo requests out, 8 replies in
        dumped = dumped_usage(path)
        assert len(dumped) == 2
        for sa in dumped.values():  # and --json says the same
            current = sa["current"]
            assert isinstance(current, dict)
            assert current["allocations"] == 8 and current["bytes"] and current["usetime"]
        # espd's status: JSON, with the per-SA view that matches keyd's counts
        status = json.loads(cryptoapi("espd-status", "--control", control).stdout)
        assert status["role"] == "espd" and status["keyd"]["connected"] is True
        assert status["keyd"]["usage_reports_sent"] >= 2
        by_packets = sorted(sa["packets"] for sa in status["sas"])
        assert by_packets == [8, 8] and all(sa["bytes"] > 0 for sa in status["sas"])
        inbound = [sa for sa in status["sas"] if sa["replay"]["top"]]
        assert len(inbound) == 1 and inbound[0]["replay"]["top"] == 8
        assert inbound[0]["replay"]["seen"] == 8 and inbound[0]["drops"] == {}
        outbound = [sa for sa in status["sas"] if sa["seq_sent"]]
        assert len(outbound) == 1 and outbound[0]["seq_sent"] >= 8
        # keyd's status, beside its socket by default
        keyd = json.loads(cryptoapi("keyd-status", "--socket", path).stdout)
        assert keyd["role"] == "keyd" and keyd["sas"]["total"] == 2
        assert keyd["sas"]["packets"] == 16 and keyd["policies"] >= 2
        assert any(client["registered"] == ["ESP"] for client in keyd["clients"])
        # the last word of each
        code, _, said = espd_a.finish(signal.SIGTERM)
        assert code == 0 and "espd: stopping on SIGTERM: counters printed" in said
        assert "usage reports sent to the key daemon" in said
        assert netns.stop(daemon) == 0
        assert daemon.stderr is not None
        last = daemon.stderr.read()
        assert "keyd: stopping on SIGTERM: 2 SAs and" in last and "(usage written)" in last
        espd_b.finish()
    assert not (a.work / "espd.ctl").exists() and not (a.work / "keyd.ctl").exists()


def test_a_status_query_with_no_daemon_says_so_in_one_line(tmp_path):
    done = cryptoapi("espd-status", "--control", str(tmp_path / "nobody.ctl"))
    assert done.returncode == 1
    assert done.stderr.startswith("espd-status: ") and len(done.stderr.splitlines()) == 1
