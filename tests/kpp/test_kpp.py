"""The kpp transform against ``cryptography`` called directly (an independent
implementation), on every driver: public values in the kernel's formats, shared secrets
both ways, invalid peer values and private keys refused with typed errors, and the
transform's contract (no key in a repr, no pickling)."""

import copy
import pickle
import random

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, x25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

import cryptoapi
from cryptoapi import AlgType, InvalidArgument, InvalidKey, Registry
from cryptoapi.providers.generic.ecdh_nist import P256, P384
from tests.vectors import drivers_of

REG = Registry(selftests="off")
SEED = random.randrange(2**32)
CURVES = {"ecdh-nist-p256": (ec.SECP256R1(), P256), "ecdh-nist-p384": (ec.SECP384R1(), P384)}
X25519_P = 2**255 - 19
# Points of small order (RFC 7748 §6.1's all-zero check; the list at cr.yp.to/ecdh.html):
SMALL_ORDER_U = (
    0, 1, X25519_P - 1,
    325606250916557431795983626356110631294008115727848805560023387167927233504,
    39382357235489614581723060781553021112529911719440698176882885853963445705823,
)  # fmt: skip


def _raw(point: ec.EllipticCurvePublicKey) -> bytes:
    return point.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)[1:]


@pytest.mark.parametrize("driver", drivers_of("curve25519"))
def test_x25519_agrees_with_cryptography(driver):
    rng = random.Random(f"{SEED}:{driver}")
    for _ in range(5):
        ours, theirs = rng.randbytes(32), x25519.X25519PrivateKey.generate()
        tfm = REG.alloc_kpp(driver)
        tfm.setkey(ours)
        reference = x25519.X25519PrivateKey.from_private_bytes(ours)
        assert tfm.public_key() == reference.public_key().public_bytes_raw(), SEED
        peer = theirs.public_key().public_bytes_raw()
        assert tfm.shared_secret(peer) == theirs.exchange(reference.public_key()), SEED


@pytest.mark.parametrize("name", sorted(CURVES))
def test_ecdh_agrees_with_cryptography(name):
    curve, _ = CURVES[name]
    for driver in drivers_of(name):
        for _ in range(3):
            reference, theirs = ec.generate_private_key(curve), ec.generate_private_key(curve)
            size = (curve.key_size + 7) // 8
            tfm = REG.alloc_kpp(driver)
            tfm.setkey(reference.private_numbers().private_value.to_bytes(size, "big"))
            assert tfm.public_key() == _raw(reference.public_key())
            shared = tfm.shared_secret(_raw(theirs.public_key()))
            assert shared == theirs.exchange(ec.ECDH(), reference.public_key())


@pytest.mark.parametrize("name", ["curve25519", *sorted(CURVES)])
def test_generated_keys_agree_across_drivers(name):
    drivers = drivers_of(name)
    assert len(drivers) == 2
    alice, bob = REG.alloc_kpp(drivers[0]), REG.alloc_kpp(drivers[1])
    alice.setkey(None)
    bob.setkey(None)
    assert alice.shared_secret(bob.public_key()) == bob.shared_secret(alice.public_key())


@pytest.mark.parametrize("driver", drivers_of("curve25519"))
@pytest.mark.parametrize("u", SMALL_ORDER_U)
def test_x25519_small_order_points_are_refused(driver, u):
    peer = u.to_bytes(32, "little")
    with pytest.raises(ValueError):  # cryptography refuses them too
        x25519.X25519PrivateKey.generate().exchange(x25519.X25519PublicKey.from_public_bytes(peer))
    tfm = REG.alloc_kpp(driver)
    tfm.setkey(None)
    with pytest.raises(InvalidArgument, match="small order"):
        tfm.shared_secret(peer)


@pytest.mark.parametrize("name", sorted(CURVES))
def test_ecdh_refuses_points_off_the_curve_and_other_forms(name):
    _, params = CURVES[name]
    size = params.size
    g = params.gx.to_bytes(size, "big") + params.gy.to_bytes(size, "big")
    off = params.gx.to_bytes(size, "big") + (params.gy + 1).to_bytes(size, "big")
    for driver in drivers_of(name):
        tfm = REG.alloc_kpp(driver)
        tfm.setkey(None)
        tfm.shared_secret(g)
        with pytest.raises(InvalidArgument, match="not on the curve"):
            tfm.shared_secret(off)
        with pytest.raises(InvalidArgument, match="not on the curve"):
            tfm.shared_secret(bytes(2 * size))
        with pytest.raises(InvalidArgument, match="without the 0x04 prefix"):
            tfm.shared_secret(b"\x04" + g)


@pytest.mark.parametrize("name", sorted(CURVES))
def test_ecdh_private_keys_outside_1_to_n_minus_1_are_refused(name):
    _, params = CURVES[name]
    for driver in drivers_of(name):
        tfm = REG.alloc_kpp(driver)
        for d in (0, params.n, 2 ** (8 * params.size) - 1):
            with pytest.raises(InvalidKey):
                tfm.setkey(d.to_bytes(params.size, "big"))
        with pytest.raises(InvalidKey, match="-byte private key"):
            tfm.setkey(bytes(params.size + 1))
        tfm.setkey((params.n - 1).to_bytes(params.size, "big"))  # -G: x of G, y negated
        assert tfm.public_key()[: params.size] == params.gx.to_bytes(params.size, "big")


@pytest.mark.parametrize("driver", drivers_of("curve25519"))
def test_x25519_private_key_rules(driver):
    tfm = REG.alloc_kpp(driver)
    with pytest.raises(InvalidKey):
        tfm.setkey(bytes(32))  # all zero: refused, as the kernel does
    with pytest.raises(InvalidKey):
        tfm.setkey(bytes(31))
    with pytest.raises(TypeError):
        tfm.setkey("a string")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="no key"):
        tfm.public_key()


def test_a_refused_key_leaves_no_key():
    tfm = REG.alloc_kpp("curve25519-generic")
    tfm.setkey(bytes(range(32)))
    with pytest.raises(InvalidKey):
        tfm.setkey(bytes(32))
    with pytest.raises(InvalidArgument, match="no key"):
        tfm.public_key()


@pytest.mark.parametrize("name", ["curve25519", "ecdh-nist-p256", "ffdhe2048(dh)"])
def test_no_key_in_repr_and_no_pickling(name):
    tfm = REG.alloc_kpp(name)
    key = bytes(range(1, 33))
    tfm.setkey(key)
    assert key.hex() not in repr(tfm) and repr(key) not in repr(tfm)
    for clone in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TypeError, match="may hold a key"):
            clone(tfm)


def test_default_registry_and_listing():
    tfm = cryptoapi.alloc_kpp("curve25519")
    assert tfm.driver_name == "curve25519-openssl"
    assert cryptoapi.alloc_kpp("ffdhe2048(dh)").driver_name == "ffdhe2048(dh-openssl)"
    infos = {i.driver: i for i in REG.algorithms() if i.type is AlgType.KPP}
    assert {"curve25519-generic", "ecdh-nist-p384-openssl", "dh-generic"} <= set(infos)
    assert infos["dh-openssl"].sizes == {} and infos["dh-openssl"].keyed
    assert infos["dh-openssl"].as_dict()["type"] == "kpp"
