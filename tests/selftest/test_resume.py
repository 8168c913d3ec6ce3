"""The resume file trusts nothing it reads back: a torn last line is skipped (and cut off
before the next record), anything else that is not a record of the campaign refuses the
file with one line naming it and the line, and nothing is counted that did not run."""

import errno
import json

import pytest

from cryptoapi.cli import main
from cryptoapi.selftest.fuzz.campaign import Campaign, Parameters, split
from cryptoapi.selftest.fuzz.resume import ResumeDamaged, ResumeFile
from tests.selftest.campaigns import DRIVER, run_range

PARAMETERS = Parameters(seed=5, iterations=4, chunk=10, drivers=(DRIVER,))  # 0..1, 1..2, 2..4


@pytest.fixture
def path(tmp_path):
    """A resume file holding the header and the campaign's first two ranges."""
    path = tmp_path / "campaign.jsonl"
    recorder = ResumeFile(path, PARAMETERS)
    for task in split(PARAMETERS)[:2]:
        recorder.record(run_range(task))
    recorder.close()
    return path


def lines_of(path):
    return path.read_text().splitlines()


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines))


def edit_record(path, number, edit):
    """Line ``number`` (1-based) of ``path``, as JSON, changed in place by ``edit``."""
    lines = lines_of(path)
    record = json.loads(lines[number - 1])
    edit(record)
    lines[number - 1] = json.dumps(record)
    write_lines(path, lines)


def refused(path, line, reason):
    """Loading ``path`` raises ResumeDamaged (EINVAL) naming the file, ``line`` and
    ``reason``; the message."""
    with pytest.raises(ResumeDamaged) as caught:
        ResumeFile(path, PARAMETERS).load()
    message = str(caught.value)
    assert caught.value.errno == errno.EINVAL
    assert f"--resume {path}: line {line}: " in message and reason in message
    return message


def test_a_valid_file_reads_back_every_range(path):
    loaded = ResumeFile(path, PARAMETERS).load()
    assert [r.task for r in loaded] == split(PARAMETERS)[:2]
    assert [r.result.cases for r in loaded] == [1, 1]


def test_a_torn_last_line_is_skipped_and_cut_off_before_the_next_record(path):
    whole = path.read_bytes()
    with path.open("a") as file:
        file.write('{"range": {"driver": "hmac(sha')  # a crash while writing line 4
    resume = ResumeFile(path, PARAMETERS)
    loaded = resume.load()
    assert resume.torn_line == 4 and len(loaded) == 2
    third = split(PARAMETERS)[2]
    assert Campaign(PARAMETERS, loaded).to_run() == [third]
    resume.record(run_range(third))
    resume.close()
    assert path.read_bytes().startswith(whole) and len(lines_of(path)) == 4
    again = ResumeFile(path, PARAMETERS)
    assert [r.task for r in again.load()] == split(PARAMETERS) and again.torn_line is None


def test_a_torn_header_alone_starts_the_file_afresh(tmp_path):
    path = tmp_path / "campaign.jsonl"
    path.write_text('{"campaign": {"seed": 5, "itera')
    resume = ResumeFile(path, PARAMETERS)
    assert resume.load() == [] and resume.torn_line == 1
    resume.record(run_range(split(PARAMETERS)[0]))
    resume.close()
    assert json.loads(lines_of(path)[0])["campaign"]["seed"] == 5
    assert len(ResumeFile(path, PARAMETERS).load()) == 1


def test_a_torn_header_before_other_lines_is_refused(path):
    lines = lines_of(path)
    write_lines(path, [lines[0][:20], *lines[1:]])
    refused(path, 1, "not JSON (Expecting ':' delimiter at column 21)")


def test_a_file_that_is_not_utf8_is_refused(path):
    data = bytearray(path.read_bytes())
    second_line = data.index(b"\n") + 1
    data[data.index(b"here", second_line)] = 0xFF  # in the worker's name of line 2
    path.write_bytes(bytes(data))
    refused(path, 2, "not UTF-8")


def test_a_record_of_a_driver_not_in_the_campaign_is_refused(path):
    def foreign(record):
        record["range"]["driver"] = record["result"]["driver"] = "md5-generic"

    edit_record(path, 3, foreign)
    refused(path, 3, "driver 'md5-generic' is not in this campaign")


def test_a_range_not_in_the_campaign_is_refused_and_its_cases_never_counted(path):
    def huge(record):  # the range that made a report say 1,000,200 cases
        record["range"]["stop"] = 1_000_000
        record["result"]["cases"] = 1_000_000

    edit_record(path, 2, huge)
    refused(path, 2, f"cases 0..999999 of {DRIVER} are not one of this campaign's ranges")


def test_a_count_the_range_cannot_have_run_is_refused(path):
    edit_record(path, 3, lambda record: record["result"].update(cases=5))
    refused(path, 3, "5 cases counted where cases 1..1 ran 1")


def test_a_range_recorded_twice_is_refused(path):
    lines = lines_of(path)
    write_lines(path, [*lines, lines[1]])
    refused(path, 4, "the range of line 2 again")


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("cases", "1", "result.cases is str, not int"),
        ("cases", True, "result.cases is bool, not int"),
        ("seconds", -1.0, "-1.0 seconds"),
        ("inputs_digest", "00", "inputs_digest '00' is not a SHA-256"),
        ("providers", "openssl", "result.providers is str, not a list"),
        ("mismatch", {"case": 1}, "result.mismatch is dict, not Mismatch or NoneType"),
        ("colour", "blue", "result has unknown fields ['colour']"),
    ],
)
def test_an_ill_typed_field_is_refused(path, field, value, reason):
    edit_record(path, 2, lambda record: record["result"].update({field: value}))
    refused(path, 2, reason)


def test_a_line_that_is_not_a_record_is_refused(path):
    write_lines(path, [*lines_of(path), "[1, 2]"])
    refused(path, 4, "not a range record")


def test_the_command_refuses_a_damaged_file_in_one_line(path, capsys):
    edit_record(path, 3, lambda record: record["result"].update(cases=7))
    options = ["--driver", DRIVER, "--alg", "hmac(sha256)", "--seed", "5", "--iterations", "4"]
    assert main(["fuzz", *options, "--chunk", "10", "--resume", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"cryptoapi: --resume {path}: line 3: 7 cases counted where cases 1..1 ran 1; the file "
        "is damaged or not this campaign's (move it away to start afresh)"
    ]
