"""Shared helpers for the DRBG tests: the CAVP vectors typed in under ``vectors/`` and the
CAVP procedure that replays one through the public ``rng`` API."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cryptoapi import Registry
from cryptoapi.registry.manifest import DRBG_DRIVERS

CAVP = json.loads((Path(__file__).parent / "vectors" / "cavp_drbg.json").read_text())["vectors"]


def entropy_from(chunks: list[bytes]) -> Callable[[int], bytes]:
    """An entropy source handing out ``chunks`` in order; drawing more is a test failure."""
    supply = iter(chunks)

    def source(size: int) -> bytes:
        chunk = next(supply, None)
        assert chunk is not None, f"drew {size} more bytes of entropy than the vector has"
        return chunk

    return source


def replay(rng: Any, vector: dict[str, Any]) -> bytes:
    """CAVP's DRBGVS procedure: instantiate, (reseed,) generate twice; the last output."""
    rng.set_entropy_source(entropy_from([bytes.fromhex(e) for e in vector.get("entropy_pr", [])]))
    rng.seed(bytes.fromhex(vector["entropy"]), bytes.fromhex(vector["personalization"]))
    if "entropy_reseed" in vector:
        rng.reseed(
            bytes.fromhex(vector["entropy_reseed"]), bytes.fromhex(vector["additional_reseed"])
        )
    output = b""
    for additional in vector["additional"]:
        output = rng.generate(len(vector["output"]) // 2, bytes.fromhex(additional))
    return output


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry(selftests="lazy")


__all__ = ["CAVP", "DRBG_DRIVERS", "entropy_from", "replay"]
