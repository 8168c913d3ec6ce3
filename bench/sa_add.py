"""Bulk SADB_ADD through ``KeyManager.handle()``: probing once vs re-probing on every add.

Run: ``python -m bench.sa_add [--quick] [--long] [--no-daemon]``.

The HA case of issue 7: a standby loads a failed node's SAs at once. In 2007 Linux re-probed
every algorithm on every add (2,000 SAs: 42.6 s). Measured here, side by side in one run:

- ours: each algorithm probed once, when an SA first names it (2,000 and 100,000 adds);
- re-probing: on every add, every algorithm of the SADB table is probed as ARCHITECTURE.md
  defines probing (finding out which exist, registering providers, instantiating
  templates): a fresh ``Registry`` each time, modules already imported. Timed on a sample
  and scaled to 2,000;
- re-probing, warm: every algorithm looked up again on every add
  (``KeyManager(reprobe=True)``) in a registry that has already resolved them all, so each
  lookup is a cache read. Shown so the ratio is not read for more than it is.

Then GET lookups per second on the 100,000-SA database. Goals: 2,000 adds <= 20 ms,
100,000 <= 1.5 s, >= 50x faster than re-probing.

Last, the same adds through the key daemon's socket (``cryptoapi keyd``, a subprocess), with
and without ``--state`` (SQLite, each acknowledged add committed first): one add at a time,
each acknowledged before the next is sent, and pipelined (up to 64 in flight, so the daemon
commits many per transaction); and ``--sync normal`` (no fsync per commit) to show what
durability against power loss costs. Each line gives the cost per add and its ratio to
``handle()`` in-process. By default the daemon is given the 2,000 adds; ``--long`` also
gives it the 100,000 (over ten minutes on 2 cores: with ``--state`` each acknowledged add
is an fsync). ``--no-daemon`` skips this part; ``--quick`` makes the large load 20,000.
"""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator

import cryptoapi
import cryptoapi.cli
from bench.common import goal_note, report
from cryptoapi.pfkey import (
    Address,
    ExtType,
    Key,
    KeyManager,
    Message,
    MsgType,
    Sa,
    Sa2,
    SaType,
    SockAddr,
)
from cryptoapi.pfkey.daemon.client import PfkeyClient
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.probe import AlgorithmProbe
from cryptoapi.pfkey.wire.framing import Extension

AUTH = 5  # hmac(sha256), RFC 4868: 256-bit key
ENCRYPT = 12  # cbc(aes), RFC 3602
SRC = Address(ExtType.ADDRESS_SRC, SockAddr.of("192.0.2.1"), 0, 32)
FIRST_SPI = 0x1000


def dst(i: int) -> Address:
    """One destination per 50,000 SAs: both lookups and inserts see a realistic mix."""
    return Address(ExtType.ADDRESS_DST, SockAddr.of(f"198.51.100.{1 + i // 50_000}"), 0, 32)


def adds(count: int, satype: int, encrypt: int) -> list[bytes]:
    """``count`` distinct ADD messages, encoded before the clock starts."""
    out = []
    for i in range(count):
        exts: list[Extension] = [Sa(FIRST_SPI + i, 64, 1, AUTH, encrypt), SRC, dst(i)]
        exts.append(Key(ExtType.KEY_AUTH, 256, i.to_bytes(32, "big")))
        if encrypt:
            exts.append(Key(ExtType.KEY_ENCRYPT, 128, i.to_bytes(16, "little")))
        exts.append(Sa2(2, 1))
        out.append(Message(MsgType.ADD, satype, i, 1, 0, tuple(exts)).encode())
    return out


def gets(count: int, satype: int) -> list[bytes]:
    out = []
    for i in range(count):
        exts = (Sa(FIRST_SPI + i), SRC, dst(i))
        out.append(Message(MsgType.GET, satype, i, 1, 0, exts).encode())
    return out


