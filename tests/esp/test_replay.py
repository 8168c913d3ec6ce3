"""The anti-replay window (RFC 4303 §3.4.3) and ESN inference (Appendix A2)."""

import random

import pytest

from cryptoapi.esp.replay import ReplayWindow


@pytest.mark.parametrize("size", [32, 64, 128, 1000, 4096])
def test_the_window_is_exactly_its_size(size):
    window = ReplayWindow(size, esn=False)
    window.accept(10_000)
    assert window.check(10_000 - size + 1)  # the oldest number still inside
    assert not window.check(10_000 - size)  # one below: too old
    assert not window.check(10_000)  # seen
    assert window.check(10_001)


def test_out_of_order_within_the_window_once_each():
    window = ReplayWindow(64, esn=False)
    order = list(range(1, 200))
    random.Random(1).shuffle(order)
    accepted = set()
    for seq in order + order:
        if window.check(seq):
            window.accept(seq)
            accepted.add(seq)
            assert seq not in accepted - {seq}
    # everything not more than 63 behind the highest seen at its arrival got in once
    assert accepted and max(accepted) == 199
    assert not window.check(0)  # never a valid number


def test_check_changes_nothing_only_accept_moves_the_window():
    window = ReplayWindow(32, esn=False)
    for seq in (5, 100, 7):
        assert window.check(seq)
    assert (window.top, window.bitmap) == (0, 0)


@pytest.mark.parametrize("jump", [63, 64, 65, 1 << 30, (1 << 32) - 5, (1 << 63)])
def test_a_jump_costs_the_window_not_the_jump(jump):
    """A keyed peer may jump the sequence number by up to 2^64: the bitmap stays within
    the window (a shift by the whole jump took 1.1 GB for 2^32 - 5), and what it keeps
    is exactly what a step-by-step window would."""
    window = ReplayWindow(64, esn=True)
    for seq in (1, 2, 5):
        window.accept(seq)
    window.accept(5 + jump)
    assert window.bitmap.bit_length() <= 64 and window.top == 5 + jump
    assert not window.check(5 + jump)
    for seq in (1, 2, 5):
        assert window.check(seq) is False  # behind the window, or seen
        if 5 + jump - seq < 64:
            assert window.bitmap >> (5 + jump - seq) & 1  # still inside: marked
    assert window.check(5 + jump - 1) == (jump > 1)


def test_a_zero_window_checks_nothing():
    window = ReplayWindow(0, esn=False)
    window.accept(5)
    assert window.check(5) and window.check(1)


# RFC 4303 Appendix A2.2: T is the highest sequence number seen, W the window.
W = 64


@pytest.mark.parametrize(
    ("top", "low", "expected"),
    [
        (1000, 990, 990),  # Case A, inside the window: same high bits
        (1000, 2000, 2000),  # Case A, ahead: same high bits
        (1000, 100, (1 << 32) | 100),  # Case A, below the window: the next subspace
        ((1 << 32) + 10, 2**32 - 5, 2**32 - 5),  # Case B, low bits above Tl - W + 1: previous
        ((1 << 32) + 10, 5, (1 << 32) + 5),  # Case B, inside: this subspace
        ((1 << 32) + 10, 100, (1 << 32) + 100),  # Case B, ahead: this subspace
        (10, 2**32 - 5, 0),  # Case B with no previous subspace: no such packet
    ],
)
def test_esn_inference_appendix_a2(top, low, expected):
    window = ReplayWindow(W, esn=True)
    window.top = top
    assert window.full_sequence(low) == expected
