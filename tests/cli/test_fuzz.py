"""``cryptoapi fuzz``: ``--json`` in the commands' shared vocabulary; a ``--time`` budget
spread over every implementation, what it left out, and the exit status that says so."""

import hashlib
import json
import time

from cryptoapi.cli import fuzz as fuzz_command
from cryptoapi.cli import main
from cryptoapi.selftest.fuzz import FuzzResult
from cryptoapi.selftest.fuzz.campaign import RangeResult

MD5 = {"md5-generic", "md5-openssl", "md5-pycryptodome"}


def test_fuzz_json_names_things_as_list_does(capsys):
    assert main(["fuzz", "--alg", "md5", "--iterations", "2", "--seed", "5", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "cryptoapi fuzz: seed 5\n"
    document = json.loads(captured.out)
    assert list(document) == ["schema", "seed", "results", "not_reached"]
    assert document["not_reached"] == []
    assert (document["schema"], document["seed"]) == (1, 5)
    by_driver = {r["driver"]: r for r in document["results"]}
    assert set(by_driver) == MD5
    record = by_driver["md5-openssl"]
    assert list(record)[:3] == ["name", "driver", "provider"] and "alg" not in record
    assert (record["name"], record["provider"], record["reference"]) == (
        "md5",
        "openssl",
        "md5-generic",
    )
    assert (record["cases"], record["mismatches"], record["mismatch"]) == (2, 0, None)


def slow_ranges(monkeypatch, seconds):
    """Make every range take ``seconds`` (and pass, with all its cases); the ranges run, in
    the order they ran."""
    ran = []

    def fuzz_range(task, seed, deadline, worker=None):
        time.sleep(seconds)
        ran.append(task)
        digest = hashlib.sha256(repr(task).encode()).hexdigest()
        result = FuzzResult("md5", task.driver, "md5-generic", task.stop - task.start,
                            seconds, inputs_digest=digest)  # fmt: skip
        return RangeResult(task, result, "here")

    monkeypatch.setattr(fuzz_command, "fuzz_range", fuzz_range)
    return ran


def test_a_budget_reaches_every_implementation_before_any_gets_more(monkeypatch, capsys):
    ran = slow_ranges(monkeypatch, 0.1)
    assert main(["fuzz", "--alg", "md5", "--time", "1", "--json"]) == 0
    rounds = [(task.start, task.stop) for task in ran]
    assert {task.driver for task in ran[:3]} == MD5 and set(rounds[:3]) == {(0, 1)}
    assert rounds == sorted(rounds) and 6 <= len(ran) < 24  # in rounds, cut by the budget
    captured = capsys.readouterr()
    results = json.loads(captured.out)["results"]
    assert all(1 <= r["cases"] < 100 for r in results) and len(results) == 3
    assert (
        "--time ended: 3 of 3 implementations ran fewer than 100 cases (each ran at least 1)"
        in captured.err
    )


def test_implementations_a_budget_did_not_reach_are_named_and_fail_the_run(monkeypatch, capsys):
    ran = slow_ranges(monkeypatch, 0.4)
    status = main(["fuzz", "--alg", "md5", "--time", "0.5", "--min-cases", "2", "--json"])
    assert status == fuzz_command.EXIT_NOT_REACHED == 3
    captured = capsys.readouterr()
    not_reached = json.loads(captured.out)["not_reached"]
    (missing,) = MD5 - {task.driver for task in ran}
    assert len(ran) == 2 and not_reached == [{"driver": missing, "cases": 0}]
    line = [line for line in captured.err.splitlines() if "not reached" in line]
    assert line == [
        "cryptoapi fuzz: not reached: 1 of 3 implementations ran fewer than 2 cases before "
        f"--time ended (cases run): {missing} (0)"
    ]


def test_the_text_report_fits_in_100_columns(capsys):
    """Composed drivers, composed references and library versions used to make rows of
    160 to 210 columns: the reference now heads its name's rows and the versions are listed
    once, below the summary."""
    names = ["md5", "authenc(hmac(sha256),cbc(aes))"]
    assert main(["fuzz", *(f"--alg={name}" for name in names), "--iterations", "1"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    lines = out.splitlines()
    assert lines[1].split() == ["implementation", "cases", "mismatches", "cases/s"]
    heading = (
        "authenc(hmac(sha256),cbc(aes)), against authenc(hmac(sha256-generic),cbc(aes-generic))"
    )
    assert heading in lines and "md5, against md5-generic" in lines
    assert "  md5-openssl" in [line[: len("  md5-openssl")] for line in lines]
    legend = lines[lines.index("libraries:") + 1 :]
    assert any(line.startswith("  openssl: OpenSSL ") for line in legend)
    assert any(line.startswith("  generic: cryptoapi ") for line in legend)


def test_a_name_with_several_references_says_which_per_row():
    results = [
        FuzzResult("cbc(camellia)", "cbc-camellia-openssl", "cbc-camellia-openssl", 1, 0.1),
        FuzzResult("cbc(camellia)", "cbc(camellia-openssl)", "cbc-camellia-openssl", 1, 0.1),
        FuzzResult("cbc(camellia)", "cbc(camellia-pycryptodome)", "cbc(camellia-openssl)", 1, 0.1),
    ]
    lines = fuzz_command._table(results).splitlines()
    assert lines[1] == "cbc(camellia)"
    assert lines[2].startswith("  cbc-camellia-openssl, against itself ")
    assert lines[3].startswith("  cbc(camellia-openssl), against cbc-camellia-openssl ")
    assert lines[4].startswith("  cbc(camellia-pycryptodome), against cbc(camellia-openssl) ")
    assert lines[-1] == "3 implementations, 0 with mismatches"
    assert (
        fuzz_command._table(results[:1]).splitlines()[-1] == "1 implementation, 0 with mismatches"
    )
