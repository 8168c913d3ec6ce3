"""FIPS mode fixtures: an integrity MAC for this test session, and a FIPS registry.

The MAC goes to a file of the session's own (``CRYPTOAPI_FIPS_MAC``), not beside the
package: the source tree stays as it is. The check runs once per process, as in use, so
its outcome is taken here, before any test edits anything; the tampering tests work on a
copy of the package in a process of their own (``package_copy``).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import cryptoapi
from cryptoapi.fips import integrity


@pytest.fixture(autouse=True, scope="session")
def fips_mac(tmp_path_factory: pytest.TempPathFactory):
    """Install this session's MAC and check it once (the per-process outcome)."""
    path = tmp_path_factory.mktemp("fips") / "fips.mac"
    saved = os.environ.get("CRYPTOAPI_FIPS_MAC")
    os.environ["CRYPTOAPI_FIPS_MAC"] = str(path)
    integrity.install()
    integrity._outcome.clear()
    assert integrity.checked() is None
    yield path
    if saved is None:
        del os.environ["CRYPTOAPI_FIPS_MAC"]
    else:
        os.environ["CRYPTOAPI_FIPS_MAC"] = saved


@pytest.fixture
def fips() -> cryptoapi.Registry:
    return cryptoapi.Registry("lazy", fips=True)


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """A copy of the package under ``tmp_path/site``, its MAC installed beside its files."""
    site = tmp_path / "site"
    shutil.copytree(
        integrity.package_dir(), site / "cryptoapi", ignore=shutil.ignore_patterns("__pycache__")
    )
    done = run_python(site, "from cryptoapi.fips import integrity; print(integrity.install())")
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == site / "cryptoapi" / integrity.MAC_FILE
    return site


def run_python(site: Path, code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -c code`` importing the package from ``site``, with ``env`` added and no
    MAC file or break switch of the test session's."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CRYPTOAPI_")}
    environ.update(env, PYTHONPATH=str(site))
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=120,
        check=False,
    )  # fmt: skip
