"""Counts in the commands' output read as English: one of a thing is singular."""

import pytest

from cryptoapi._counts import counted


@pytest.mark.parametrize(
    ("count", "words", "expected"),
    [
        (0, ("SA",), "0 SAs"),
        (1, ("SA",), "1 SA"),
        (2, ("SA",), "2 SAs"),
        (1, ("policy", "policies"), "1 policy"),
        (0, ("policy", "policies"), "0 policies"),
        (3, ("policy", "policies"), "3 policies"),
        (1, ("statement",), "1 statement"),
        (12, ("implementation",), "12 implementations"),
    ],
)
def test_singular_for_one_plural_otherwise(count, words, expected):
    assert counted(count, *words) == expected
