"""espd failing cleanly: what stops it from starting, and its TUN device going away while
it runs, each said in one line naming the port, the device or the file (exit status 1),
never a traceback, a bare errno or a loop that spins.

The port and device cases run in a network namespace of their own (see
:mod:`tests.esp.netns`; skipped with the reason where that cannot be done); the file cases
need none.
"""

import errno
import os
import time

import pytest

from cryptoapi.cli import espd as espd_command_module
from cryptoapi.cli import main
from cryptoapi.esp.espd import tun
from tests.esp import netns
from tests.esp.netns import Espd, espd_command

REASON = netns.unavailable()
needs_netns = pytest.mark.skipif(REASON is not None, reason=REASON or "")
ONE_SA = "add 192.0.2.1 192.0.2.2 esp 0x1001 -E aes-gcm-16 0x" + "11" * 20 + ";\n"
GONE_WITHIN = 5.0
"""Seconds espd may take to notice that its TUN device was deleted, and exit."""


def exited(espd: Espd, within: float = netns.WAIT) -> tuple[int, str]:
    """(exit status, standard error) of an espd expected to exit on its own."""
    code = espd.process.wait(within)
    return code, "".join(espd.stderr) + espd.rest()


@needs_netns
def test_espd_exits_when_its_tun_device_is_deleted():
    with netns.lone_host() as host:
        espd = host.espd("-f", host.conf(ONE_SA)).ready()
        deleted = time.monotonic()
        host.ns.ip("link", "del", host.tun)
        code, err = exited(espd, GONE_WITHIN)
        assert time.monotonic() - deleted < GONE_WITHIN
    assert code == 1
    assert "espd: TUN device esp0 is gone (read: File descriptor in bad state); exiting\n" in err
    assert "Traceback" not in err


@needs_netns
def test_a_taken_udp_port_is_named():
    holder = (
        "import socket, time\n"
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('0.0.0.0', 4500))\n"
        "print('ready', flush=True); time.sleep(60)\n"
    )
    with netns.lone_host() as host:
        taken = host.ns.start(netns.PYTHON, "-c", holder)
        assert taken.stdout is not None
        netns.wait_for_line(taken.stdout.fileno(), "ready")
        code, err = exited(host.espd("-f", host.conf(ONE_SA)))
    assert (code, err) == (
        1,
        "espd: UDP port 4500: Address already in use (another espd or IKE daemon?)\n",
    )


@needs_netns
def test_a_tun_device_another_espd_holds_is_named():
    with netns.lone_host() as host:
        conf = host.conf(ONE_SA)
        first = host.espd("-f", conf).ready()
        second_floors = str(host.work / "second.seq")
        second = host.espd("-f", conf, "--udp-port", "4501", "--seq-state", second_floors)
        code, err = exited(second)
        assert first.process.poll() is None  # the first one is not disturbed
    assert (code, err) == (
        1,
        "espd: TUN device esp0: Device or resource busy (another espd holds it)\n",
    )


@needs_netns
def test_a_tun_device_without_cap_net_admin_is_named():
    with netns.lone_host() as host:
        espd = Espd(
            host.ns.start(
                "setpriv", "--inh-caps=-net_admin", "--bounding-set=-net_admin",
                netns.PYTHON, "-m", "cryptoapi", "espd", "--tun", host.tun,
                "-f", host.conf(ONE_SA), "--seq-state", str(host.seq_state),
            )
        )  # fmt: skip
        code, err = exited(espd)
    assert (code, err) == (
        1,
        "espd: TUN device esp0: Operation not permitted (CAP_NET_ADMIN is needed)\n",
    )


def test_a_setkey_file_that_is_not_utf8_is_named_with_its_line(tmp_path):
    conf = tmp_path / "tunnel.conf"
    conf.write_bytes(ONE_SA.encode() + b"# caf\xe9\n")
    done = espd_command("--tun", "esp0", "-f", str(conf), "--seq-state", str(tmp_path / "s"))
    assert (done.returncode, done.stderr) == (
        1,
        f"espd: {conf}:2:6: byte 0xe9 is not UTF-8 text\n",
    )


def test_an_encryption_only_sa_stops_espd_unless_it_opts_in(tmp_path):
    conf = tmp_path / "cbc-only.conf"
    conf.write_text("add 192.0.2.1 192.0.2.2 esp 0x1001 -E aes-cbc 0x" + "11" * 16 + ";\n")
    done = espd_command("--tun", "esp0", "-f", str(conf), "--seq-state", str(tmp_path / "s"))
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"espd: {conf}:1:1: add: encryption-only ESP")


@needs_netns
def test_the_unsafe_opt_in_lets_espd_carry_an_encryption_only_sa():
    with netns.lone_host() as host:
        conf = host.conf("add 192.0.2.1 192.0.2.2 esp 0x1001 -E aes-cbc 0x" + "11" * 16 + ";\n")
        espd = host.espd("-f", conf, "--allow-unauthenticated-esp").ready()
        assert "1 SA," in "".join(espd.stderr)
        code, _, err = espd.finish()
    assert code == 0, err


def test_a_setkey_file_that_cannot_be_read_is_named(tmp_path):
    conf = tmp_path / "absent.conf"
    done = espd_command("--tun", "esp0", "-f", str(conf), "--seq-state", str(tmp_path / "s"))
    assert (done.returncode, done.stderr) == (1, f"espd: {conf}: No such file or directory\n")


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (errno.EPERM, "Operation not permitted (CAP_NET_ADMIN is needed)"),
        (errno.EBUSY, "Device or resource busy (another espd holds it)"),
        (errno.ENOENT, "/dev/net/tun: No such file or directory (no TUN driver: modprobe tun)"),
    ],
)
def test_each_tun_error_is_one_line_with_its_likely_cause(
    tmp_path, monkeypatch, capsys, code, said
):
    """The words for errors a namespace cannot easily cause (no /dev/net/tun), from the
    same code path: open_tun made to fail as the kernel would."""

    def refuse(name: str, **_: object) -> None:
        filename = tun.TUN_PATH if code == errno.ENOENT else None
        raise OSError(code, os.strerror(code), filename)

    monkeypatch.setattr(espd_command_module, "open_tun", refuse)
    conf = tmp_path / "tunnel.conf"
    conf.write_text(ONE_SA)
    argv = ["espd", "--tun", "esp9", "-f", str(conf), "--seq-state", str(tmp_path / "s")]
    assert main(argv) == 1
    assert capsys.readouterr().err == f"espd: TUN device esp9: {said}\n"


@pytest.mark.parametrize(
    ("name", "code", "gone"),
    [
        ("lo", errno.EBADFD, True),  # a detached file: the device was deleted
        ("lo", errno.ENODEV, True),
        ("lo", errno.EIO, False),  # EIO from a device that is only down
        ("espabsent0", errno.EIO, True),  # EIO, and no device of the name left
        ("lo", errno.EAGAIN, False),
        ("lo", errno.EINVAL, False),  # a packet the device refused
    ],
)
def test_only_errors_of_a_device_that_is_gone_end_the_loop(name, code, gone):
    assert tun.TunDevice(-1, name).gone(OSError(code, os.strerror(code))) is gone
