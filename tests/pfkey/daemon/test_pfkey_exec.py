"""``cryptoapi pfkey-exec``: an unmodified PF_KEY v2 client, written in C as racoon and setkey
are (``pfkey_client.c``), against a keyd started here, through the package's preload library
(``cryptoapi/pfkey/daemon/pfkey_preload.c``); and the library's build and cache."""

import errno
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cryptoapi.cli.pfkey_exec import preload_environment
from cryptoapi.pfkey import Message, MsgType, SaType, decode
from cryptoapi.pfkey.daemon import preload
from cryptoapi.pfkey.daemon.client import PfkeyClient
from cryptoapi.pfkey.daemon.preload import PreloadError, library
from tests.pfkey.keyd import WAIT, running_keyd, short_dir

pytestmark = pytest.mark.skipif(
    not any(shutil.which(name) for name in preload.COMPILERS), reason="no C compiler"
)

HERE = Path(__file__).parent
CLIENT_SOURCE = HERE / "pfkey_client.c"
LIBRARY_SOURCE = Path(preload.__file__).with_name(preload.SOURCE)
STRICT = ["-Wall", "-Wextra", "-Werror"]
FLOW = [
    "ok: REGISTER answered at once",
    "ok: PROMISC echoed at once",
    "ok: ADD answered at once",
    "ok: DUMP lists SPI 0x1001",
    "ok: the promiscuous socket saw the ADD and the DUMP request",
    "ok: IP_IPSEC_POLICY bypass accepted",
    "ok: done",
]


def _compiler():
    return next(shutil.which(name) for name in preload.COMPILERS if shutil.which(name))


