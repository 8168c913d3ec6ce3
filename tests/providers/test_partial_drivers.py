"""Every library's driver of every name with partial drivers (libsodium's AES-256-GCM,
wolfCrypt's GCM and counters, OpenSSL's GCM IVs, AES-192-XTS, key-wrap IVs and one-piece
ESP drivers, pycryptodome's) over every tag length, key size and IV length the name allows.

On its own (no fallback) a driver either gives the reference's answer or asks for a fallback
(NeedFallback), never another error; through the transform, with its fallback, it always
gives the reference's answer, and rejects a forged tag. Issue 26: libsodium's GCM cannot
make 8- or 12-byte tags, and a driver that cannot serve a combination must say so with
NeedFallback, not fail the call.
"""

import random

import pytest

from cryptoapi import AlgType, InvalidKey, Registry
from cryptoapi.selftest.fuzz import reference_for
from cryptoapi.selftest.fuzz.cases import KW_DEFAULT_IV, Case
from cryptoapi.selftest.fuzz.engine import ABSTAINS, _vote, compare, run_case
from cryptoapi.transforms.aead import assoc_sizes

NAMES = (
    "gcm(aes)", "rfc4106(gcm(aes))", "rfc4543(gcm(aes))", "ccm(aes)", "rfc4309(ccm(aes))",
    "rfc7539(chacha20,poly1305)", "rfc7539esp(chacha20,poly1305)", "xchacha20poly1305",
    "xts(aes)", "ctr(aes)", "rfc3686(ctr(aes))", "chacha20", "xchacha20", "kw(aes)",
    "cbc(des3_ede)",
)  # fmt: skip

LONG_IVS = (32, 64, 128, 129)
"""IV lengths past the short ones, at OpenSSL's GCM limit (128) and just past it."""


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry("off")


def key_sizes(registry: Registry, name: str) -> list[int]:
    """The key sizes the name allows: those its reference takes, from min to max."""
    ref = reference_for(registry, registry.lookup(name))
    sizes = []
    for size in range(ref.min_keysize, ref.max_keysize + 1):
        try:
            registry.new_transform(ref).setkey(bytes(range(size)))
        except InvalidKey:
            continue
        sizes.append(size)
    return sizes


def keys(registry: Registry, name: str, rng: random.Random) -> list[bytes]:
    made = [rng.randbytes(size) for size in key_sizes(registry, name)]
    if name == "cbc(des3_ede)":  # K1 == K2: a key some libraries refuse (NeedFallback)
        half = rng.randbytes(8)
        made.append(half + half + rng.randbytes(8))
    return made


def ivs(alg_name: str, low: int, high: int, rng: random.Random) -> list[bytes]:
    """Every short IV length the name allows and the long ones; for counters, an IV at the
    end of its block counter too (where a library may wrap differently)."""
    shown = (*range(low, min(high, 20) + 1), high, *LONG_IVS)
    lengths = [n for n in shown if low <= n <= min(high, LONG_IVS[-1])]
    made = [rng.randbytes(n) for n in dict.fromkeys(lengths)]
    if alg_name == "kw(aes)":
        made.append(KW_DEFAULT_IV)
    elif alg_name == "chacha20":
        made.append(b"\xff" * 4 + rng.randbytes(12))
    elif alg_name == "xchacha20":
        made.append(rng.randbytes(24) + b"\xff" * 8)
    elif alg_name == "ctr(aes)":
        made.append(b"\xff" * 16)
    return made


def cases(registry: Registry, name: str) -> list[Case]:
    alg = registry.lookup(name)
    rng = random.Random(name)
    low, high = alg.ivsizes or (alg.ivsize, alg.ivsize)
    if alg.type is AlgType.AEAD:
        assoc = rng.randbytes((assoc_sizes(name) or (20,))[0])
        made = [
            Case(0, key=key, iv=iv, data=rng.randbytes(33), assoc=assoc, authsize=authsize,
                 tamper="tag")
            for key in keys(registry, name, rng)
            for iv in ivs(name, low, high, rng)
            for authsize in alg.authsizes or (alg.maxauthsize,)
        ]  # fmt: skip
        return made
    size = 150 if alg.blocksize == 1 else 48  # streams past the 64-byte block at the wrap
    return [
        Case(0, key=key, iv=iv, data=rng.randbytes(size))
        for key in keys(registry, name, rng)
        for iv in ivs(name, low, high, rng)
    ]


@pytest.mark.parametrize("name", NAMES)
def test_every_library_driver_serves_every_allowed_size_or_asks_for_a_fallback(registry, name):
    drivers = [
        d for d in registry.implementations(name) if registry.lookup(d).provider != "generic"
    ]
    if not drivers:
        pytest.skip(f"no library driver of {name} is installed")
    holes = []
    for case in cases(registry, name):
        for driver in drivers:
            impl = registry.lookup(driver)
            ref = reference_for(registry, impl)
            found = compare(registry.new_transform, impl, ref, case)
            if found is not None:
                holes.append(f"{driver}, {case.describe()}: {found[0]} (reference: {found[1]})")
                continue
            alone = _vote(registry.new_transform, impl, case)
            if alone is not ABSTAINS and alone != run_case(registry.new_transform(ref), ref, case):
                holes.append(f"{driver} alone, {case.describe()}: {alone}")
    assert holes == []
