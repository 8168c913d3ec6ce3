"""``dh`` and the ``ffdheNNNN(dh)`` templates: RFC 7919's primes as published, every driver
against ``cryptography``'s DH called directly, the kpp.json DH vectors (derived, not
published) recomputed independently, and the value rules."""

import errno
import json
import random
import warnings
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import dh

from cryptoapi import InvalidArgument, InvalidKey, Registry
from cryptoapi.templates._ffdhe import GROUPS
from cryptoapi.transforms.dh_secret import HEADER_SIZE, decode_secret, encode_secret
from tests.vectors import drivers_of, load_testmgr

REG = Registry(selftests="off")
KPP_JSON = Path(__file__).parents[2] / "src/cryptoapi/selftest/vectors/kpp.json"

# RFC 7919 Appendix A.1, the hexadecimal value of the ffdhe2048 prime p.
FFDHE2048_P = int(
    "FFFFFFFFFFFFFFFFADF85458A2BB4A9AAFDC5620273D3CF1D8B9C583CE2D3695A9E13641146433FBCC939DCE249B3EF9"
    "7D2FE363630C75D8F681B202AEC4617AD3DF1ED5D5FD65612433F51F5F066ED0856365553DED1AF3B557135E7F57C935"
    "984F0C70E0E68B77E2A689DAF3EFE8721DF158A136ADE73530ACCA4F483A797ABC0AB182B324FB61D108A94BB2C8E3FB"
    "B96ADAB760D7F4681D4F42A3DE394DF4AE56EDE76372BB190B07A7C8EE0A6D709E02FCE1CDF7E2ECC03404CD28342F61"
    "9172FE9CE98583FF8E4F1232EEF28183C3FE3B1B4C6FAD733BB5FCBC2EC22005C58EF1837D1683B2C6F34A26C1B2EFFA"
    "886B423861285C97FFFFFFFFFFFFFFFF",
    16,
)


