"""The self-test manager's known-answer vectors: one JSON file per family, keyed by
algorithm *name*, so every implementation of a name meets the same vectors.

Each vector is an object with ``alg``, ``source`` (the published document it is typed
from) and hex fields whose meaning depends on the type (``msg``/``key``/``digest`` for a
``shash``). The set is small on purpose: a KAT is a smoke test before use; the full
published vector files run in the test suite.
"""

import json
import os
from typing import Any

Vector = dict[str, Any]

_DIR = os.path.dirname(__file__)
_by_name: dict[str, list[Vector]] | None = None


def vectors_for(name: str) -> list[Vector]:
    """The known-answer vectors for algorithm ``name`` (empty if there are none)."""
    return _load().get(name, [])


def names_with_vectors() -> set[str]:
    return set(_load())


def _load() -> dict[str, list[Vector]]:
    global _by_name
    if _by_name is None:
        by_name: dict[str, list[Vector]] = {}
        for file in sorted(os.listdir(_DIR)):
            if file.endswith(".json"):
                with open(os.path.join(_DIR, file), encoding="utf-8") as stream:
                    for vector in json.load(stream):
                        by_name.setdefault(vector["alg"], []).append(vector)
        _by_name = by_name
    return _by_name
