"""Providers load best first: a lookup imports the best provider of a name, and a lower one
only when the better ones are unusable; an absent optional dependency is tried once."""

import os
import subprocess
import sys
import textwrap

import pytest

from cryptoapi import Registry
from cryptoapi.registry import modules
from cryptoapi.registry.manifest import Manifest


def run(code, **env):
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, check=False, env={**os.environ, **env},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


FIRST_SHA256 = """
    import sys
    import cryptoapi
    h = cryptoapi.alloc_shash("sha256")
    assert h.digest(b"abc").hex().startswith("ba7816bf")
    loaded = sorted(m for m in sys.modules if m.startswith("cryptoapi.providers."))
    print(h.driver_name, "Crypto" in sys.modules, "cffi" in sys.modules, *loaded)
"""


def test_the_first_sha256_imports_only_the_best_provider():
    driver, crypto, cffi, *loaded = run(FIRST_SHA256, CRYPTOAPI_SELFTESTS="lazy")
    assert driver == "sha256-openssl"
    assert (crypto, cffi) == ("False", "False")
    assert loaded == ["cryptoapi.providers.openssl", "cryptoapi.providers.openssl.hashes"]


def pycryptodome_installed():
    try:
        import Crypto  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True


def test_a_failed_best_one_loads_the_next_provider_before_answering():
    driver, *_ = run(
        FIRST_SHA256, CRYPTOAPI_SELFTESTS="lazy", CRYPTOAPI_BREAK_SELFTEST="sha256-openssl"
    )
    assert driver == ("sha256-pycryptodome" if pycryptodome_installed() else "sha256-generic")


def test_with_the_next_ones_failed_too_the_generic_one_answers():
    broken = "sha256-openssl,sha256-pycryptodome,sha256-sodium,sha256-wolfcrypt"
    driver, *_ = run(FIRST_SHA256, CRYPTOAPI_SELFTESTS="lazy", CRYPTOAPI_BREAK_SELFTEST=broken)
    assert driver == "sha256-generic"


def test_a_better_provider_not_yet_loaded_wins_over_a_loaded_lower_one():
    reg = Registry("off")
    assert reg.lookup("sha256-generic").driver == "sha256-generic"  # loads generic only
    assert reg.lookup("sha256").driver == "sha256-openssl"


def test_a_template_loads_its_inner_names_best_first():
    _, _, _, *loaded = run(
        """
        import sys
        import cryptoapi
        mac = cryptoapi.alloc_shash("hmac(sha256)")
        assert mac.driver_name == "hmac(sha256-openssl)", mac.driver_name
        loaded = [m for m in sys.modules if m.startswith("cryptoapi.providers.")]
        print("-", "-", "-", *sorted(loaded))
        """
    )
    assert "cryptoapi.providers.openssl.hashes" in loaded
    assert not [m for m in loaded if ".pycryptodome." in m or ".generic." in m]


ABSENT_PROVIDER = """
import builtins
builtins.absent_provider_tries = getattr(builtins, "absent_provider_tries", 0) + 1
import no_such_optional_dependency_for_cryptoapi  # noqa: F401
"""


@pytest.fixture
def absent_provider(tmp_path, monkeypatch):
    """A provider module whose optional dependency is missing, offering sha256 at 500."""
    name = "absent_provider_for_cryptoapi_tests"
    (tmp_path / f"{name}.py").write_text(ABSENT_PROVIDER)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(modules, "_ABSENT", set())
    import builtins

    monkeypatch.setattr(builtins, "absent_provider_tries", 0, raising=False)
    providers = {
        name: (("sha256", "sha256-absent"),),
        "cryptoapi.providers.openssl.hashes": (("sha256", "sha256-openssl"),),
    }
    priorities = {name: 500, "cryptoapi.providers.openssl.hashes": 300}
    return Manifest(providers=providers, priorities=priorities), builtins


def test_an_absent_optional_dependency_is_tried_once_per_process(absent_provider):
    manifest, builtins = absent_provider
    for _ in range(3):
        reg = Registry("off", manifest=manifest)
        assert reg.lookup("sha256").driver == "sha256-openssl"
    assert builtins.absent_provider_tries == 1


FIRST_GCM = """
    import sys
    import cryptoapi
    gcm = cryptoapi.alloc_aead("gcm(aes)")
    gcm.setkey(bytes(16))
    assert gcm.encrypt(bytes(12), b"", b"").hex() == "58e2fccefa7e3061367f1d57a4e7455a"
    print(gcm.driver_name, "cryptoapi.templates.gcm" in sys.modules)
"""


def test_a_one_piece_driver_no_instance_can_outrank_answers_without_building_the_template():
    """gcm-aes-openssl (300) ranks at the highest priority offered, so no gcm instance
    (priority: the mean of its inner algorithms') could beat it: the template is not even
    imported, as the kernel instantiates a template only for a name nothing answers. (The
    tag is SP 800-38D / McGrew-Viega test case 1.)"""
    assert run(FIRST_GCM, CRYPTOAPI_SELFTESTS="lazy") == ["gcm-aes-openssl", "False"]


def test_an_inner_algorithm_above_every_provider_makes_the_template_instance_win():
    registry = Registry(selftests="lazy")
    fast = registry.lookup("aes-generic").replace(driver="aes-fast", priority=900)
    registry.register(fast)
    chosen = registry.lookup("gcm(aes)")
    assert chosen.driver == "gcm(aes-fast)"
    assert chosen.priority > registry.lookup("gcm-aes-openssl").priority
