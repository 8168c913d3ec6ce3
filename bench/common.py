"""Side-by-side timing: ours and the peer measured alternately in one run, best of rounds;
and the one way every benchmark states a goal and whether it was met.

The machines are noisy, so only ratios are compared, and each round times both sides
back to back so drift hits both alike. A row with a goal ends ``(goal <= 1.3x: ✓ met)``
or ``(goal <= 1.3x: ✗ missed)``; a row that cannot be measured here says
``NAME: skipped: why``. ``python -m bench`` collects both kinds into its summary.
"""

import re
import sys
import timeit
from collections.abc import Callable

_MARKS = "utf" in (sys.stdout.encoding or "").lower()  # a pipe in the C locale may not be
MET = "✓ met" if _MARKS else "+ met"
MISSED = "✗ missed" if _MARKS else "- missed"
SKIPPED = ": skipped: "
_GOAL = re.compile(r"\s*(<=|>=|<|>)\s*([0-9][0-9,]*(?:\.[0-9]+)?)")
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "<=": lambda value, bound: value <= bound,
    "<": lambda value, bound: value < bound,
    ">=": lambda value, bound: value >= bound,
    ">": lambda value, bound: value > bound,
}


def verdict(value: float, goal: str) -> str:
    """:data:`MET` or :data:`MISSED`: ``value`` against ``goal``, an operator, a bound and
    its unit (``<= 1.3x``, ``>= 100x``, ``< 5%``, ``<= 20 ms``; words may follow), ``value``
    being in that unit."""
    match = _GOAL.match(goal)
    if match is None:
        raise ValueError(f"goal {goal!r} is not '<op> <number>[unit]'")
    operator, bound = match.groups()
    return MET if _COMPARE[operator](value, float(bound.replace(",", ""))) else MISSED


def goal_note(value: float, goal: str) -> str:
    """``(goal <= 1.3x: ✓ met)``: the goal and whether ``value`` meets it."""
    return f"(goal {goal}: {verdict(value, goal)})"


def skipped(what: str, why: str) -> None:
    """Say that ``what`` was not measured here, and why (not a failure)."""
    print(f"{what}{SKIPPED}{why}", flush=True)


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
    """One side-by-side row; with a goal for the ratio (``<= 1.3x``), whether it is met."""
    ratio = ours / peer
    line = f"{label:<44} ours {ours:9.3f} us   {peer_name} {peer:9.3f} us   ratio {ratio:6.2f}x"
    if goal:
        line += f"   {goal_note(ratio, goal)}"
    print(line, flush=True)
    return line