def _cryptography_dh(p: int, x: int) -> dh.DHPrivateKey:
    numbers = dh.DHParameterNumbers(p, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cryptography 50 deprecates FFDH
        return dh.DHPrivateNumbers(x, dh.DHPublicNumbers(pow(2, x, p), numbers)).private_key()


def _exchange(private: dh.DHPrivateKey, y: int) -> bytes:
    numbers = private.parameters().parameter_numbers()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return private.exchange(dh.DHPublicNumbers(y, numbers).public_key())


def test_ffdhe2048_prime_is_rfc7919s():
    assert GROUPS[2048].p == FFDHE2048_P


@pytest.mark.parametrize("bits", sorted(GROUPS))
def test_every_prime_has_rfc7919s_shape(bits):
    p = GROUPS[bits].p
    assert p.bit_length() == bits
    assert p >> (bits - 64) == 2**64 - 1 and p % 2**64 == 2**64 - 1


@pytest.mark.parametrize("bits", [2048, 3072, 4096])
def test_primes_are_safe_primes(bits):
    """Fermat tests of p and q = (p - 1)/2 in bases 3 and 5 (the large groups are left to
    their shape and the KATs: a test there costs seconds)."""
    p = GROUPS[bits].p
    q = (p - 1) // 2
    for base in (3, 5):
        assert pow(base, p - 1, p) == 1
        assert pow(base, q - 1, q) == 1


@pytest.mark.parametrize("bits", [2048, 3072])
def test_ffdhe_agrees_with_cryptography(bits):
    p = GROUPS[bits].p
    peer = _cryptography_dh(p, 0xC0FFEE << 200)
    peer_y = peer.public_key().public_numbers().y
    for driver in drivers_of(f"ffdhe{bits}(dh)"):
        tfm = REG.alloc_kpp(driver)
        tfm.setkey(None)
        shared = tfm.shared_secret(peer_y.to_bytes(bits // 8, "big"))
        y = int.from_bytes(tfm.public_key(), "big")
        assert len(shared) == bits // 8
        assert shared == _exchange(peer, y)


def _kpp_json_dh_vectors() -> list[dict[str, object]]:
    vectors = json.loads(KPP_JSON.read_text())
    return [v for v in vectors if str(v["alg"]).startswith(("dh", "ffdhe"))]


@pytest.mark.parametrize("vector", _kpp_json_dh_vectors(), ids=lambda v: str(v["alg"]))
def test_derived_kats_agree_with_cryptography(vector):
    """The DH KATs are derived (no published ffdhe vector is installed here): recompute
    each with cryptography's DH, independently of every driver."""
    private = bytes.fromhex(str(vector["private"]))
    if vector["alg"] == "dh":
        key = decode_secret(private)
        p, x = key.p, key.x
    else:
        p, x = GROUPS[int(str(vector["alg"])[5:9])].p, int.from_bytes(private, "big")
    if vector.get("fail"):
        with pytest.raises(ValueError):
            _exchange(_cryptography_dh(p, x), int(str(vector["peer"]), 16))
        return
    ours = _cryptography_dh(p, x)
    assert ours.public_key().public_numbers().y == int(str(vector["public"]), 16)
    assert _exchange(ours, int(str(vector["peer"]), 16)).hex() == vector["shared"]


@pytest.mark.parametrize("driver", drivers_of("ffdhe2048(dh)"))
def test_peer_values_outside_2_to_p_minus_2_are_refused(driver):
    p = GROUPS[2048].p
    tfm = REG.alloc_kpp(driver)
    tfm.setkey(None)
    for y in (0, 1, p - 1, p, p + 1, 2**2048 - 1):
        with pytest.raises(InvalidArgument, match=r"2\.\.p-2"):
            tfm.shared_secret(y.to_bytes(256, "big"))
    assert len(tfm.shared_secret((2).to_bytes(256, "big"))) == 256


@pytest.mark.parametrize("driver", drivers_of("ffdhe2048(dh)"))
def test_ffdhe_private_keys_outside_1_to_q_minus_1_are_refused(driver):
    q = (GROUPS[2048].p - 1) // 2
    tfm = REG.alloc_kpp(driver)
    for x in (0, q, q + 1):
        with pytest.raises(InvalidKey, match=r"1\.\.q-1"):
            tfm.setkey(x.to_bytes(256, "big"))
    with pytest.raises(InvalidKey, match="257-byte"):
        tfm.setkey(bytes(256) + b"\x01")
    tfm.setkey((q - 1).to_bytes(256, "big"))


@pytest.mark.parametrize("driver", drivers_of("dh"))
def test_dh_takes_the_kernels_packed_secret(driver):
    p = GROUPS[2048].p.to_bytes(256, "big")
    tfm = REG.alloc_kpp(driver)
    tfm.setkey(encode_secret(b"\x05", p, b"\x02"))
    assert int.from_bytes(tfm.public_key(), "big") == 32
    bad = {
        "short": b"\x01\x00\x10\x00",
        "type": b"\x02" + encode_secret(b"\x05", p, b"\x02")[1:],
        "small p": encode_secret(b"\x05", p[:128], b"\x02"),
        "g = 1": encode_secret(b"\x05", p, b"\x01"),
        "x = 0": encode_secret(b"\x00", p, b"\x02"),
        "key longer than p": encode_secret(bytes(257), p, b"\x02"),
    }
    for blob in bad.values():
        with pytest.raises(InvalidKey):
            tfm.setkey(blob)
    with pytest.raises(InvalidArgument, match="needs a group"):
        tfm.setkey(None)
    assert tfm.min_keysize == HEADER_SIZE


# --- dh with the group in the key: the kernel's testmgr vectors, cryptography, the rules --------

KERNEL = load_testmgr("kpp/data/testmgr_dh.json")


@pytest.mark.parametrize("driver", drivers_of("dh"))
@pytest.mark.parametrize("vector", KERNEL, ids=["vector 1", "vector 2"])
def test_kernel_testmgr_vectors(driver, vector):
    """``dh_tv_template`` as the kernel's testmgr runs it: the packed secret (key, a 2048-bit
    p and g = 2, little-endian header) verbatim, our public value, then the shared secret."""
    tfm = REG.alloc_kpp(driver)
    tfm.setkey(vector["secret"])
    assert tfm.public_key() == vector["expected_a_public"]
    assert tfm.shared_secret(vector["b_public"]) == vector["expected_ss"]


def _kernel_group() -> tuple[int, int]:
    key = decode_secret(KERNEL[0]["secret"])
    return key.p, key.g


def _packed(x: int, p: int, g: int) -> bytes:
    """The kernel's packed secret of x, p and g, each big-endian and as short as it can be
    (x and g no longer than p: ``__crypto_dh_decode_key``'s rule)."""

    def minimal(value: int) -> bytes:
        return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")

    return encode_secret(minimal(x), minimal(p), minimal(g))


@pytest.mark.parametrize("driver", drivers_of("dh"))
@pytest.mark.parametrize("g", [2, 0xC0FFEE])
def test_dh_agrees_with_cryptography_on_the_kernels_group(driver, g):
    """The kernel's group is no RFC 7919 one (the ffdhe tests cover those): random private
    keys with two generators, against cryptography's DH with these custom parameters
    (OpenSSL: independent of dh-generic; dh-openssl calls the same library through it)."""
    p, _ = _kernel_group()
    size = (p.bit_length() + 7) // 8
    rng = random.Random(f"{driver} {g}")  # a seed per case: a failure replays as it is
    x, peer_x = rng.randrange(2, p - 1), rng.randrange(2, p - 1)
    numbers = dh.DHParameterNumbers(p, g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cryptography 50 deprecates FFDH
        ours = dh.DHPrivateNumbers(x, dh.DHPublicNumbers(pow(g, x, p), numbers)).private_key()
    peer_y = pow(g, peer_x, p)
    tfm = REG.alloc_kpp(driver)
    tfm.setkey(_packed(x, p, g))
    # cryptography keeps the public value it is given: OpenSSL's g^x is an exchange with g
    assert tfm.public_key() == _exchange(ours, g)
    assert tfm.shared_secret(peer_y.to_bytes(size, "big")) == _exchange(ours, peer_y)


def _refusals() -> dict[str, bytes]:
    """Packed secrets every dh driver must refuse (``__crypto_dh_decode_key``,
    ``dh_check_params_length``, SP 800-56A rev3 §5.6.1.1.1), named by the rule they break."""
    secret = KERNEL[0]["secret"]
    p, g = _kernel_group()
    x = decode_secret(secret).x
    header = 16
    return {
        "empty": b"",
        "header only": secret[:header],
        "one byte short": secret[:-1],
        "one byte more": secret + b"\x00",
        "type 2": b"\x02" + secret[1:],
        "len of another blob": secret[:2] + (len(secret) + 1).to_bytes(2, "little") + secret[4:],
        "sizes past the end": secret[:8] + (257).to_bytes(4, "little") + secret[12:],
        "p of 1024 bits": _packed(x % (p >> 1024), p >> 1024 | 1, g),
        "p of 8200 bits": _packed(x, 1 << 8199 | 1, g),
        "p even": _packed(x, p - 1, g),
        "no p": encode_secret(b"\x05", b"", b""),
        "g = 0": _packed(x, p, 0),
        "g = 1": _packed(x, p, 1),
        "g = p - 1": _packed(x, p, p - 1),
        "g = p": _packed(x, p, p),
        "g longer than p": encode_secret(b"\x05", p.to_bytes(256, "big"), bytes(257)),
        "x = 0": _packed(0, p, g),
        "x = p - 1": _packed(p - 1, p, g),
        "x = p": _packed(p, p, g),
        "x longer than p": encode_secret(bytes(256) + b"\x05", p.to_bytes(256, "big"), b"\x02"),
    }


REFUSALS = _refusals()


@pytest.mark.parametrize("driver", drivers_of("dh"))
@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_dh_refuses_a_malformed_or_weak_secret(driver, case):
    """Each with InvalidKey (EINVAL) and a message that shows no key byte."""
    with pytest.raises(InvalidKey) as refused:
        REG.alloc_kpp(driver).setkey(REFUSALS[case])
    assert refused.value.errno == errno.EINVAL
    assert KERNEL[0]["secret"][16:24].hex() not in str(refused.value)


@pytest.mark.parametrize("driver", drivers_of("dh"))
def test_a_refused_secret_leaves_no_key(driver):
    """Not the key set before (the kernel's dh_set_secret clears its context first too)."""
    tfm = REG.alloc_kpp(driver)
    tfm.setkey(KERNEL[0]["secret"])
    with pytest.raises(InvalidKey):
        tfm.setkey(REFUSALS["x = p"])
    with pytest.raises(InvalidArgument, match="no key is set"):
        tfm.public_key()


@pytest.mark.parametrize("driver", drivers_of("dh"))
def test_dh_takes_the_bounds_of_each_range(driver):
    """The smallest and largest p (1536 and 8192 bits) and the edges of x and g are
    accepted."""
    p, _ = _kernel_group()
    tfm = REG.alloc_kpp(driver)
    for x, g in ((1, 2), (p - 2, 2), (5, p - 2)):
        tfm.setkey(_packed(x, p, g))
        assert int.from_bytes(tfm.public_key(), "big") == pow(g, x, p)
    small = GROUPS[2048].p >> 512 | 1  # odd, 1536 bits: the least p dh_check_params_length takes
    tfm.setkey(_packed(3, small, 2))
    assert tfm.public_key() == (8).to_bytes(192, "big")
    tfm.setkey(_packed(3, 1 << 8191 | 1, 2))  # odd, 8192 bits: ffdhe8192's size
    assert tfm.public_key() == (8).to_bytes(1024, "big")


def test_a_group_openssl_refuses_is_served_alike_by_every_driver():
    """OpenSSL keys safe-prime groups only; the kernel's dh takes any odd p of 1536 bits or
    more, so dh-openssl serves the rest as dh-generic does: a prime that is not safe, and an
    odd composite (the caller's group is the caller's business, as in the kernel)."""
    p, _ = _kernel_group()
    not_safe = 2**2203 - 1  # a Mersenne prime; (p - 1)/2 = 2^2202 - 1 is a multiple of 3
    composite = p + 2 * p  # 3p: odd, 2050 bits
    for group in (not_safe, composite):
        size = (group.bit_length() + 7) // 8
        answers = set()
        for driver in drivers_of("dh"):
            tfm = REG.alloc_kpp(driver)
            tfm.setkey(_packed(12345, group, 2))
            answers.add((tfm.public_key(), tfm.shared_secret((3).to_bytes(size, "big"))))
        assert answers == {(pow(2, 12345, group).to_bytes(size, "big"),
                            pow(3, 12345, group).to_bytes(size, "big"))}  # fmt: skip
