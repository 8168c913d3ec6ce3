"""``import cryptoapi`` against ``import hashlib``, each in fresh interpreters, alternating.

Run: ``python -m bench.import_time``.
"""

import statistics
import subprocess
import sys

from bench.common import report

PROBE = "import time; t = time.perf_counter(); import {0}; print(time.perf_counter() - t)"


def import_seconds(module: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(module)], capture_output=True, text=True, check=True
    )
    return float(out.stdout)


def main(runs: int = 21) -> None:
    ours: list[float] = []
    peer: list[float] = []
    for _ in range(runs):
        ours.append(import_seconds("cryptoapi"))
        peer.append(import_seconds("hashlib"))
    report(
        f"import (median of {runs} fresh interpreters)",
        statistics.median(ours) * 1e6,
        statistics.median(peer) * 1e6,
        "import hashlib",
        "<= 1.5x",
    )


if __name__ == "__main__":
    main()
