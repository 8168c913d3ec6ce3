"""keyd on PostgreSQL (issue 23): acknowledged adds beside SQLite's, a standby's load, a
takeover.

Run: ``python -m bench.keyd_pg [--quick]``.

A throwaway PostgreSQL server is started for the run (``tests/ha/pgserver.py``: Debian's
package, ``initdb`` in a temporary directory, a Unix socket only, ``fsync`` and
``synchronous_commit`` on). Measured in one run:

- 2,000 PF_KEY ADDs through keyd's socket, each acknowledged after its commit is durable,
  on SQLite (``--state FILE``, ``--sync full``) and on PostgreSQL (``--state
  postgresql://...``): one at a time (each add its own transaction and WAL flush), and 64
  in flight (the daemon commits what one round read in one transaction: group commit).
  The ratio of the two is what group commit buys; the output says so.
- A starting standby's load of 10,000 SAs (goal <= 0.5 s): ``PgStore.attach`` in this
  process (one snapshot, binary rows) and, apart, a ``keyd --standby`` process from start
  to listening (Python's start and imports included).
- A takeover with those 10,000 SAs: kill -9 of the active keyd until the standby has
  acknowledged an ADD (goal <= 1 s).
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import cryptoapi
from bench.common import goal_note, skipped
from bench.sa_add import adds, choose, keyd_command, through_socket, warmup
from cryptoapi.pfkey import KeyManager
from cryptoapi.pfkey.daemon.client import PfkeyClient, fields
from cryptoapi.pfkey.daemon.pgstore import PgStore
from cryptoapi.pfkey.errors import PfkeyError
from tests.ha.pgserver import Server, running, unavailable

ADDS = 2_000
LOADED = 10_000


@contextlib.contextmanager
def keyd(where: str, name: str, state: str, *extra: str) -> Iterator[subprocess.Popen[bytes]]:
    """A keyd subprocess at ``where/name`` on ``state``, once it listens; killed after."""
    path = os.path.join(where, name)
    env = dict(os.environ, CRYPTOAPI_SELFTESTS="off")
    command = [*keyd_command(), "--socket", path, "--state", state, *extra]
    daemon = subprocess.Popen(command, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                PfkeyClient(path, timeout=1).close()
                break
            except PfkeyError:
                if time.monotonic() > deadline or daemon.poll() is not None:
                    raise SystemExit(f"keyd on {state} did not start") from None
                time.sleep(0.005)
        yield daemon
    finally:
        if daemon.poll() is None:
            daemon.kill()
        daemon.wait()


def timed_adds(
    where: str, name: str, state: str, messages: list[bytes], window: int, *, first: bytes
) -> float:
    """Seconds for keyd on ``state`` to acknowledge every ADD, ``window`` in flight, after
    the ADD ``first`` (untimed: the daemon probes its algorithms)."""
    with keyd(where, name, state), PfkeyClient(os.path.join(where, name), timeout=60) as client:
        if client.request(first)[0][2]:
            raise SystemExit("keyd refused the first add")
        return through_socket(client, messages, window)


def adds_section(server: Server, where: str, messages: list[bytes], first: bytes) -> None:
    count = len(messages)
    results: dict[tuple[str, int], float] = {}
    for backend in ("sqlite", "postgresql"):
        for window in (1, 64):
            state = (
                server.new_database()
                if backend == "postgresql"
                else os.path.join(where, f"{window}.db")
            )
            elapsed = timed_adds(where, f"{backend}{window}", state, messages, window, first=first)
            results[backend, window] = elapsed
            how = "acked each" if window == 1 else f"{window} in flight"
            label = f"{count:,} ADDs via keyd on {backend}, {how}"
            print(f"{label:<52} {elapsed:8.3f} s  {elapsed / count * 1e6:8.1f} us/add", flush=True)
    single, grouped = results["postgresql", 1], results["postgresql", 64]
    ratio = results["postgresql", 1] / results["sqlite", 1]
    per_flush = single / count * 1e6
    print(
        f"postgresql / sqlite, acked each: {ratio:.2f}x per add.\n"
        f"group commit: keyd commits once per round, so every add read in one round shares "
        f"one transaction and one WAL flush. With 64 in flight: {grouped / count * 1e6:.0f} "
        f"us/add instead of {per_flush:.0f}, {single / grouped:.1f}x. A "
        f"client that sends one add and waits for its reply (an IKE daemon keying one SA) "
        f"pays one flush per add ({per_flush:.0f} us here) and group commit buys it nothing; "
        f"a bulk load or several clients at once get the {single / grouped:.0f}x.",
        flush=True,
    )


def fill(server: Server, where: str, messages: list[bytes], first: bytes) -> str:
    """A database holding ``messages``' SAs (and ``first``'s), added through a keyd."""
    url = server.new_database()
    timed_adds(where, "fill", url, messages, 64, first=first)
    return url


def standby_section(url: str, where: str, count: int) -> None:
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        store = PgStore(url, standby=True)
        km = KeyManager(cryptoapi.Registry(selftests="off"))
        loaded, _ = store.attach(km)
        timings.append(time.perf_counter() - start)
        store.close()
    if loaded != count + 1:
        raise SystemExit(f"the standby loaded {loaded} SAs, not {count + 1}")
    best = min(timings)
    label = f"standby's load of {loaded:,} SAs (PgStore.attach)"
    print(f"{label:<52} {best:8.3f} s  {goal_note(best, '<= 0.5 s')}", flush=True)
    start = time.perf_counter()
    with keyd(where, "standby", url, "--standby"):
        ready = time.perf_counter() - start
    label = "keyd --standby process, start to listening"
    print(f"{label:<52} {ready:8.3f} s  (Python start and imports included)", flush=True)


def takeover_section(url: str, where: str, message: bytes) -> None:
    with keyd(where, "active", url) as active, keyd(where, "standby", url, "--standby"):
        time.sleep(0.5)  # the standby has followed everything
        with PfkeyClient(os.path.join(where, "standby"), timeout=30) as client:
            killed = time.perf_counter()
            active.send_signal(signal.SIGKILL)
            while fields(client.request(message)[0])[1] != 0:
                time.sleep(0.002)
            outage = time.perf_counter() - killed
    label = "takeover: kill -9 to the standby's first ADD acked"
    print(f"{label:<52} {outage:8.3f} s  {goal_note(outage, '<= 1 s')}", flush=True)


def main() -> None:
    why = unavailable()
    if why is not None:
        skipped("keyd on postgresql", why)
        return
    quick = "--quick" in sys.argv
    satype, encrypt, what = choose(cryptoapi.Registry(selftests="off"))
    print(f"SAs: {what}", flush=True)
    loaded = 2_000 if quick else LOADED
    messages = adds(ADDS + loaded + 1, satype, encrypt)
    where = tempfile.mkdtemp(prefix="kpg", dir="/tmp")
    first = warmup(satype, encrypt)
    try:
        with running() as server:
            adds_section(server, where, messages[:ADDS], first)
            url = fill(server, where, messages[:loaded], first)
            standby_section(url, where, loaded)
            takeover_section(url, where, messages[-1])
    finally:
        shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
