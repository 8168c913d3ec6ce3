"""The static manifest must say exactly what each provider and template module offers,
and at which priority, since lookups trust it to decide what to import and in what order."""

import importlib

import pytest

from cryptoapi.registry.manifest import PARTIAL, PROVIDERS, TEMPLATES, Manifest

MANIFEST = Manifest()


@pytest.mark.parametrize("module", sorted(PROVIDERS))
def test_provider_offers_what_the_manifest_says(module):
    registered = {(alg.name, alg.driver) for alg in importlib.import_module(module).ALGORITHMS}
    assert registered == set(PROVIDERS[module])


@pytest.mark.parametrize("module", sorted(PROVIDERS))
def test_provider_registers_at_the_priority_the_manifest_says(module):
    for alg in importlib.import_module(module).ALGORITHMS:
        # Several drivers of one name in one module (the DRBGs of stdrng) rank by driver.
        expected = PARTIAL.get(alg.driver, MANIFEST.priority_of(module, alg.name))
        assert expected == alg.priority, alg.driver


@pytest.mark.parametrize(("name", "module"), sorted(TEMPLATES.items()))
def test_template_modules_define_their_template(name, module):
    assert importlib.import_module(module).TEMPLATE.name == name


def test_reverse_indexes_list_the_best_provider_first():
    assert MANIFEST.modules_for("sha256-generic") == ("cryptoapi.providers.generic.sha256",)
    assert MANIFEST.modules_for("sha256") == (
        "cryptoapi.providers.openssl.hashes",
        "cryptoapi.providers.pycryptodome.hashes",
        "cryptoapi.providers.sodium.hashes",
        "cryptoapi.providers.wolfcrypt.hashes",
        "cryptoapi.providers.generic.sha256",
    )
    assert MANIFEST.offers_for("xchacha20")[0] == (200, "cryptoapi.providers.openssl.ciphers")
    assert MANIFEST.modules_for("hmac(sha384)") == ()  # built by the template only
