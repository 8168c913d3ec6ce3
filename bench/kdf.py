"""Key derivation: ``kdf108ctr(hmac(sha256))`` against ``cryptography``'s KBKDFHMAC (counter
mode, 32-bit counter before the fixed input Label || 0x00 || Context || [L]_32) and
``hkdf(hmac(sha256))`` against its HKDF, side by side, deriving 32, 64 and 1024 bytes.
Each is measured twice in one run: as the composition over OpenSSL's HMAC (the default
before issue 13) and as the default driver (now the one-piece OpenSSL driver). Then the
same KDF on the generic SHA-256: what building a KDF on the reference hash, as the
kernel's kdf108 once did, costs.

Ours keys the PRF once (``setkey``) and then derives; cryptography's objects are one-shot,
so they are made per derivation. The "setkey + derive" and "fixed_input + derive" rows
charge ours for the same work.

Run: ``python -m bench.kdf``.
"""

from functools import partial

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.kbkdf import KBKDFHMAC, CounterLocation, Mode

from bench.common import report, side_by_side
from cryptoapi import Kdf, Registry
from cryptoapi.templates.kdf108ctr import fixed_input

SIZES = (32, 64, 1024)
ROUNDS = 11  # best of: the machines are noisy
KEY = bytes(range(32))
SALT = bytes(range(32, 48))
LABEL, CONTEXT, INFO = b"label", b"context", b"info"
registry = Registry()  # the default policy: the first allocation runs the known-answer test


def kbkdf(length: int) -> bytes:
    return KBKDFHMAC(
        hashes.SHA256(), Mode.CounterMode, length, 4, 4, CounterLocation.BeforeFixed,
        LABEL, CONTEXT, None,
    ).derive(KEY)  # fmt: skip


def hkdf(length: int) -> bytes:
    return HKDF(hashes.SHA256(), length, SALT, INFO).derive(KEY)


def derive_with_fixed_input(kdf: Kdf, length: int) -> bytes:
    return kdf.derive(fixed_input(LABEL, CONTEXT, 8 * length), length)


def extract_and_expand(kdf: Kdf, length: int) -> bytes:
    kdf.setkey(KEY, salt=SALT)
    return kdf.derive(INFO, length)


def counter_mode(driver: str) -> None:
    kdf = registry.alloc_kdf(driver)
    kdf.setkey(KEY)
    print(f"kdf108ctr(hmac(sha256)) as {kdf.driver_name}")
    for length in SIZES:
        fixed = fixed_input(LABEL, CONTEXT, 8 * length)
        assert kdf.derive(fixed, length) == kbkdf(length)
        number = 20_000 if length < 1024 else 2_000
        goal = {32: "<= 0.5x", 1024: "<= 1.0x"}.get(length, "")
        peer = partial(kbkdf, length)
        ours, theirs = side_by_side(partial(kdf.derive, fixed, length), peer, number, ROUNDS)
        report(f"kdf108ctr derive {length} B", ours, theirs, "KBKDFHMAC", goal)
        ours, theirs = side_by_side(
            partial(derive_with_fixed_input, kdf, length), peer, number, ROUNDS
        )
        report(f"kdf108ctr fixed_input + derive {length} B", ours, theirs, "KBKDFHMAC")


def hkdf_mode(driver: str) -> None:
    kdf = registry.alloc_kdf(driver)
    kdf.setkey(KEY, salt=SALT)
    print(f"hkdf(hmac(sha256)) as {kdf.driver_name}")
    for length in SIZES:
        assert kdf.derive(INFO, length) == hkdf(length)
        number = 20_000 if length < 1024 else 2_000
        goal = "<= 1.0x" if length == 32 else ""
        peer = partial(hkdf, length)
        ours, theirs = side_by_side(partial(kdf.derive, INFO, length), peer, number, ROUNDS)
        report(f"hkdf derive (expand) {length} B", ours, theirs, "HKDF")
        ours, theirs = side_by_side(partial(extract_and_expand, kdf, length), peer, number, ROUNDS)
        report(f"hkdf setkey (extract) + derive {length} B", ours, theirs, "HKDF", goal)


def generic_vs_openssl() -> None:
    best = registry.alloc_kdf("kdf108ctr(hmac(sha256))")
    generic = registry.alloc_kdf("kdf108ctr(hmac(sha256-generic))")
    for kdf in (best, generic):
        kdf.setkey(KEY)
    for length in (32, 1024):
        fixed = fixed_input(LABEL, CONTEXT, 8 * length)
        ours, theirs = side_by_side(
            partial(generic.derive, fixed, length),
            partial(best.derive, fixed, length),
            200 if length < 1024 else 20,
            rounds=3,
        )
        report(f"{generic.driver_name} {length} B", ours, theirs, best.driver_name)


def main() -> None:
    # Before (the composition over OpenSSL's HMAC) and after (the default: since issue 13
    # the one-piece driver, the whole KDF in one OpenSSL call), in one run.
    for driver in ("kdf108ctr(hmac(sha256-openssl))", "kdf108ctr(hmac(sha256))"):
        counter_mode(driver)
    for driver in ("hkdf(hmac(sha256-openssl))", "hkdf(hmac(sha256))"):
        hkdf_mode(driver)
    generic_vs_openssl()


if __name__ == "__main__":
    main()
