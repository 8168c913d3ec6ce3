"""FIPS mode against normal mode, side by side in one run, and the integrity check's cost.

Run: ``python -m bench.fips``.

| row | ours (FIPS mode) | peer (normal mode) | goal |
|---|---|---|---|
| alloc_shash("sha256") + digest(64 B) | ``Registry(fips=True)`` | ``Registry()`` | <= 1.02x |
| gcm(aes) encrypt(1400 B), keyed once | the same | the same | <= 1.02x |
| hmac(sha256) alloc + setkey + digest | the same | the same | (shown: a tracked allocation) |
| integrity check | ``integrity.failure()`` in process, files cached | | < 20 ms |
| first digest (import, alloc, digest) | fresh, ``CRYPTOAPI_FIPS=1`` | without it | (shown) |

The per-call rows time the two registries alternately, best of 15 rounds: both run the same
code per call, so what remains of a difference is the machine's noise. The first-digest row
is the whole start-up price of FIPS mode: the integrity check, the modules it imports
(``hmac``, ``hashlib``), and FIPS mode's own modules.

The MAC is written to a temporary file (``CRYPTOAPI_FIPS_MAC``), not beside the package.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import cryptoapi
from bench.common import goal_note, report, side_by_side
from cryptoapi.fips import integrity

DATA = bytes(range(64))
PACKET = bytes(1400)
KEY = bytes(range(16))
IV = bytes(12)
PROCESS_RUNS = 15
ROUNDS = 15
FIRST_DIGEST = "import cryptoapi; cryptoapi.alloc_shash('sha256').digest(b'x')"


def per_call_rows(fips: cryptoapi.Registry, normal: cryptoapi.Registry) -> None:
    ours, peer = side_by_side(
        lambda: fips.alloc_shash("sha256").digest(DATA),
        lambda: normal.alloc_shash("sha256").digest(DATA),
        200_000,
        ROUNDS,
    )
    report("alloc_shash('sha256') + digest(64 B)", ours, peer, "normal", "<= 1.02x")
    sealers = []
    for registry in (fips, normal):
        gcm = registry.alloc_aead("gcm(aes)")
        gcm.setkey(KEY)
        sealers.append(gcm.encrypt)
    seal_fips, seal_normal = sealers
    ours, peer = side_by_side(
        lambda: seal_fips(IV, PACKET, b""), lambda: seal_normal(IV, PACKET, b""), 100_000, ROUNDS
    )
    report("gcm(aes) encrypt(1400 B), keyed once", ours, peer, "normal", "<= 1.02x")

    def keyed_mac(registry: cryptoapi.Registry) -> bytes:
        mac = registry.alloc_shash("hmac(sha256)")
        mac.setkey(KEY)
        return mac.digest(DATA)

    ours, peer = side_by_side(lambda: keyed_mac(fips), lambda: keyed_mac(normal), 20_000)
    report("hmac(sha256) alloc + setkey + digest(64 B)", ours, peer, "normal")


def integrity_rows() -> None:
    integrity.failure()  # the files in the page cache, hmac imported: what a start-up meets
    best = min(_timed(integrity.failure) for _ in range(20))
    files = len(integrity.covered_files(integrity.package_dir()))
    label = f"integrity check ({files} files)"
    print(f"{label:<44} {best:.2f} ms   {goal_note(best, '< 20 ms')}")
    with_check = without = float("inf")
    for _ in range(PROCESS_RUNS):
        integrity.install()  # again: in a working tree, other files may change meanwhile
        with_check = min(with_check, _first_digest_ms({"CRYPTOAPI_FIPS": "1"}))
        without = min(without, _first_digest_ms({}))
    print(
        f"{'first digest, CRYPTOAPI_FIPS=1':<44} {with_check:.1f} ms   "
        f"normal {without:.1f} ms   difference {with_check - without:.1f} ms"
    )


def _timed(check: Callable[[], object]) -> float:
    started = time.perf_counter()
    check()
    return (time.perf_counter() - started) * 1e3


def _first_digest_ms(extra: dict[str, str]) -> float:
    env = {key: value for key, value in os.environ.items() if key != "CRYPTOAPI_FIPS"}
    env.update(extra)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", FIRST_DIGEST], env=env, check=True)
    return (time.perf_counter() - started) * 1e3


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        os.environ["CRYPTOAPI_FIPS_MAC"] = os.path.join(directory, "fips.mac")
        integrity.install()
        fips = cryptoapi.Registry("lazy", fips=True)
        normal = cryptoapi.Registry("lazy", fips=False)
        per_call_rows(fips, normal)
        integrity_rows()


if __name__ == "__main__":
    main()
