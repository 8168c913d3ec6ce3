"""A throwaway PostgreSQL server for the HA tests: Debian's ``postgresql`` package (its
binaries under /usr/lib/postgresql/<version>/bin, as ``scripts/system-deps`` installs
them), ``initdb`` in a temporary directory, listening on a Unix socket in that directory
only (``listen_addresses = ''``), run as the ``postgres`` user when the tests run as root
(the server refuses root)."""

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

WAIT = 30


def bindir() -> str | None:
    """The newest Debian PostgreSQL's bin directory holding initdb, or None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    return os.path.dirname(found[-1]) if found else None


def unavailable() -> str | None:
    """Why no server can be started here, or None."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[postgresql]')"
    if bindir() is None:
        return "Debian's postgresql package is not installed (scripts/system-deps installs it)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no postgres user to run the server as"
    return None


@dataclass
class Server:
    where: str
    bindir: str
    _names = itertools.count(1)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.where}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        name = f"ha{next(self._names)}_{os.getpid()}"
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def sql(
        self, url: str, statement: str, params: tuple[object, ...] = ()
    ) -> list[tuple[object, ...]]:
        import psycopg

        with psycopg.connect(url, autocommit=True) as db:
            cursor = db.execute(statement, params)
            return cursor.fetchall() if cursor.description else []


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _pg_ctl(server: Server, *args: str) -> None:
    data = os.path.join(server.where, "data")
    command = [f"{server.bindir}/pg_ctl", "-D", data, "-w", "-t", str(WAIT), *args]
    subprocess.run(_as_server_user(command), check=True, capture_output=True, timeout=WAIT * 2)


def start(server: Server) -> None:
    """Start (or start again) the server, on its Unix socket only."""
    options = f"-k {server.where} -c listen_addresses='' -c fsync=on -c synchronous_commit=on"
    _pg_ctl(server, "-l", f"{server.where}/log", "-o", options, "start")


def stop(server: Server) -> None:
    """Stop the server at once (as a crash would: no checkpoint)."""
    _pg_ctl(server, "-m", "immediate", "stop")


@contextlib.contextmanager
def running() -> Iterator[Server]:
    """A server in a temporary directory for the time of the block."""
    bins = bindir()
    assert bins is not None
    where = tempfile.mkdtemp(prefix="pg", dir="/tmp")
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(where, user.pw_uid, user.pw_gid)
    os.chmod(where, 0o755)  # the socket in it is for the tests (trust on the socket only)
    server = Server(where, bins)
    try:
        subprocess.run(
            _as_server_user(
                [f"{bins}/initdb", "-D", f"{where}/data", "-U", "postgres", "--auth=trust"]
            ),
            check=True,
            capture_output=True,
            timeout=WAIT * 4,
        )
        start(server)
        try:
            yield server
        finally:
            with contextlib.suppress(subprocess.SubprocessError):
                stop(server)
    finally:
        shutil.rmtree(where, ignore_errors=True)