def load(km: KeyManager, messages: list[bytes]) -> float:
    """Seconds to hand every message to ``km``; checks each was accepted."""
    handle = km.handle
    start = time.perf_counter()
    for data in messages:
        handle(data)
    elapsed = time.perf_counter() - start
    stats = km.stats()
    if stats["errors"] or stats["sas"] != len(messages):
        raise SystemExit(f"the adds were not all accepted: {stats}")
    return elapsed


def best(rounds: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(rounds))


class ColdProbe(AlgorithmProbe):
    """Re-probing as from a cold start: a new registry before every add's probes."""

    def reprobe_all(self) -> None:
        self.registry = cryptoapi.Registry()
        super().reprobe_all()


def choose(registry: cryptoapi.Registry) -> tuple[int, int, str]:
    """ESP hmac(sha256) + cbc(aes) if the registry has cbc(aes), else AH hmac(sha256)."""
    probe = KeyManager(registry)
    km_message = adds(1, SaType.ESP, ENCRYPT)[0]
    if probe.handle(km_message)[0][2] == 0:
        return SaType.ESP, ENCRYPT, "ESP hmac(sha256)+cbc(aes)"
    return SaType.AH, 0, "AH hmac(sha256) (no cbc(aes) in this tree)"


def main() -> None:
    quick = "--quick" in sys.argv
    big = 20_000 if quick else 100_000
    registry = cryptoapi.Registry()  # the default self-test policy (CRYPTOAPI_SELFTESTS)
    cold_start = time.perf_counter()
    satype, encrypt, what = choose(registry)
    mode = getattr(getattr(registry, "selftest", None), "mode", "default")
    print(f"SAs: {what}; self-tests: {mode}", flush=True)
    print(f"first SA on a fresh registry (probes, builds, self-tests): "
          f"{(time.perf_counter() - cold_start) * 1e3:.1f} ms")  # fmt: skip

    small = adds(2_000, satype, encrypt)
    ours_2k = best(7, lambda: load(KeyManager(registry), small))
    shown = goal_note(ours_2k * 1e3, "<= 20 ms")
    print(f"{'2,000 SADB_ADD, probing once':<44} {ours_2k * 1e3:9.2f} ms   {shown}")

    many = adds(big, satype, encrypt)
    km = KeyManager(registry)
    ours_big = load(km, many)
    shown = goal_note(ours_big, "<= 1.5 s")
    print(f"{f'{big:,} SADB_ADD, probing once':<44} {ours_big:9.3f} s    {shown}")
    print(f"{'':<44} alg_probes={km.stats()['alg_probes']}")

    sample = 20 if quick else 100
    cold = KeyManager(registry, reprobe=True)
    cold.probe = ColdProbe(registry, reprobe=True)
    cold_2k = load(cold, small[:sample]) / sample * 2_000
    print(f"{'2,000 SADB_ADD, re-probing every add':<44} {cold_2k:9.2f} s    "
          f"(scaled from {sample})")  # fmt: skip
    report(
        "per SADB_ADD: probing once vs re-probing",
        ours_2k / 2_000 * 1e6,
        cold_2k / 2_000 * 1e6,
        "re-probing",
        "<= 0.02x, i.e. >= 50x faster",
    )
    print(f"{'':<44} probing once is {cold_2k / ours_2k:,.0f}x faster")
    warm_2k = best(3, lambda: load(KeyManager(registry, reprobe=True), small))
    print(f"{'2,000 SADB_ADD, re-probing a warm registry':<44} {warm_2k * 1e3:9.2f} ms")
    report(
        "per SADB_ADD: probing once vs warm re-probe",
        ours_2k / 2_000 * 1e6,
        warm_2k / 2_000 * 1e6,
        "warm re-probe",
    )
    print(f"{'':<44} probing once is {warm_2k / ours_2k:,.1f}x faster")

    queries = gets(big, satype)
    handle = km.handle
    start = time.perf_counter()
    for data in queries:
        handle(data)
    elapsed = time.perf_counter() - start
    if km.stats()["errors"]:
        raise SystemExit("a GET failed")
    print(f"{f'GET through handle(), {big:,} SAs':<44} {big / elapsed:12,.0f} /s")
    sad = km.sad.by_key
    keys = [sa.key for sa in km.sad]
    start = time.perf_counter()
    for key in keys:
        sad[key]
    elapsed = time.perf_counter() - start
    print(f"{'SA lookups by (satype, dst, SPI)':<44} {len(keys) / elapsed:12,.0f} /s")
    if "--no-daemon" not in sys.argv:
        loads = [(2_000, small, ours_2k)]
        if "--long" in sys.argv:
            loads.append((big, many, ours_big))
        daemon_section(satype, encrypt, loads)


