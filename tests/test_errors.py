import errno

import pytest

import cryptoapi
from cryptoapi import errors
from tests.imports import type_checked


@pytest.mark.parametrize(
    ("cls", "code", "bases"),
    [
        (errors.AlgorithmNotFound, errno.ENOENT, (LookupError,)),
        (errors.InvalidArgument, errno.EINVAL, (ValueError,)),
        (errors.InvalidKey, errno.EINVAL, (ValueError, errors.InvalidArgument)),
        (errors.BadMessage, errno.EBADMSG, ()),
        (errors.SelfTestFailed, errno.ELIBBAD, ()),
        (errors.LookupTimeout, errno.ETIMEDOUT, ()),
        (errors.AlgorithmExists, errno.EEXIST, ()),
        (errors.FipsError, errno.ENOTRECOVERABLE, ()),
        (errors.NotApproved, errno.ENOENT, (LookupError, errors.AlgorithmNotFound)),
    ],
)
def test_errno_and_bases(cls, code, bases):
    error = cls("what went wrong")
    assert error.errno == code
    assert isinstance(error, errors.CryptoError)
    for base in bases:
        assert isinstance(error, base)
    assert str(error) == "what went wrong"


def test_public_exports_are_guarded():
    expected = {
        "PRIORITY_GENERIC", "PRIORITY_OPENSSL", "PRIORITY_PURE", "AlgInfo", "AlgType",
        "Algorithm", "AlgorithmExists", "AlgorithmNotFound", "BadMessage", "CryptoError",
        "HashDesc", "InvalidArgument", "InvalidKey", "LookupTimeout", "Registry", "SelfTest",
        "SelfTestFailed", "Shash", "Template", "algorithms", "alloc_shash", "default_registry",
        "instance", "lookup", "register", "unkeyed_shash", "unregister", "Aead", "Cipher",
        "Skcipher", "Native", "NeedFallback", "alloc_aead", "alloc_cipher", "alloc_skcipher",
        "Kdf", "alloc_kdf", "kdf108_fixed_input", "Kpp", "alloc_kpp", "Rng", "alloc_rng",
        "get_random_bytes", "FipsError", "NotApproved", "fips_enabled",
    }  # fmt: skip
    assert set(cryptoapi.__all__) == expected
    for name in expected:
        assert hasattr(cryptoapi, name)


def test_type_checkers_see_each_lazy_name_where_it_is_loaded_from():
    """The imports under ``TYPE_CHECKING`` mirror the lazy table (``_LAZY``), the one list
    ``__all__`` and ``__getattr__`` are derived from."""
    lazy = set(cryptoapi._LAZY_FROM.values())  # (module, attribute)
    seen = {(module, name) for module, name in type_checked(cryptoapi) if module != "types"}
    assert seen - {("collections.abc", "Callable")} == lazy
    assert set(cryptoapi._LAZY_FROM) <= set(cryptoapi.__all__)
