import json

from cryptoapi import Registry
from cryptoapi.cli import main


def test_selftest_json(capsys):
    assert main(["selftest", "--mode", "lazy", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert len(records) >= 40
    assert {r["result"] for r in records} == {"passed"}
    for record in records:
        assert {"name", "driver", "result", "time_us"} <= set(record)
        assert record["time_us"] > 0


def test_selftest_table_of_some_names(capsys):
    assert main(["selftest", "hmac(sha256)", "md5"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == [
        "name", "driver", "provider", "priority", "result", "time_us",
    ]  # fmt: skip
    assert "hmac(sha256-openssl)" in out and "md5-generic" in out and "sha1" not in out
    expected = len(Registry("off").implementations("hmac(sha256)")) + 3  # md5: three drivers
    assert f"{expected} implementations: {expected} passed" in out


def test_boot_lines_totals_and_chart(capsys, tmp_path):
    chart = tmp_path / "boot.png"
    assert main(["boot", "--selftests", "eager", "--chart", str(chart)]) == 0
    out = capsys.readouterr().out
    assert "calling  sha256-openssl ... returned 0 after" in out
    assert "testing  sha256-openssl ... passed after" in out
    providers = len(Registry("off").algorithms())
    assert f"boot (eager): {providers} registrations, {providers} tests run" in out
    assert chart.stat().st_size > 1000


def test_boot_off_starts_nothing(capsys):
    assert main(["boot", "--selftests", "off", "--quiet"]) == 0
    assert "0 tests run, 0 threads started" in capsys.readouterr().out
