"""The static manifest must say exactly what each provider and template module offers,
since lookups trust it to decide what to import."""

import importlib

import pytest

from cryptoapi.registry.manifest import PROVIDERS, TEMPLATES, Manifest


@pytest.mark.parametrize("module", sorted(PROVIDERS))
def test_provider_offers_what_the_manifest_says(module):
    registered = {(alg.name, alg.driver) for alg in importlib.import_module(module).ALGORITHMS}
    assert registered == set(PROVIDERS[module])


@pytest.mark.parametrize(("name", "module"), sorted(TEMPLATES.items()))
def test_template_modules_define_their_template(name, module):
    assert importlib.import_module(module).TEMPLATE.name == name


def test_reverse_indexes():
    manifest = Manifest()
    assert manifest.modules_for("sha256-generic") == ("cryptoapi.providers.generic.sha256",)
    assert set(manifest.modules_for("sha256")) == {
        "cryptoapi.providers.generic.sha256",
        "cryptoapi.providers.openssl.hashes",
        "cryptoapi.providers.pycryptodome.hashes",
    }
    assert manifest.modules_for("hmac(sha256)") == ()