def _compile(source, output, *flags):
    done = subprocess.run(
        [_compiler(), *STRICT, *flags, "-o", str(output), str(source)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return output


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The C client, and a cache directory for the library (each built once here)."""
    where = tmp_path_factory.mktemp("pfkey-exec")
    client = _compile(CLIENT_SOURCE, where / "pfkey_client")
    cache = where / "cache"
    library(cache / "cryptoapi")
    return client, cache


@pytest.fixture
def keyd_socket():
    with running_keyd() as (path, _):
        yield path


def pfkey_exec(cache, *argv, socket_path=None, env=None):
    """``python -m cryptoapi pfkey-exec [--socket S] -- argv`` with the test's cache."""
    command = [sys.executable, "-m", "cryptoapi", "pfkey-exec"]
    command += ["--socket", socket_path] if socket_path else []
    environment = dict(os.environ if env is None else env, XDG_CACHE_HOME=str(cache))
    return subprocess.run(
        [*command, "--", *map(str, argv)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=WAIT * 3,
        check=False,
    )


# -- the client against keyd -----------------------------------------------------------


def test_an_unmodified_pfkey_client_registers_adds_dumps_and_watches_through_keyd(
    built, keyd_socket
):
    client, cache = built
    done = pfkey_exec(cache, client, "flow", socket_path=keyd_socket)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line.split(" (")[0] for line in done.stdout.splitlines()] == FLOW
    assert done.stderr == ""
    with PfkeyClient(keyd_socket, timeout=WAIT) as other:  # the client's SA is keyd's
        (dumped,) = other.request(Message(MsgType.DUMP, SaType.ESP))
    assert decode(dumped).type == MsgType.DUMP and b"\x00\x00\x10\x01" in dumped


def test_the_socket_may_come_from_the_environment(built, keyd_socket):
    client, cache = built
    env = dict(os.environ, CRYPTOAPI_KEYD_SOCKET=keyd_socket)
    done = pfkey_exec(cache, client, "flow", env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_without_the_wait_for_keyd_a_read_right_after_a_send_finds_nothing(
    built, keyd_socket, tmp_path
):
    # the client's check is real: the library built not to wait fails it as racoon would
    client, _ = built
    eager = _compile(LIBRARY_SOURCE, tmp_path / "eager.so", "-shared", "-fPIC",
                     "-DREPLY_WAIT_MS=0")  # fmt: skip
    env = preload_environment(dict(os.environ), str(eager), keyd_socket)
    done = subprocess.run(
        [client, "flow"], capture_output=True, text=True, env=env, timeout=WAIT, check=False
    )
    assert done.returncode == 1
    assert "FAIL: REGISTER answered at once" in done.stdout
    assert f"errno {errno.EAGAIN}" in done.stdout


# -- keyd not reachable ----------------------------------------------------------------


def test_without_keyd_socket_pf_key_fails_with_enoent_and_one_line(built):
    client, cache = built
    with short_dir() as where:
        path = os.path.join(where, "absent")
        done = pfkey_exec(cache, client, "unreachable", socket_path=path)
    assert done.returncode == 3  # the client's own status for it: no crash
    assert f"errno {errno.ENOENT} " in done.stdout
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"cryptoapi pfkey-exec: cannot reach keyd at {path}: ")


def test_a_socket_nobody_listens_on_is_econnrefused(built):
    client, cache = built
    with short_dir() as where:
        path = os.path.join(where, "stale")
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as stale:
            stale.bind(path)  # a keyd that died without removing its socket
        done = pfkey_exec(cache, client, "unreachable", socket_path=path)
    assert done.returncode == 3
    assert f"errno {errno.ECONNREFUSED} " in done.stdout
    assert len(done.stderr.splitlines()) == 1 and "Connection refused" in done.stderr


def test_without_the_socket_variable_the_library_changes_nothing(built, tmp_path):
    client, cache = built
    env = {k: v for k, v in os.environ.items() if k != "CRYPTOAPI_KEYD_SOCKET"}
    env["LD_PRELOAD"] = str(library(cache / "cryptoapi"))
    done = subprocess.run(
        [client, "unreachable"], capture_output=True, text=True, env=env, timeout=WAIT,
        check=False,
    )  # fmt: skip
    assert "cryptoapi pfkey-exec" not in done.stderr  # the kernel answered, not the library


# -- the command -----------------------------------------------------------------------


def test_a_command_not_found_is_127(built):
    _, cache = built
    done = pfkey_exec(cache, "/nonexistent/racoon")
    assert done.returncode == 127
    assert done.stderr == "cryptoapi pfkey-exec: /nonexistent/racoon: command not found\n"


def test_a_missing_compiler_is_one_line_and_status_1(tmp_path):
    env = dict(os.environ, CC=str(tmp_path / "no-cc"))
    done = pfkey_exec(tmp_path / "cache", "true", env=env)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("cryptoapi: no C compiler to build the PF_KEY preload library")


def test_print_library_builds_and_prints_the_path(built):
    _, cache = built
    done = subprocess.run(
        [sys.executable, "-m", "cryptoapi", "pfkey-exec", "--print-library"],
        capture_output=True, text=True, timeout=WAIT * 3, check=False,
        env=dict(os.environ, XDG_CACHE_HOME=str(cache)),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.strip())
    assert path.parent == cache / "cryptoapi" and path.name.startswith("pfkey_preload-")


def test_the_environment_keeps_an_earlier_preload_and_an_absolute_socket():
    env = preload_environment({"LD_PRELOAD": "/lib/other.so", "A": "1"}, "/c/p.so", "k.sock")
    assert env["LD_PRELOAD"] == "/c/p.so /lib/other.so" and env["A"] == "1"
    assert env["CRYPTOAPI_KEYD_SOCKET"] == os.path.abspath("k.sock")


# -- the build and its cache -----------------------------------------------------------


def test_the_library_compiles_with_warnings_as_errors(tmp_path):
    _compile(LIBRARY_SOURCE, tmp_path / "strict.so", "-shared", "-fPIC", "-O2")


def test_the_library_is_built_once_per_source_and_compiler(tmp_path, monkeypatch):
    first = library(tmp_path)
    built_at = first.stat().st_mtime_ns
    assert library(tmp_path) == first and first.stat().st_mtime_ns == built_at
    other = tmp_path / "other-cc"
    other.write_text(f'#!/bin/sh\n[ "$1" = --version ] && echo other 1.0 && exit\n'
                     f'exec {_compiler()} "$@"\n')  # fmt: skip
    other.chmod(0o755)
    monkeypatch.setenv("CC", str(other))
    upgraded = library(tmp_path)
    assert upgraded != first and upgraded.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".so") == sorted(
        [first.name, upgraded.name]
    )  # no temporary file left


def test_a_cache_others_can_write_is_refused(tmp_path):
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o777)
    with pytest.raises(PreloadError) as raised:
        library(cache)
    assert raised.value.errno == errno.EPERM and "not a private directory" in str(raised.value)


def test_a_failed_build_names_the_compilers_error(tmp_path, monkeypatch):
    monkeypatch.setattr(preload, "read_source", lambda: b"#error broken on purpose\n")
    with pytest.raises(PreloadError) as raised:
        library(tmp_path)
    assert "broken on purpose" in str(raised.value)
    assert not list(tmp_path.iterdir())  # nothing half-built is kept
