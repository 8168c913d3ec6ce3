"""Start-up and per-call costs against the obvious peers, in fresh processes.

Run: ``python -m bench.startup``. Every process row is the minimum over N alternating runs
(ours, peer, ours, peer ...), so machine drift hits both sides alike; ratios are printed
side by side with their goals, then the ``-X importtime`` top ten of the first-use path.

| row | ours | peer | goal |
|---|---|---|---|
| first verified digest | import cryptoapi + alloc_shash("sha256").digest | hashlib | <= 1.45x |
| first AEAD | alloc_aead("gcm(aes)") + encrypt | cryptography AESGCM | <= 1.3x |
| bring-up, tests off | Registry("off").load_all() | one thread per registration | >= 100x |
| per call | alloc_shash("sha256").digest(64 B) | hashlib.new("sha256", 64 B) | <= 1.3x |

The first digest's goal is 1.45x, not 1.3x (issue 25): its 22 layered modules, which
``tests/registry/test_import_path.py`` lists, cost ~290k instructions each and are worth the 5 ms.

The issue's other rows are measured where their kind already is: ``gcm(aes)`` at 1400 B
against ``AESGCM.encrypt`` in ``bench/ciphers.py``, the KDFs in ``bench/kdf.py``.

Before timing, the package is byte-compiled (as ``pip install`` leaves it): a process started
with
``PYTHONDONTWRITEBYTECODE`` (CI sets it) would otherwise recompile every changed module on
every run and time the compiler.
"""

from __future__ import annotations

import compileall
import os
import subprocess
import sys
import time
import timeit

from bench.boot import baseline, bring_up
from bench.common import goal_note

FIRST_DIGEST = "import cryptoapi; cryptoapi.alloc_shash('sha256').digest(b'x')"
HASHLIB = "import hashlib; hashlib.new('sha256', b'x').digest()"
FIRST_GCM = (
    "import cryptoapi; a = cryptoapi.alloc_aead('gcm(aes)'); a.setkey(bytes(16)); "
    "a.encrypt(bytes(12), b'x', b'')"
)
AESGCM = (
    "from cryptography.hazmat.primitives.ciphers.aead import AESGCM; "
    "AESGCM(bytes(16)).encrypt(bytes(12), b'x', b'')"
)


def process_ms(code: str) -> float:
    """Wall time of one fresh interpreter running ``code``."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return (time.perf_counter() - started) * 1e3


def alternating(codes: list[str], rounds: int) -> list[float]:
    """The minimum over ``rounds`` alternating runs of each of ``codes``, in ms."""
    best = [float("inf")] * len(codes)
    for _ in range(rounds):
        for i, code in enumerate(codes):
            best[i] = min(best[i], process_ms(code))
    return best


def per_call_ns() -> tuple[float, float]:
    """alloc_shash + digest of 64 bytes vs hashlib.new + digest, best of 7 x 20000 calls."""
    import hashlib

    import cryptoapi

    data = bytes(64)
    cryptoapi.alloc_shash("sha256").digest(data)

    def ours() -> bytes:
        return cryptoapi.alloc_shash("sha256").digest(data)

    def theirs() -> bytes:
        return hashlib.new("sha256", data).digest()

    number = 20000
    times = [min(timeit.repeat(f, number=number, repeat=7)) for f in (ours, theirs)]
    return times[0] / number * 1e9, times[1] / number * 1e9


def compiled() -> None:
    """Byte-compile the package where it is imported from (see the module docstring)."""
    import cryptoapi

    compileall.compile_dir(os.path.dirname(cryptoapi.__file__), quiet=1)


def bring_up_ratio(rounds: int) -> tuple[float, float]:
    """Best bring-up of every provider with tests off vs a thread per registration (us)."""
    bring_up("off")
    baseline()
    off, old = float("inf"), float("inf")
    for _ in range(rounds):
        off = min(off, bring_up("off"))
        old = min(old, baseline())
    return off, old


def importtime_top(code: str, count: int = 10) -> list[str]:
    """The ``count`` imports with the largest cumulative time on the path of ``code``."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    rows = []
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "cumulative" not in line:
            own, cumulative, name = line[len("import time:") :].split("|")
            rows.append((int(cumulative), int(own), name.strip()))
    rows.sort(reverse=True)
    return [
        f"{cum / 1e3:7.2f} ms (self {own / 1e3:5.2f})  {name}" for cum, own, name in rows[:count]
    ]


def main(rounds: int = 15) -> None:
    compiled()
    bare, ours, peer = alternating(["pass", FIRST_DIGEST, HASHLIB], rounds)
    gcm, aesgcm = alternating([FIRST_GCM, AESGCM], rounds)
    off, old = bring_up_ratio(rounds)
    call, hashlib_call = per_call_ns()
    print(f"fresh processes, min of {rounds} alternating runs (bare python {bare:.1f} ms):")
    rows = [
        # 1.45x, not 1.3x: 22 layered modules at ~290k instructions each (issue 25, item 7)
        ("first sha256 digest vs hashlib process", ours, peer, "ms", ours / peer, "<= 1.45x"),
        ("first gcm(aes) encrypt vs AESGCM process", gcm, aesgcm, "ms", gcm / aesgcm, "<= 1.3x"),
        ("thread-per-registration vs bring-up (off)", old, off, "us", old / off, ">= 100x"),
        ("alloc_shash+digest(64 B) vs hashlib.new", call, hashlib_call, "ns",
         call / hashlib_call, "<= 1.3x"),
    ]  # fmt: skip
    for label, a, b, unit, ratio, goal in rows:
        shown = goal_note(ratio, goal)
        print(f"  {label:<44} {a:9.1f} {unit} vs {b:9.1f} {unit}  {ratio:7.2f}x  {shown}")
    print(f"  first digest over bare python: {ours - bare:.1f} ms (hashlib: {peer - bare:.1f} ms)")
    print("importtime, first-use path (cumulative, top ten):")
    for row in importtime_top(FIRST_DIGEST):
        print("  " + row)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
