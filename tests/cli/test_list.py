import json
import subprocess
import sys

from cryptoapi import Registry
from cryptoapi.cli import main


def test_list_json(capsys):
    assert main(["list", "--json", "--selftests", "off"]) == 0
    records = json.loads(capsys.readouterr().out)
    by_driver = {r["driver"]: r for r in records}
    sha = by_driver["sha256-openssl"]
    assert sha["name"] == "sha256"
    assert sha["provider"] == "openssl"
    assert sha["priority"] == 300
    assert sha["type"] == "shash"
    assert sha["selftest"] == "untested"
    assert (sha["digestsize"], sha["blocksize"]) == (32, 64)
    assert by_driver["sha3-512-generic"]["priority"] == 100
    assert len(records) == len(Registry("off").algorithms())
    assert {"generic", "openssl"} <= {r["provider"] for r in records}


def test_list_proc_crypto_text(capsys):
    assert main(["list", "sha1"]) == 0
    out = capsys.readouterr().out
    records = out.strip().split("\n\n")
    assert [r.splitlines()[1] for r in records] == [
        "driver       : sha1-openssl",
        "driver       : sha1-pycryptodome",
        "driver       : sha1-generic",
    ]
    assert records[0].splitlines()[:4] == [
        "name         : sha1",
        "driver       : sha1-openssl",
        "module       : openssl",
        "priority     : 300",
    ]


def test_python_dash_m_and_bad_mode():
    ok = subprocess.run(
        [sys.executable, "-m", "cryptoapi", "list", "md5"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0 and "md5-generic" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "cryptoapi", "list", "--selftests", "sometimes"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1
    assert "sometimes" in bad.stderr and "errno 22" in bad.stderr
