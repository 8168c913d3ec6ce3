"""What every ``cryptoapi`` command shares: exit statuses, a reader that leaves early,
--version, one spelling of --selftests, usage errors for nonsense, and messages and help
written for people."""

import argparse
import fcntl
import os
import re
import subprocess
import sys
from importlib.metadata import version

import pytest

from cryptoapi.cli import EXIT_BROKEN_PIPE, build_parser, listing, main
from cryptoapi.cli.options import SELFTEST_MODES

PIPE_BYTES = 4096  # the smallest pipe Linux makes: every command below writes more


def into_a_pipe_closed_early(*argv: str) -> tuple[int, bytes, str]:
    """Run ``cryptoapi ARGV`` into a pipe whose reader takes the first bytes and closes it
    (``| head -c 64``); the exit status, what was read, and stderr."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)  # so the writer cannot finish first
    process = subprocess.Popen(
        [sys.executable, "-m", "cryptoapi", *argv],
        stdout=write_end, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    os.close(write_end)
    try:
        first = os.read(read_end, 64)
    finally:
        os.close(read_end)
    _, stderr = process.communicate(timeout=120)
    return process.returncode, first, stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["list"],
        ["list", "--json"],
        ["boot", "--selftests", "eager"],
        ["selftest", "-v", "--selftests", "lazy"],
    ],
    ids=" ".join,
)
def test_a_reader_that_closes_early_gets_no_traceback(argv):
    status, first, stderr = into_a_pipe_closed_early(*argv)
    assert first  # the command had started writing
    assert stderr == ""  # no Traceback, no "Exception ignored ... BrokenPipeError"
    assert status == EXIT_BROKEN_PIPE == 141


def test_a_shell_pipeline_into_head():
    done = subprocess.run(
        f"'{sys.executable}' -m cryptoapi list | head -1; echo \"status ${{PIPESTATUS[0]}}\"",
        shell=True, executable="/bin/bash", capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.stderr == ""
    assert done.stdout.splitlines()[0].startswith("name ")
    assert done.stdout.splitlines()[-1] in ("status 0", "status 141")  # 0: it all fit the pipe


def test_version(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out == f"cryptoapi {version('cryptoapi')}\n"


VERSION_IS_LAZY = """
import sys
import cryptoapi
assert "importlib.metadata" not in sys.modules
assert "__version__" in dir(cryptoapi)
first = cryptoapi.__version__
from importlib.metadata import version
assert first == version("cryptoapi") and cryptoapi.__version__ is first, first
print("ok")
"""


def test_dunder_version_is_read_on_first_use():
    done = subprocess.run(
        [sys.executable, "-c", VERSION_IS_LAZY], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")


def subcommands() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def selftests_action(parser: argparse.ArgumentParser) -> argparse.Action | None:
    return next((a for a in parser._actions if "--selftests" in a.option_strings), None)


def test_every_command_that_builds_a_registry_spells_selftests_the_same():
    commands = subcommands()
    have = {name for name, parser in commands.items() if selftests_action(parser)}
    assert have >= {"list", "selftest", "boot", "kdf", "keyd", "espd"}
    for name in have:
        action = selftests_action(commands[name])
        assert tuple(action.choices) == SELFTEST_MODES == ("off", "lazy", "eager", "full")
        assert "lazy (on first use)" in action.help, name
    for parser in commands.values():  # no other spelling is offered
        shown = " ".join(parser.format_help().split())
        assert "--mode " not in shown and "--self-tests" not in shown


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fuzz", "--iterations", "0"], "argument --iterations: must be a positive integer"),
        (["fuzz", "--jobs", "0"], "argument --jobs: must be a positive integer, not '0'"),
        (["fuzz", "--jobs", "two"], "argument --jobs: must be a decimal integer, not 'two'"),
        (["fuzz", "--time", "-1"], "argument --time: must be a positive number of seconds"),
        (["fuzz", "--time", "nan"], "argument --time: must be a positive number of seconds"),
        (["fuzz", "--seed", "-3"], "argument --seed: must be zero or a positive integer"),
        (["fuzz", "--case", "-1"], "argument --case: must be zero or a positive integer"),
        (["selftest", "--selftests", "often"], "argument --selftests: invalid choice: 'often'"),
        (["boot", "--selftests", "Eager"], "argument --selftests: invalid choice: 'Eager'"),
    ],
)  # fmt: skip
def test_nonsense_is_a_usage_error(argv, message, capsys):
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: cryptoapi ") and message in err


def test_a_crypto_error_is_one_line_without_errno(capsys):
    assert main(["selftest", "sha999"]) == 1
    assert capsys.readouterr().err == "cryptoapi: no usable algorithm or driver named 'sha999'\n"


def test_a_file_that_cannot_be_written_is_named(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    chart = tmp_path / "absent" / "boot.png"
    assert main(["boot", "--selftests", "off", "--quiet", "--chart", str(chart)]) == 1
    err = capsys.readouterr().err
    assert err == f"cryptoapi: {chart}: No such file or directory\n"


REST_ROLE = re.compile(r":[a-z]+:`")


def test_help_is_written_for_people():
    top = build_parser().format_help()
    assert "module" not in top and "COMMAND" in top
    for name, parser in subcommands().items():
        text = parser.format_help()
        assert not REST_ROLE.search(text), name
        assert "``" not in text, name


def test_ctrl_c_is_status_130_without_a_traceback(monkeypatch, capsys):
    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(listing, "run", interrupted)
    assert main(["list"]) == 130
    assert capsys.readouterr().err == ""
