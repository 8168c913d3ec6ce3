"""The KAT files are read through CPython's JSON scanner (``json`` itself imports ``re``):
the result must be what ``json.loads`` gives, and malformed input a ValueError naming it."""

import json
from pathlib import Path

import pytest

from cryptoapi.selftest import vectors
from cryptoapi.selftest.vectors import parse_json

FILES = sorted(Path(vectors.__file__).parent.glob("*.json"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_vector_file_parses_as_json_loads_parses_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert parse_json(text, str(path)) == json.loads(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (' \n[1, 2.5, "x", null, true]\n', [1, 2.5, "x", None, True]),
        ('{"a": {"b": []}}', {"a": {"b": []}}),
    ],
)
def test_values_and_surrounding_whitespace(text: str, value: object) -> None:
    assert parse_json(text, "here") == value == json.loads(text)


@pytest.mark.parametrize("text", ["", "   ", "[1,", "[1] 2", '{"a" 1}', "[01]"])
def test_malformed_json_is_a_value_error_naming_where(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError, match=r"here|Expecting|delimiter") as raised:
        parse_json(text, "here")
    assert isinstance(raised.value, ValueError)
