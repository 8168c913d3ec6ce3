"""``cryptoapi setkey``: a dry run against an in-process key manager, the same file through
the key daemon, -D/-F/-P, statements from stdin, JSON, and keys shown only on request."""

import argparse
import errno
import io
import json
import os

import pytest

from cryptoapi import InvalidArgument
from cryptoapi.cli import keyd as keyd_command
from cryptoapi.cli import setkey as setkey_command
from cryptoapi.pfkey import KeyManager
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.setkey import SetkeyError
from tests.pfkey.conftest import make_registry
from tests.pfkey.keyd import daemon_thread, running_keyd, short_dir, stop

AUTH_HEX = "7a" * 32
AUTH_SHOWN = " ".join(["7a7a7a7a"] * 8)  # as ipsec_hexdump prints it, in 4-byte groups
CONFIG = f"""# two hosts, transport mode
add 10.0.0.1 10.0.0.2 esp 0x1001 -m transport
    -E aes-cbc 0x000102030405060708090a0b0c0d0e0f
    -A hmac-sha256 0x{AUTH_HEX} ;
add 10.0.0.2 10.0.0.1 esp 0x1002 -m transport
    -E aes-gcm-16 0x{"33" * 20} ;
spdadd 10.0.0.1 10.0.0.2 any -P out ipsec esp/transport//require ;
spdadd 10.0.0.2 10.0.0.1 any -P in ipsec esp/transport//require ;
"""


def setkey(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="cryptoapi")
    commands = parser.add_subparsers(dest="command", required=True)
    setkey_command.add_parser(commands)
    keyd_command.add_parser(commands)
    args = parser.parse_args(["setkey", *argv])
    return args.run(args)  # type: ignore[no-any-return]


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "ipsec.conf"
    path.write_text(CONFIG)
    return str(path)


@pytest.fixture
def daemon():
    with short_dir() as where:
        path = os.path.join(where, "s")
        km = KeyManager(make_registry())
        with daemon_thread(km, path):
            yield path, km


def test_dry_run_lists_what_would_be_installed_without_keys(config, capsys):
    assert setkey("-f", config) == 0
    out = capsys.readouterr().out
    assert "dry run (no --socket): 4 statements" in out
    assert "holds 2 SAs and 2 policies" in out
    assert "E: aes-gcm-16  <160-bit key hidden>" in out
    assert "out prio def ipsec" in out and "esp/transport//require" in out
    assert "7a7a" not in out


def test_show_keys_shows_them(config, capsys):
    assert setkey("-f", config, "--show-keys") == 0
    assert f"\tA: hmac-sha256  {AUTH_SHOWN}\n" in capsys.readouterr().out


def test_json(config, capsys):
    assert setkey("-f", config, "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dry_run"] is True
    assert [s["command"] for s in report["statements"]] == ["add", "add", "spdadd", "spdadd"]
    by_spi = {sa["spi"]: sa for sa in report["sas"]}  # in dump order (Linux: newest first)
    assert sorted(by_spi) == [0x1001, 0x1002]
    assert "auth_key" not in by_spi[0x1001] and by_spi[0x1001]["auth_key_bits"] == 256
    assert sorted(p["dir"] for p in report["policies"]) == ["in", "out"]


def test_statements_from_stdin(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("spdadd 10.0.0.0/8 10.0.0.0/8 any -P out none;"))
    assert setkey("-c") == 0
    out = capsys.readouterr().out
    assert "1 statement checked" in out and "holds 0 SAs and 1 policy" in out  # singular


def test_a_parse_error_names_the_place_and_changes_nothing(daemon, tmp_path):
    path, km = daemon
    bad = tmp_path / "bad.conf"
    bad.write_text(CONFIG + "add 10.0.0.1 10.0.0.9 esp 0x1003\n  -E aes-cbc 0x0011 ;\n")
    with pytest.raises(SetkeyError) as caught:
        setkey("-f", str(bad), "--socket", path)
    assert str(caught.value).startswith(f"{bad}:10:14: aes-cbc takes 128/192/256-bit keys")
    assert caught.value.errno == errno.EINVAL
    assert len(km.sad) == 0 and len(km.spd) == 0


