"""SP 800-90A's limits and §9 behaviour: request size, entropy and input lengths, the
reseed interval (§9.3.1: reseed from the source, then generate without the additional
input), prediction resistance, and self-seeding."""

import os

import pytest

from cryptoapi import InvalidArgument, Registry
from cryptoapi.rng.drbg import CORES, Drbg, Limits
from cryptoapi.transforms.rng import Rng
from tests.rng.conftest import entropy_from

SEED = bytes(range(48))
FRESH = bytes(range(100, 132))


@pytest.fixture(scope="module")
def registry():
    return Registry(selftests="lazy")


def core_of(registry, driver, **limits):
    """A DRBG core of ``driver`` over ``registry``'s primitives with other limits."""
    core = next(c for c in CORES if driver.endswith("_" + c.name))
    return Drbg(driver, core.mechanism(registry.lookup), Limits(core.strength, **limits),
                prediction_resistance="_pr_" in driver)  # fmt: skip


@pytest.mark.parametrize(
    "driver", ["drbg_nopr_hmac_sha256", "drbg_nopr_sha512", "drbg_pr_ctr_aes128"]
)
def test_one_request_returns_at_most_2_to_the_19_bits(registry, driver):
    rng = registry.alloc_rng(driver)
    assert len(rng.generate(1 << 16)) == 1 << 16
    with pytest.raises(InvalidArgument, match="65537 bytes requested"):
        rng.generate((1 << 16) + 1)
    with pytest.raises(InvalidArgument):
        rng.generate(-1)
    assert rng.generate(0) == b""


@pytest.mark.parametrize(("driver", "least"), [("drbg_nopr_ctr_aes128", 16),
                                               ("drbg_nopr_ctr_aes192", 24),
                                               ("drbg_nopr_hmac_sha384", 32)])  # fmt: skip
def test_entropy_must_carry_the_security_strength(registry, driver, least):
    rng = registry.alloc_rng(driver)
    with pytest.raises(InvalidArgument, match=f"at least {least}"):
        rng.seed(bytes(least - 1))
    rng.seed(bytes(least))
    with pytest.raises(InvalidArgument, match=f"at least {least}"):
        rng.reseed(bytes(least - 1))
    rng.reseed(bytes(least))


def test_reseed_before_seed_is_refused(registry):
    with pytest.raises(InvalidArgument, match="reseed before seed"):
        registry.alloc_rng("drbg_nopr_sha256").reseed(FRESH)


def test_personalization_additional_and_entropy_lengths_are_bounded(registry):
    core = core_of(registry, "drbg_nopr_hmac_sha256", max_length=40)
    with pytest.raises(InvalidArgument, match="personalization of 41 bytes"):
        core.seed(SEED[:32], bytes(41))
    with pytest.raises(InvalidArgument, match="entropy input of 48 bytes"):
        core.seed(SEED, b"")
    core.seed(SEED[:40], b"")
    with pytest.raises(InvalidArgument, match="additional input of 41 bytes"):
        core.generate(8, bytes(41))
    with pytest.raises(InvalidArgument, match="additional input of 41 bytes"):
        core.reseed(FRESH, bytes(41))


@pytest.mark.parametrize(
    "driver", ["drbg_nopr_hmac_sha512", "drbg_nopr_sha256", "drbg_nopr_ctr_aes256"]
)
def test_reaching_the_reseed_interval_reseeds_from_the_source(registry, driver):
    """§9.3.1 step 7: reseed(entropy from the source, additional), then generate with a
    Null additional input; a twin doing the same by hand gives the same bytes."""
    auto = core_of(registry, driver, reseed_interval=2)
    auto.set_entropy_source(entropy_from([FRESH]))
    by_hand = core_of(registry, driver)
    for core in (auto, by_hand):
        core.seed(SEED, b"p")
    outputs = [auto.generate(40, b"a") for _ in range(3)]
    expected = [by_hand.generate(40, b"a") for _ in range(2)]
    by_hand.reseed(FRESH, b"a")
    expected.append(by_hand.generate(40, b""))
    assert outputs == expected


def test_prediction_resistance_draws_the_strength_for_every_request(registry):
    drawn = []
    rng = registry.alloc_rng("drbg_pr_ctr_aes192")
    rng.set_entropy_source(lambda size: drawn.append(size) or os.urandom(size))
    rng.seed(SEED[:36])
    for _ in range(3):
        rng.generate(16)
    assert drawn == [24, 24, 24]


def test_no_prediction_resistance_draws_nothing_once_seeded(registry):
    rng = registry.alloc_rng("drbg_nopr_ctr_aes192")
    rng.set_entropy_source(entropy_from([]))
    rng.seed(SEED[:36])
    rng.generate(16)
    rng.generate(16, b"more")


@pytest.mark.parametrize(
    "driver", ["drbg_nopr_hmac_sha256", "drbg_pr_sha384", "drbg_nopr_ctr_aes128"]
)
def test_an_unseeded_generator_seeds_itself_with_seedsize_bytes(registry, driver):
    rng, twin = registry.alloc_rng(driver), registry.alloc_rng(driver)
    drawn = []
    source = lambda size: drawn.append(size) or bytes(range(size))  # noqa: E731
    rng.set_entropy_source(source)
    twin.set_entropy_source(source)
    first = rng.generate(32)
    twin.seed(bytes(range(rng.seedsize)))
    assert first == twin.generate(32)
    assert drawn[0] == rng.seedsize


def test_the_unseeded_default_draws_from_os_urandom(registry, monkeypatch):
    asked = []
    real = os.urandom
    monkeypatch.setattr(os, "urandom", lambda n: asked.append(n) or real(n))
    rng = Rng(registry.lookup("drbg_nopr_hmac_sha512"))
    rng.generate(8)
    assert asked == [48]
