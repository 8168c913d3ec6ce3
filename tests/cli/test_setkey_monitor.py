"""``cryptoapi setkey -x`` (ipsec-tools' promiscuous dump) against a real keyd, its usage
errors and its formatting; ``setkey -D`` without a daemon says it was a dry run."""

import os
import signal
import subprocess
import sys
import time

from cryptoapi.cli import main
from cryptoapi.pfkey import Message, MsgType, SaType
from cryptoapi.pfkey.daemon.client import PfkeyClient
from cryptoapi.pfkey.setkey.monitor import format_message, printdate, shown_part
from tests.esp.netns import wait_for_line
from tests.pfkey.conftest import ENC_KEY, sa_message
from tests.pfkey.keyd import WAIT, short_dir, start_keyd, stop


def test_dump_without_a_socket_is_an_empty_sad_and_says_it_was_a_dry_run(capsys):
    assert main(["setkey", "-D"]) == 0  # ipsec-tools: "No SAD entries." and exit(0)
    out, err = capsys.readouterr()
    assert out == "No SAD entries.\n"
    assert err == (
        "cryptoapi setkey: no --socket: a dry run against an empty in-process key manager "
        "(give --socket PATH for the key daemon's SAs)\n"
    )
    assert main(["setkey", "-D", "-P"]) == 0
    assert capsys.readouterr().out == "No SPD entries.\n"


def test_x_needs_a_socket_and_goes_alone(capsys):
    assert main(["setkey", "-x"]) == 1
    assert capsys.readouterr().err == (
        "cryptoapi: -x needs --socket PATH: without a key daemon there is nothing to watch\n"
    )
    assert main(["setkey", "-x", "-D", "--socket", "/nonexistent"]) == 1
    assert "-x goes alone" in capsys.readouterr().err


def test_a_promisc_echo_alone_is_not_shown_and_a_body_is_unwrapped():
    echo = Message(MsgType.X_PROMISC, 1).encode()
    assert shown_part(echo) is None
    add = sa_message(0x1001)
    assert shown_part(echo[:16] + add) == add
    assert shown_part(add) == add


def test_a_message_is_its_kdebug_header_then_its_dump_form_keys_hidden():
    text = format_message(sa_message(0x1001, seq=5, pid=77), now=0)
    lines = text.splitlines()
    assert lines[0] == "SADB_ADD"
    assert lines[1] == "sadb_msg{ version=2 type=3 errno=0 satype=3"
    assert lines[2].startswith("  len=") and lines[2].endswith("reserved=0 seq=5 pid=77")
    assert "\tesp mode=transport spi=4097(0x00001001) reqid=0(0x00000000)" in lines
    assert ENC_KEY.hex()[:8] not in text and "-bit key hidden>" in text
    assert printdate(0.5)[-7:] == ".500000"


def test_a_refusal_says_why_in_words():
    refused = Message(MsgType.DELETE, SaType.ESP, 3, 9, 3).encode()  # errno 3: ESRCH
    first = format_message(refused).splitlines()[0]
    assert first == "SADB_DELETE: refused, no such SA (never added, or expired or deleted) (ESRCH)"


def test_x_prints_an_add_another_client_makes_until_sigterm():
    with short_dir() as where:
        path = os.path.join(where, "s")
        keyd = start_keyd(path)
        watcher = subprocess.Popen(
            [sys.executable, "-m", "cryptoapi", "setkey", "-x", "--socket", path],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert watcher.stdout is not None
            seen = _add_until_seen(path, watcher.stdout.fileno())
            watcher.send_signal(signal.SIGTERM)
            assert watcher.wait(WAIT) == 0
            seen += watcher.stdout.read().decode()
        finally:
            if watcher.poll() is None:
                watcher.kill()
                watcher.wait(WAIT)
            stop(keyd)
    assert "SADB_ADD\nsadb_msg{ version=2 type=3 errno=0 satype=3\n" in seen
    assert "-bit key hidden>" in seen and ENC_KEY.hex()[:8] not in seen
    assert watcher.stderr is not None and watcher.stderr.read() == b""


def _add_until_seen(path: str, fd: int) -> str:
    """Add SAs (SPI 0x1001, 0x1002, ...) with another client until the watcher prints one
    (the first may come before it turned promiscuous mode on); what it printed."""
    deadline = time.monotonic() + WAIT
    with PfkeyClient(path, timeout=WAIT) as other:
        for spi in range(0x1001, 0x1001 + 100):
            other.request(sa_message(spi, seq=0, pid=other.pid))
            try:
                return "".join(wait_for_line(fd, f"spi={spi}({spi:#010x})", timeout=0.5))
            except AssertionError:
                assert time.monotonic() < deadline, "setkey -x printed no ADD in time"
    raise AssertionError("setkey -x printed none of 100 ADDs")
