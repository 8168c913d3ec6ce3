"""The example systemd units (docs/systemd/) start the daemons with options that exist,
and systemd itself takes them when it is installed."""

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cryptoapi.cli import build_parser

UNITS = Path(__file__).parents[2] / "docs" / "systemd"


def exec_start(unit: Path) -> list[str]:
    """The ExecStart command line, ``%i`` standing for esp0."""
    (line,) = [x for x in unit.read_text().splitlines() if x.startswith("ExecStart=")]
    return shlex.split(line.removeprefix("ExecStart=").replace("%i", "esp0"))


@pytest.mark.parametrize("name", ["cryptoapi-keyd.service", "cryptoapi-espd@.service"])
def test_each_unit_starts_its_daemon_with_real_options(name):
    argv = exec_start(UNITS / name)
    assert argv[0] == "/usr/bin/cryptoapi"
    args = build_parser().parse_args(argv[1:])  # SystemExit(2) on an unknown option
    assert args.command == name.removeprefix("cryptoapi-").split("@")[0].split(".")[0]
    assert args.log_level == "info" and args.control.startswith("/run/cryptoapi/")


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_systemd_verifies_the_units(tmp_path):
    cryptoapi = Path(sys.executable).with_name("cryptoapi")  # the venv's, for ExecStart
    for unit in UNITS.glob("*.service"):
        text = unit.read_text().replace("/usr/bin/cryptoapi", str(cryptoapi))
        (tmp_path / unit.name).write_text(text)
    instance = tmp_path / "cryptoapi-espd@esp0.service"
    shutil.copy(tmp_path / "cryptoapi-espd@.service", instance)
    done = subprocess.run(
        ["systemd-analyze", "verify", str(tmp_path / "cryptoapi-keyd.service"), str(instance)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
