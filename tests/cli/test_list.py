"""``cryptoapi list``: the /proc/crypto records, as text or JSON, of everything or of the
names asked for (template names built on request)."""

import json
import subprocess
import sys

import pytest

from cryptoapi import Registry
from cryptoapi.cli import listing, main


def test_list_json(capsys):
    assert main(["list", "--json", "--selftests", "off"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert list(document) == ["schema", "algorithms"] and document["schema"] == 1
    records = document["algorithms"]
    by_driver = {r["driver"]: r for r in records}
    sha = by_driver["sha256-openssl"]
    assert sha["name"] == "sha256"
    assert sha["provider"] == "openssl" and "module" not in sha
    assert sha["priority"] == 300
    assert sha["type"] == "shash"
    assert sha["selftest"] == "untested"
    assert (sha["digestsize"], sha["blocksize"]) == (32, 64)
    assert by_driver["sha3-512-generic"]["priority"] == 100
    assert len(records) == len(Registry("off").algorithms())
    assert {"generic", "openssl"} <= {r["provider"] for r in records}


def test_list_proc_crypto_text(capsys):
    """c_show's lines, each record ended by a blank line, newest registration first."""
    assert main(["list", "sha1"]) == 0
    out = capsys.readouterr().out
    records = out.split("\n\n")
    assert records.pop() == ""  # the text ends with the last record's blank line
    assert sorted(r.splitlines()[1] for r in records) == [
        f"driver       : {driver}" for driver in sorted(Registry("off").implementations("sha1"))
    ]
    assert {"sha1-generic", "sha1-openssl"} <= set(Registry("off").implementations("sha1"))
    registry = Registry()
    listing.drivers_of(registry, ["sha1"])  # what the command does first: loads sha1's
    order = {i.driver: i.order for i in registry.algorithms() if i.name == "sha1"}
    drivers = [r.splitlines()[1].split(" : ")[1] for r in records]
    assert drivers == sorted(order, key=lambda driver: -order[driver])
    assert records[drivers.index("sha1-openssl")].splitlines() == [
        "name         : sha1",
        "driver       : sha1-openssl",
        "module       : openssl",
        "priority     : 300",
        "refcnt       : 1",
        "selftest     : unknown",
        "internal     : no",
        "type         : shash",
        "blocksize    : 64",
        "digestsize   : 20",
    ]


def test_a_template_name_is_built_on_request(capsys):
    assert main(["list", "--json", "--selftests", "off", "cts(cbc(aes))", "md5-generic"]) == 0
    drivers = [r["driver"] for r in json.loads(capsys.readouterr().out)["algorithms"]]
    expected = Registry("off").implementations("cts(cbc(aes))")
    assert len(expected) >= 3 and "cts(cbc(aes-generic))" in expected
    assert sorted(drivers) == sorted([*expected, "md5-generic"])


def test_a_composition_of_drivers_is_listed_alone(capsys):
    assert main(["list", "--selftests", "off", "hmac(sha256-generic)"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        "name         : hmac(sha256)",
        "driver       : hmac(sha256-generic)",
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("sha999", "no usable algorithm or driver named 'sha999'"),
        ("hmac(sha999)", "no algorithm 'sha999' (in 'hmac(sha999)')"),
        ("nosuch(sha256)", "no template 'nosuch' (in 'nosuch(sha256)')"),
        ("x25519", "no usable algorithm or driver named 'x25519'; did you mean 'curve25519'?"),
    ],
)
def test_a_name_nobody_provides(name, message, capsys):
    assert main(["list", "--selftests", "off", "md5", name]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"cryptoapi: {message}\n"
    assert captured.out == ""  # not even md5's records


def test_a_name_nobody_provides_as_a_command():
    done = subprocess.run(
        [sys.executable, "-m", "cryptoapi", "list", "sha999"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "cryptoapi: no usable algorithm or driver named 'sha999'\n"


def test_json_marks_the_driver_each_name_resolves_to(capsys):
    assert main(["list", "--json", "--selftests", "off", "sha256", "gcm(aes)"]) == 0
    records = json.loads(capsys.readouterr().out)["algorithms"]
    chosen = {r["name"]: r["driver"] for r in records if r["selected"] is True}
    registry = Registry("off")
    assert chosen == {name: registry.lookup(name).driver for name in ("sha256", "gcm(aes)")}
    assert sum(r["selected"] is False for r in records) == len(records) - 2


def test_the_table_stars_the_selected_driver(capsys):
    assert main(["list", "--table", "--selftests", "off", "sha1"]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    assert header.split() == ["name", "driver", "provider", "priority", "type", "selftest", "fips"]
    starred = [line.split()[2] for line in lines if line.startswith("*")]
    assert starred == [Registry("off").lookup("sha1").driver]
    assert len(lines) == len(Registry("off").implementations("sha1")) >= 2


def test_a_failed_best_driver_is_not_selected(capsys, monkeypatch):
    """With lazy tests the lookup tests the best first; a failure moves the star."""
    monkeypatch.setenv("CRYPTOAPI_BREAK_SELFTEST", "sha1-openssl")
    assert main(["list", "--json", "--selftests", "lazy", "sha1"]) == 0
    records = {r["driver"]: r for r in json.loads(capsys.readouterr().out)["algorithms"]}
    assert records["sha1-openssl"]["selftest"] == "failed"
    assert records["sha1-openssl"]["selected"] is False
    (chosen,) = [r for r in records.values() if r["selected"]]
    assert chosen["selftest"] == "passed"
    others = [r["priority"] for d, r in records.items() if d != "sha1-openssl"]
    assert chosen["priority"] == max(others)  # the next best took the star


def test_the_proc_text_has_no_marker(capsys):
    """/proc/crypto has no such key: the default text stays the kernel's, byte for byte."""
    assert main(["list", "--selftests", "off", "sha1"]) == 0
    assert "selected" not in capsys.readouterr().out


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
    assert bad.returncode == 2  # a usage error, caught by argparse
    assert "--selftests: invalid choice: 'sometimes'" in bad.stderr
    assert "Traceback" not in bad.stderr
