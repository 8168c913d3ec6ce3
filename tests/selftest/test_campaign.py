"""A campaign split into ranges: the ranges and their rounds, the digest that composes over
them, the first mismatch across ranges, what a time budget left out, and the resume file's
round trip (what it refuses: ``test_resume.py``)."""

import hashlib

import pytest

from cryptoapi import Registry
from cryptoapi.selftest.fuzz.campaign import (
    Campaign,
    CaseRange,
    Parameters,
    combine,
    compose_digest,
    split,
)
from cryptoapi.selftest.fuzz.cases import case_random, make_case
from cryptoapi.selftest.fuzz.resume import ResumeConflict, ResumeFile
from tests.selftest.campaigns import DRIVER, run_range


def test_ranges_cover_every_case_once_in_rounds_doubling_up_to_the_chunk():
    parameters = Parameters(seed=1, iterations=45, chunk=10, drivers=("a", "b"), minimum=3)
    assert split(parameters) == [
        CaseRange("a", 0, 3), CaseRange("b", 0, 3),  # every driver's minimum first
        CaseRange("a", 3, 6), CaseRange("b", 3, 6),  # then each range as large as all before
        CaseRange("a", 6, 12), CaseRange("b", 6, 12),
        CaseRange("a", 12, 22), CaseRange("b", 12, 22),  # up to the chunk
        CaseRange("a", 22, 32), CaseRange("b", 22, 32),
        CaseRange("a", 32, 42), CaseRange("b", 32, 42),
        CaseRange("a", 42, 45), CaseRange("b", 42, 45),
    ]  # fmt: skip
    one = Parameters(seed=1, iterations=25, chunk=10, drivers=("a",), only_case=7)
    assert split(one) == [CaseRange("a", 7, 8)]
    few = Parameters(seed=1, iterations=2, chunk=10, drivers=("a",), minimum=5)
    assert split(few) == [CaseRange("a", 0, 2)] and few.required == 2


def test_a_budget_that_ends_in_the_first_round_names_the_drivers_not_reached():
    parameters = Parameters(seed=5, iterations=8, chunk=10, drivers=(DRIVER, "md5-generic"),
                            minimum=2)  # fmt: skip
    campaign = Campaign(parameters)
    first = campaign.to_run()[0]
    assert first == CaseRange(DRIVER, 0, 2)
    campaign.add(run_range(first))
    assert campaign.unfinished() == {DRIVER: 2, "md5-generic": 0}
    assert campaign.shortfall() == {"md5-generic": 0}
    assert campaign.progress() == "2 cases; implementations reached 1/2, finished 0/2"
    campaign.add(run_range(CaseRange("md5-generic", 0, 2)))
    assert campaign.shortfall() == {} and set(campaign.unfinished()) == {DRIVER, "md5-generic"}


def test_the_run_digest_is_sha256_over_the_range_digests_of_the_cases_inputs():
    registry = Registry("off")
    impl = registry.lookup(DRIVER)
    ranges = [run_range(CaseRange(DRIVER, s, s + 4), registry=registry) for s in (4, 0)]
    cases = [make_case(impl, case_random(5, impl.name, i), i).inputs() for i in range(8)]
    by_hand = [hashlib.sha256(b"".join(cases[s : s + 4])).digest() for s in (0, 4)]
    combined = combine(ranges).result
    assert combined.inputs_digest == hashlib.sha256(b"".join(by_hand)).hexdigest()
    assert combined.inputs_digest == compose_digest(h.hex() for h in by_hand)
    assert combined.cases == 8 and combine(ranges).workers == {"here": 8}


def test_the_lowest_mismatch_wins_and_later_ranges_are_not_counted(monkeypatch):
    monkeypatch.setenv("CRYPTOAPI_FAULT", DRIVER)
    registry = Registry("off")
    whole = run_range(CaseRange(DRIVER, 0, 400), registry=registry).result
    assert whole.mismatch is not None
    first = whole.mismatch.case.index
    chunk = max(first // 2, 1)
    parameters = Parameters(seed=5, iterations=400, chunk=chunk, drivers=(DRIVER,))
    campaign = Campaign(parameters)
    for task in reversed(split(parameters)):  # the order a cluster may finish them in
        if campaign.wanted(task):
            campaign.add(run_range(task, registry=registry))
    (driver_run,) = campaign.results()
    assert driver_run.result.mismatch.case.index == first
    assert driver_run.result.cases == whole.cases == first + 1
    assert not campaign.wanted(CaseRange(DRIVER, first + 1, first + 2))
    assert campaign.wanted(CaseRange(DRIVER, first, first + 1))


def test_resume_reads_back_the_same_results_including_a_mismatch(tmp_path, monkeypatch):
    monkeypatch.setenv("CRYPTOAPI_FAULT", DRIVER)
    parameters = Parameters(seed=5, iterations=400, chunk=100, drivers=(DRIVER,), minimum=100)
    path = tmp_path / "campaign.jsonl"
    recorder = ResumeFile(path, parameters)
    done = [run_range(task) for task in split(parameters)[:2]]
    for finished in done:
        recorder.record(finished)
    recorder.close()
    loaded = ResumeFile(path, parameters).load()
    assert [r.task for r in loaded] == [r.task for r in done]
    assert [r.result for r in loaded] == [r.result for r in done]
    assert any(r.result.mismatch for r in loaded)
    assert Campaign(parameters, loaded).to_run() == []


def test_a_cut_short_range_is_not_recorded(tmp_path):
    parameters = Parameters(seed=5, iterations=20, chunk=10, drivers=(DRIVER,), minimum=10)
    path = tmp_path / "campaign.jsonl"
    recorder = ResumeFile(path, parameters)
    first, second = (run_range(task) for task in split(parameters))
    recorder.record(first)
    second.complete = False
    recorder.record(second)
    recorder.close()
    loaded = ResumeFile(path, parameters).load()
    assert [r.task for r in loaded] == [first.task]
    assert Campaign(parameters, loaded).pending == [second.task]


def test_a_file_of_another_campaign_is_refused(tmp_path):
    parameters = Parameters(seed=5, iterations=20, chunk=10, drivers=(DRIVER,))
    path = tmp_path / "campaign.jsonl"
    recorder = ResumeFile(path, parameters)
    recorder.record(run_range(split(parameters)[0]))
    recorder.close()
    other = Parameters(seed=6, iterations=20, chunk=10, drivers=(DRIVER,))
    with pytest.raises(ResumeConflict, match="other parameters") as caught:
        ResumeFile(path, other).load()
    assert "'seed': 6" in str(caught.value)
