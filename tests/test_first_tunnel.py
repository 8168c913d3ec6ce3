"""scripts/first-tunnel, the README's first tunnel, runs as a user would run it: two
namespaces, two espds, a ping across, the setkey dump, and nothing left behind. Needs root,
``ip netns``, ``ping`` and /dev/net/tun (skipped with the reason otherwise)."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.esp import netns

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "first-tunnel"
REASON = netns.unavailable() or (None if shutil.which("ping") else "needs ping (iputils)")


def namespaces() -> set[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    return {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}


@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_the_first_tunnel_pings_across_shows_the_sas_and_cleans_up():
    before = namespaces()
    env = dict(os.environ, CRYPTOAPI=str(Path(sys.executable).parent / "cryptoapi"))
    done = subprocess.run(
        [str(SCRIPT)], capture_output=True, text=True, timeout=180, env=env, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "3 packets transmitted, 3 received" in out
    assert "esp mode=tunnel spi=4097(0x00001001)" in out  # setkey -D -f left.conf
    assert "esp mode=tunnel spi=8194(0x00002002)" in out
    assert "<160-bit key hidden>" in out  # AES-GCM-16: 128-bit key and 32-bit salt
    assert re.search(r"^EspOutPackets\s+[1-9]", out, re.MULTILINE)  # the counters, via SIGUSR1
    assert out.rstrip().endswith("torn down: namespaces, devices, espds and files are gone")
    assert namespaces() <= before  # nothing left behind


def test_the_script_says_why_it_cannot_run_without_root_and_exits_2():
    drop = [] if os.geteuid() != 0 else [shutil.which("setpriv") or "setpriv"]
    if drop and not shutil.which(drop[0]):
        pytest.skip("needs setpriv to run the script without root")
    if drop:
        drop += ["--reuid=65534", "--regid=65534", "--clear-groups"]
    done = subprocess.run(
        [*drop, str(SCRIPT)], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "first-tunnel: cannot run here: needs root (network namespaces, veth and TUN devices)\n"
    )
