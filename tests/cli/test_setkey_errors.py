"""``cryptoapi setkey`` failing cleanly: an input it cannot read, and a key daemon that goes
away partway through a file, are one line naming the file (and line) and exit status 1,
never a traceback."""

import contextlib
import io
import os
import socket
import subprocess
import sys
import threading

import pytest

from cryptoapi.cli import main
from cryptoapi.pfkey import KeyManager
from cryptoapi.pfkey.daemon.client import MAX_MESSAGE
from tests.pfkey.conftest import make_registry
from tests.pfkey.keyd import WAIT, short_dir

AES = "0x000102030405060708090a0b0c0d0e0f"
HMAC = "0x" + "11" * 32
CONFIG = f"""# four SAs; the key daemon dies at the third
add 10.0.0.1 10.0.0.2 esp 0x1001 -E aes-cbc {AES} -A hmac-sha256 {HMAC} ;
add 10.0.0.1 10.0.0.2 esp 0x1001 -E aes-cbc {AES} -A hmac-sha256 {HMAC} ;

add 10.0.0.1 10.0.0.2 esp 0x1003
    -E aes-cbc {AES} -A hmac-sha256 {HMAC} ;
add 10.0.0.1 10.0.0.2 esp 0x1004 -E aes-cbc {AES} -A hmac-sha256 {HMAC} ;
"""


def unreadable(tmp_path, kind: str) -> tuple[str, str]:
    """A path setkey cannot read, and the message it should give."""
    path = tmp_path / "ipsec.conf"
    if kind == "missing":
        return str(path), f"cryptoapi: {path}: No such file or directory\n"
    if kind == "directory":
        path.mkdir()
        return str(path), f"cryptoapi: {path}: Is a directory\n"
    path.write_bytes(b"# ok\nflush \xff;\n")
    return str(path), f"cryptoapi: {path}:2:7: byte 0xff is not UTF-8 text\n"


@pytest.mark.parametrize("kind", ["missing", "directory", "not utf-8"])
def test_an_unreadable_file_is_one_line_and_status_1(tmp_path, capsys, kind):
    path, expected = unreadable(tmp_path, kind)
    assert main(["setkey", "-f", path]) == 1
    captured = capsys.readouterr()
    assert captured.err == expected and captured.out == ""


def test_stdin_that_is_not_utf8(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"dump;\n\xfe"), "utf-8"))
    assert main(["setkey", "-c"]) == 1
    assert capsys.readouterr().err == "cryptoapi: <stdin>:2:1: byte 0xfe is not UTF-8 text\n"


def test_as_a_command_there_is_no_traceback(tmp_path):
    path, expected = unreadable(tmp_path, "not utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "cryptoapi", "setkey", "-f", path],
        capture_output=True,
        check=False,
        text=True,
        timeout=WAIT,
        env=dict(os.environ, CRYPTOAPI_SELFTESTS="off"),
    )
    assert (done.returncode, done.stderr) == (1, expected)


@contextlib.contextmanager
def dying_keyd(path: str, answers: int, how: str):
    """A key daemon that answers ``answers`` requests (with a real key manager) and then
    goes away: it reads the next request and closes (``eof``), or closes with it unread
    (``reset``: the client's read fails with ECONNRESET)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(1)
    listener.settimeout(WAIT)
    km = KeyManager(make_registry())

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.settimeout(WAIT)
            for _ in range(answers):
                connection.send(km.handle(connection.recv(MAX_MESSAGE))[0])
            connection.recv(MAX_MESSAGE, socket.MSG_PEEK if how == "reset" else 0)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join(WAIT)
        listener.close()
        assert not thread.is_alive()


@pytest.mark.parametrize("how", ["eof", "reset"])
def test_a_key_daemon_dying_partway_names_the_line_reached(tmp_path, capsys, how):
    config = tmp_path / "ipsec.conf"
    config.write_text(CONFIG)
    with short_dir() as where:
        path = os.path.join(where, "s")
        with dying_keyd(path, 2, how):
            status = main(["setkey", "-f", str(config), "--socket", path])
    assert status == 1
    assert capsys.readouterr().err.splitlines() == [
        f"cryptoapi setkey: {config}:3:1: add: an SA with this SPI and destination exists already"
        " (EEXIST)",  # before it died
        f"cryptoapi: {config}:5: add: the key daemon closed the connection",
    ]
