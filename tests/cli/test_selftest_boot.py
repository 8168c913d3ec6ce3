"""``cryptoapi selftest`` (summary and failures, -v for the table, JSON with reasons) and
``cryptoapi boot`` (the initcall_debug lines, the totals and the boot chart)."""

import json
import re
from xml.etree import ElementTree

import pytest

from cryptoapi import Registry
from cryptoapi.cli import main
from cryptoapi.cli.boot import format_event, format_totals
from cryptoapi.cli.bootchart import MAX_LABELS, draw, with_titles
from cryptoapi.cli.bootreport import BootReport
from cryptoapi.registry.trace import TraceEvent

SUMMARY = re.compile(r"^selftest \((\w+)\): (\d+) implementations: (.*); [\d.]+ ms$")
SVG = "{http://www.w3.org/2000/svg}"


def test_selftest_json(capsys):
    assert main(["selftest", "--selftests", "lazy", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert list(document) == ["schema", "selftests", "algorithms"]
    assert (document["schema"], document["selftests"]) == (1, "lazy")
    records = document["algorithms"]
    assert len(records) >= 40
    assert {r["selftest"] for r in records} == {"passed"}
    for record in records:
        assert {"name", "driver", "provider", "priority", "type"} <= set(record)
        assert record["selftest_us"] > 0 and record["reason"] is None


def test_selftest_json_gives_the_reason_of_a_failure(capsys, monkeypatch):
    monkeypatch.setenv("CRYPTOAPI_BREAK_SELFTEST", "sha512-openssl")
    assert main(["selftest", "sha512", "--json"]) == 1
    captured = capsys.readouterr()
    records = {r["driver"]: r for r in json.loads(captured.out)["algorithms"]}
    failed = records["sha512-openssl"]
    assert failed["selftest"] == "failed"
    assert failed["reason"].startswith("digest mismatch on vector from FIPS 180-4")
    assert (records["sha512-generic"]["selftest"], records["sha512-generic"]["reason"]) == (
        "passed",
        None,
    )
    assert captured.err == f"cryptoapi: self-test failed for sha512-openssl: {failed['reason']}\n"


def test_selftest_prints_the_summary_only_when_all_pass(capsys):
    assert main(["selftest", "hmac(sha256)", "md5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    mode, count, parts = SUMMARY.match(lines[0]).groups()
    expected = len(Registry("off").implementations("hmac(sha256)")) + 3  # md5: three drivers
    assert (mode, int(count), parts) == ("eager", expected, f"{expected} passed")


def test_selftest_prints_each_failure_and_its_reason(capsys, monkeypatch):
    monkeypatch.setenv("CRYPTOAPI_BREAK_SELFTEST", "md5-generic,sha1-openssl")
    assert main(["selftest", "md5", "sha1"]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == [
        "FAILED  md5-generic (md5)",
        "FAILED  sha1-openssl (sha1)",
    ]
    assert all("digest mismatch on vector" in line for line in lines[:2])
    drivers = len(Registry("off").implementations("md5") + Registry("off").implementations("sha1"))
    assert SUMMARY.match(lines[2]).group(3) == f"{drivers - 2} passed, 2 failed"
    assert len(lines) == 3 and captured.err == ""  # said once, not logged again


def test_selftest_verbose_prints_the_table(capsys):
    assert main(["selftest", "-v", "hmac(sha256)", "md5"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == [
        "name", "driver", "provider", "priority", "result", "time_us",
    ]  # fmt: skip
    assert "hmac(sha256-openssl)" in out and "md5-generic" in out and "sha1" not in out
    assert SUMMARY.match(out.splitlines()[-1])


def test_the_old_mode_option_still_works(capsys):
    assert main(["selftest", "--mode", "lazy", "--json", "md5"]) == 0
    assert json.loads(capsys.readouterr().out)["selftests"] == "lazy"


def test_boot_lines_totals_and_chart(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    chart = tmp_path / "boot.png"
    assert main(["boot", "--selftests", "eager", "--chart", str(chart)]) == 0
    out = capsys.readouterr().out
    assert "calling  sha256-openssl ... returned 0 after" in out
    assert "testing  sha256-openssl ... passed after" in out
    # every provider's drivers, and the instances self-tests build on the way (a DRBG's
    # hmac(sha256-openssl)), each registered and tested once
    registered, tested = map(int, re.search(r"(\d+) registrations, (\d+) tests run", out).groups())
    assert registered == tested >= len(Registry("off").algorithms())
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_boot_svg_chart_has_a_tooltip_per_bar(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    chart = tmp_path / "boot.svg"
    assert main(["boot", "--selftests", "eager", "--chart", str(chart), "--quiet"]) == 0
    titles = [t.text for t in ElementTree.parse(chart).iter(f"{SVG}title")]
    registers = sum(1 for t in titles if t.startswith("register "))
    assert registers == sum(1 for t in titles if t.startswith("self-test "))
    assert registers >= len(Registry("off").algorithms())
    assert any(t.startswith("self-test sha256-openssl: passed, ") for t in titles)


def test_boot_off_starts_nothing(capsys):
    assert main(["boot", "--selftests", "off", "--quiet"]) == 0
    assert "0 tests run, 0 threads started" in capsys.readouterr().out


def test_boot_chart_must_be_svg_or_png(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["boot", "--chart", "boot.pdf"])
    assert caught.value.code == 2
    assert "the file must end in .svg or .png, not 'boot.pdf'" in capsys.readouterr().err


def event(kind: str, driver: str, start_ms: float, micros: float, result: str = "ok",
          thread: str = "MainThread") -> TraceEvent:  # fmt: skip
    return TraceEvent(kind, driver, start_ms / 1e3, micros, thread, result)


def report_of(events: list[TraceEvent]) -> BootReport:
    end = max(e.start * 1e3 + e.duration_us / 1e3 for e in events)
    return BootReport("eager", events, 0.0, end, end, 0)


PROVIDER = "cryptoapi.providers.openssl.hashes"


def test_provider_imports_are_lines_and_totals():
    load = event("load", PROVIDER, 0, 1234)
    assert format_event(load) == f"loading  {PROVIDER} ... ok after 1234 usecs"
    totals = format_totals(report_of([load, event("register", "sha1-openssl", 1.3, 3)]))
    assert totals.startswith("boot (eager): 1 provider import, 1 registration, 0 tests run")


def svg_texts(report: BootReport, path) -> list[str]:
    """The chart's texts, written as SVG text rather than glyph outlines."""
    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "none"}):
        draw(report, str(path))
    root = ElementTree.parse(path).getroot()
    return ["".join(t.itertext()).strip() for t in root.iter(f"{SVG}text")]


def test_chart_names_bars_inside_or_after_and_counts_kinds_in_the_legend(tmp_path):
    pytest.importorskip("matplotlib")
    events = [
        event("load", PROVIDER, 0, 40_000),  # wide: named inside
        event("register", "reg-openssl", 40.1, 3, thread="cryptomgr_0"),  # never named
        event("test", "sha1-openssl", 41, 1000, "passed"),  # narrow, free after: named there
        event("test", "md5-openssl", 59.99, 9, "failed"),  # narrow, no room after
        event("test", "tail-openssl", 60, 40_000, "passed"),
    ]
    texts = svg_texts(report_of(events), tmp_path / "chart.svg")
    assert {"openssl.hashes", "sha1-openssl", "tail-openssl"} <= set(texts)
    assert "reg-openssl" not in texts and "md5-openssl" not in texts
    for legend in ("provider import (1)", "registration (1)", "self-test passed (2)",
                   "self-test failed (1)"):  # fmt: skip
        assert legend in texts
    titles = [t.text for t in ElementTree.parse(tmp_path / "chart.svg").iter(f"{SVG}title")]
    assert titles[0] == f"import {PROVIDER}: ok, 40.00 ms at 0.00 ms [MainThread]"
    assert titles[3] == "self-test md5-openssl: failed, 9 us at 59.99 ms [MainThread]"


def test_chart_labels_are_capped(tmp_path):
    pytest.importorskip("matplotlib")
    events = [event("test", f"t{n}", n, 900, "passed") for n in range(MAX_LABELS + 10)]
    texts = svg_texts(report_of(events), tmp_path / "many.svg")
    assert sum(1 for t in texts if re.fullmatch(r"t\d+", t)) == MAX_LABELS


def test_with_titles_puts_a_title_first_in_the_element_with_that_id():
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><g id="a"><path d="M0 0"/></g><g id="b"/></svg>'
    root = ElementTree.fromstring(with_titles(svg, {"a": "import x: 1 ms"}))
    first, second = root
    assert [child.tag for child in first] == [f"{SVG}title", f"{SVG}path"]
    assert first[0].text == "import x: 1 ms" and len(second) == 0