def test_through_the_daemon(daemon, config, capsys):
    path, km = daemon
    assert setkey("-f", config, "--socket", path) == 0
    assert len(km.sad) == 2 and len(km.spd) == 2
    assert "dry run" not in capsys.readouterr().out
    assert setkey("-D", "--socket", path) == 0
    out = capsys.readouterr().out
    assert "spi=4097(0x00001001)" in out and "<256-bit key hidden>" in out
    assert "7a7a" not in out
    assert setkey("-D", "--socket", path, "--show-keys") == 0
    assert AUTH_SHOWN in capsys.readouterr().out
    assert setkey("-D", "-P", "--socket", path) == 0
    assert capsys.readouterr().out.count("esp/transport//require") == 2
    # the same file again: every statement is refused, each reported, status 1
    assert setkey("-f", config, "--socket", path) == 1
    err = capsys.readouterr().err
    exists = "an SA with this SPI and destination exists already (EEXIST)"  # not strerror's
    assert f"cryptoapi setkey: {config}:2:1: add: {exists}\n" in err
    policy_exists = "a policy with this selector exists already (EEXIST)"
    assert f"cryptoapi setkey: {config}:8:1: spdadd: {policy_exists}\n" in err
    assert "errno" not in err
    assert setkey("-F", "-P", "--socket", path) == 0
    assert len(km.spd) == 0 and len(km.sad) == 2
    assert setkey("-F", "--socket", path) == 0
    assert len(km.sad) == 0
    assert setkey("-D", "--socket", path) == 0
    assert "No SAD entries." in capsys.readouterr().out


def test_flush_runs_before_the_file_and_dump_after(daemon, config, capsys, tmp_path):
    path, _ = daemon
    sas = tmp_path / "sas.conf"
    sas.write_text(CONFIG.split("spdadd", maxsplit=1)[0])
    assert setkey("-f", str(sas), "--socket", path) == 0
    assert setkey("-F", "-f", str(sas), "-D", "--socket", path) == 0  # no EEXIST: flushed
    out = capsys.readouterr().out
    assert out.count("mode=transport") == 2


def test_usage_errors():
    with pytest.raises(InvalidArgument, match="nothing to do"):
        setkey()
    with pytest.raises(InvalidArgument, match="-P goes with -D or -F"):
        setkey("-P", "-c")
    with short_dir() as where, pytest.raises(PfkeyError) as caught:
        setkey("-D", "--socket", os.path.join(where, "absent"))
    assert caught.value.errno == errno.ENOENT


ENCRYPTION_ONLY = (
    "add 10.0.0.1 10.0.0.2 esp 0x1001 -E aes-cbc 0x000102030405060708090a0b0c0d0e0f ;\n"
)


def test_a_dry_run_refuses_encryption_only_esp_saying_why(tmp_path, capsys):
    conf = tmp_path / "cbc-only.conf"
    conf.write_text(ENCRYPTION_ONLY)
    assert setkey("-f", str(conf)) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"cryptoapi setkey: {conf}:1:1: add: encryption-only")
    assert line.endswith("(--allow-unauthenticated-esp) (EINVAL)")
    assert setkey("-f", str(conf), "--allow-unauthenticated-esp") == 0  # the unsafe opt-in
    assert "holds 1 SA and" in capsys.readouterr().out


def test_the_opt_in_is_keyd_s_own_with_a_socket(daemon, tmp_path):
    path, km = daemon
    conf = tmp_path / "cbc-only.conf"
    conf.write_text(ENCRYPTION_ONLY)
    with pytest.raises(InvalidArgument, match="keyd's own flag decides"):
        setkey("-f", str(conf), "--socket", path, "--allow-unauthenticated-esp")
    assert setkey("-f", str(conf), "--socket", path) == 1  # the daemon refuses it
    assert len(km.sad) == 0


@pytest.mark.parametrize("opt_in", [False, True])
def test_keyd_admits_encryption_only_esp_only_with_its_flag(tmp_path, capsys, opt_in):
    conf = tmp_path / "cbc-only.conf"
    conf.write_text(ENCRYPTION_ONLY)
    flag = ("--allow-unauthenticated-esp",) if opt_in else ()
    with running_keyd(*flag) as (path, process):
        assert setkey("-f", str(conf), "--socket", path) == (0 if opt_in else 1)
        assert stop(process) == 0
    err = capsys.readouterr().err
    assert ("add: the key manager refused the message as invalid" in err) is not opt_in
