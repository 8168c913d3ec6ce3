"""Side-by-side timing: ours and the peer measured alternately in one run, best of rounds.

The machines are noisy, so only ratios are compared, and each round times both sides
back to back so drift hits both alike.
"""

import timeit
from collections.abc import Callable


def per_call_us(fn: Callable[[], object], number: int) -> float:
    return timeit.timeit(fn, number=number) / number * 1e6


def side_by_side(
    ours: Callable[[], object], peer: Callable[[], object], number: int, rounds: int = 7
) -> tuple[float, float]:
    """Best per-call microseconds of each, timed alternately over ``rounds``."""
    best_ours = best_peer = float("inf")
    for _ in range(rounds):
        best_ours = min(best_ours, per_call_us(ours, number))
        best_peer = min(best_peer, per_call_us(peer, number))
    return best_ours, best_peer


def report(label: str, ours: float, peer: float, peer_name: str, goal: str = "") -> str:
    line = (
        f"{label:<44} ours {ours:9.3f} us   {peer_name} {peer:9.3f} us   ratio {ours / peer:6.2f}x"
    )
    if goal:
        line += f"   (goal {goal})"
    print(line, flush=True)
    return line
