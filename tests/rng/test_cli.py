"""``cryptoapi rng``: bytes or hex on stdout, a chosen driver, clean errors and pipes."""

import subprocess
import sys

from cryptoapi.cli import main


def test_raw_bytes(capsysbinary):
    assert main(["rng", "100000", "--selftests", "off"]) == 0
    out = capsysbinary.readouterr().out
    assert len(out) == 100000 and len(set(out)) == 256


def test_hex_and_driver(capsysbinary):
    assert main(["rng", "16", "--hex", "--driver", "drbg_pr_ctr_aes256"]) == 0
    out = capsysbinary.readouterr().out
    assert len(out) == 33 and out.endswith(b"\n")
    bytes.fromhex(out.decode())


def test_zero_bytes(capsysbinary):
    assert main(["rng", "0"]) == 0
    assert capsysbinary.readouterr().out == b""


def test_unknown_driver_is_one_line(capsys):
    assert main(["rng", "8", "--driver", "drbg_nopr_md5"]) == 1
    assert "drbg_nopr_md5" in capsys.readouterr().err


def test_a_reader_leaving_early_is_exit_141():
    command = [sys.executable, "-m", "cryptoapi", "rng", "10000000"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(10)
        proc.stdout.close()
        assert proc.wait(60) == 141
        assert proc.stderr.read() == b""
