"""``cryptoapi fuzz --cluster local:2``: the same cases, digests and first mismatch as
``--jobs 1``, and ``--resume`` skips the ranges a file says are finished."""

import json
import os
import subprocess
import sys

import pytest

from cryptoapi.cli import main

pytest.importorskip("distributed", reason="Dask's distributed is not installed (cluster extra)")

FAULTED = "hmac(sha256-openssl)"
CAMPAIGN = ("--alg", "hmac(sha256)", "--alg", "md5", "--seed", "3", "--iterations", "120",
            "--chunk", "30")  # fmt: skip
ENV = {**os.environ, "CRYPTOAPI_FAULT": FAULTED}
VARIES = ("cases_per_s", "workers")  # how fast, and where: all else must be the same


def fuzz_json(*args, statuses=(1,)):
    result = subprocess.run(
        [sys.executable, "-m", "cryptoapi", "fuzz", "--json", *CAMPAIGN, *args],
        capture_output=True, text=True, check=False, env=ENV, timeout=120,
    )  # fmt: skip
    assert result.returncode in statuses, result.stderr  # 1: the faulted driver mismatches
    return json.loads(result.stdout)["results"]


def comparable(results):
    return {r["driver"]: {k: v for k, v in r.items() if k not in VARIES} for r in results}


@pytest.fixture(scope="module")
def one_process():
    return fuzz_json("--jobs", "1")


def test_a_local_cluster_finds_what_one_process_finds(one_process, tmp_path):
    on_cluster = fuzz_json("--cluster", "local:2", "--resume", str(tmp_path / "run.jsonl"))
    assert comparable(on_cluster) == comparable(one_process)
    faulted = comparable(one_process)[FAULTED]
    assert faulted["mismatches"] == 1 and faulted["cases"] < 120
    assert "MISMATCH hmac(sha256): hmac(sha256-openssl)" in faulted["mismatch"]
    assert all(r["cases"] == 120 for r in one_process if r["driver"] != FAULTED)
    workers = {w for r in on_cluster for w in r["workers"]}
    assert all(w.startswith("tcp://") for w in workers) and workers
    assert sum(sum(r["workers"].values()) for r in on_cluster) == sum(
        r["cases"] for r in on_cluster
    )


def test_resume_skips_finished_ranges_and_gives_the_same_report(one_process, tmp_path):
    path = tmp_path / "run.jsonl"
    fuzz_json("--jobs", "1", "--resume", str(path))
    lines = path.read_text().splitlines()
    kept = lines[: len(lines) // 2]  # as if the campaign had been stopped half-way
    path.write_text("\n".join(kept) + "\n")
    resumed = fuzz_json("--cluster", "local:2", "--resume", str(path))
    assert comparable(resumed) == comparable(one_process)
    again = path.read_text().splitlines()
    assert again[: len(kept)] == kept and len(again) == len(lines)
    skipped = [json.loads(line)["range"] for line in kept[1:]]
    ran = [json.loads(line) for line in again[len(kept) :]]
    assert all(r["range"] not in skipped and r["worker"].startswith("tcp://") for r in ran)


def test_a_resume_file_of_another_campaign_is_refused(tmp_path, capsys):
    path = tmp_path / "run.jsonl"
    assert main(["fuzz", "--alg", "md5", "--iterations", "4", "--resume", str(path)]) == 0
    capsys.readouterr()
    assert main(["fuzz", "--alg", "md5", "--iterations", "5", "--resume", str(path)]) == 1
    assert "written by a campaign with other parameters" in capsys.readouterr().err


def test_the_time_budget_reports_what_ran_and_resume_finishes_it(one_process, tmp_path):
    path = tmp_path / "run.jsonl"
    # 3: no mismatch found, but implementations the budget did not reach
    cut = fuzz_json("--cluster", "local:2", "--time", "0.001", "--resume", str(path),
                    statuses=(0, 1, 3))  # fmt: skip
    assert sum(r["cases"] for r in cut) < sum(r["cases"] for r in one_process)
    resumed = fuzz_json("--jobs", "1", "--resume", str(path))
    assert comparable(resumed) == comparable(one_process)