# -- through the key daemon's socket --------------------------------------------------


def keyd_command() -> list[str]:
    """How to start the daemon: ``python -m cryptoapi keyd``."""
    return [sys.executable, "-m", "cryptoapi", "keyd"]


@contextlib.contextmanager
def keyd(state: bool, sync: str = "full") -> Iterator[PfkeyClient]:
    """A key daemon in a subprocess (its own temporary directory) and a client of it."""
    where = tempfile.mkdtemp(prefix="keyd", dir="/tmp")
    path = os.path.join(where, "s")
    command = [*keyd_command(), "--socket", path]
    if state:
        command += ["--state", os.path.join(where, "state.db"), "--sync", sync]
    daemon = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                client = PfkeyClient(path, timeout=60)
                break
            except PfkeyError:
                if time.monotonic() > deadline or daemon.poll() is not None:
                    raise SystemExit("the key daemon did not start") from None
                time.sleep(0.02)
        with client:
            yield client
    finally:
        daemon.terminate()
        try:
            daemon.wait(10)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        shutil.rmtree(where, ignore_errors=True)


def warmup(satype: int, encrypt: int) -> bytes:
    """An ADD with an SPI the timed adds do not use: the daemon probes its algorithms."""
    exts: list[Extension] = [Sa(FIRST_SPI - 1, 64, 1, AUTH, encrypt), SRC, dst(0)]
    exts.append(Key(ExtType.KEY_AUTH, 256, bytes(32)))
    if encrypt:
        exts.append(Key(ExtType.KEY_ENCRYPT, 128, bytes(16)))
    return Message(MsgType.ADD, satype, 1 << 31, 1, 0, tuple(exts)).encode()


def through_socket(client: PfkeyClient, messages: list[bytes], window: int) -> float:
    """Seconds to have every ADD acknowledged, ``window`` in flight at most."""
    start = time.perf_counter()
    if window == 1:
        for data in messages:
            if client.request(data)[0][2]:
                raise SystemExit("the daemon refused an add")
        return time.perf_counter() - start
    sent = acked = 0
    while acked < len(messages):
        while sent < len(messages) and sent - acked < window:
            client.send(messages[sent])
            sent += 1
        if client.receive()[2]:
            raise SystemExit("the daemon refused an add")
        acked += 1
    return time.perf_counter() - start


CONFIGURATIONS = (
    (False, "full", 1),
    (False, "full", 64),
    (True, "full", 1),
    (True, "full", 64),
    (True, "normal", 1),
)
"""(--state, --sync, adds in flight) for each load through the daemon."""


def daemon_section(satype: int, encrypt: int, loads: list[tuple[int, list[bytes], float]]) -> None:
    """Every load through the daemon's socket: --state or not, one at a time or pipelined."""
    for count, messages, in_process in loads:
        per_add = in_process / count * 1e6
        for state, sync, window in CONFIGURATIONS:
            with keyd(state, sync) as client:
                if client.request(warmup(satype, encrypt))[0][2]:
                    raise SystemExit("the daemon refused the first add")
                elapsed = through_socket(client, messages, window)
            how = "acked each" if window == 1 else f"{window} in flight"
            where = f" --state{' --sync normal' if sync == 'normal' else ''}" if state else ""
            label = f"{count:,} via keyd{where}, {how}"
            ours = elapsed / count * 1e6
            print(
                f"{label:<52} {elapsed:8.3f} s  {ours:7.1f} us/add  "
                f"{ours / per_add:6.1f}x handle() ({per_add:.1f} us)",
                flush=True,
            )


if __name__ == "__main__":
    main()
