"""Names people type: spellings of a real name resolve to it; other libraries' names and
near misses fail with ENOENT and a "did you mean"; canonical lookups never load the
alias code."""

import errno
import subprocess
import sys

import pytest

from cryptoapi import AlgorithmNotFound, Registry
from cryptoapi.alg import Template

REGISTRY = Registry("off")


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("SHA256", "sha256"),
        ("sha-256", "sha256"),
        ("SHA-512", "sha512"),
        ("sha3_256", "sha3-256"),
        ("SHA3-256", "sha3-256"),
        ("HMAC(SHA-256)", "hmac(sha256)"),
        ("gcm(AES)", "gcm(aes)"),
        ("Curve25519", "curve25519"),
    ],
)
def test_a_spelling_of_a_real_name_resolves_silently(typed, canonical):
    alg = REGISTRY.lookup(typed)
    assert alg is REGISTRY.lookup(canonical)
    assert alg.name == canonical  # what the rest of the API speaks


def test_a_spelling_of_a_driver_returns_that_driver():
    assert REGISTRY.lookup("SHA256-Generic").driver == "sha256-generic"


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [
        ("x25519", "curve25519"),
        ("X25519", "curve25519"),
        ("chacha20poly1305", "rfc7539(chacha20,poly1305)"),
        ("ChaCha20-Poly1305", "rfc7539(chacha20,poly1305)"),
        ("aes-gcm", "gcm(aes)"),
        ("AES-GCM", "gcm(aes)"),
        ("AESGCM", "gcm(aes)"),
        ("aes-256-gcm", "gcm(aes)"),
        ("aes-cbc", "cbc(aes)"),
        ("hmac-sha256", "hmac(sha256)"),
        ("blake2b", "blake2b-512"),
        ("gcm", "gcm(aes)"),
        ("sha265", "sha256"),
    ],
)
def test_another_name_is_only_suggested(typed, suggested):
    with pytest.raises(AlgorithmNotFound) as caught:
        REGISTRY.lookup(typed)
    assert caught.value.errno == errno.ENOENT
    assert str(caught.value) == (
        f"no usable algorithm or driver named {typed!r}; did you mean {suggested!r}?"
    )


def test_the_message_names_the_type_asked_for():
    with pytest.raises(AlgorithmNotFound, match=r"no usable kpp algorithm .*'curve25519'\?$"):
        REGISTRY.alloc_kpp("x25519")


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("hmac(sha265)", "no algorithm 'sha265' (in 'hmac(sha265)'); did you mean 'sha256'?"),
        ("cbc(3des)", "no algorithm '3des' (in 'cbc(3des)'); did you mean 'des3_ede'?"),
        (
            "authenc(hmac(sha1),cbc(aes-cbc))",
            "no algorithm 'aes-cbc' (in 'authenc(hmac(sha1),cbc(aes-cbc))'); "
            "did you mean 'cbc(aes)'?",
        ),
        ("hmca(sha256)", "no template 'hmca' (in 'hmca(sha256)'); did you mean 'hmac'?"),
        ("hmac(sha999)", "no algorithm 'sha999' (in 'hmac(sha999)')"),
    ],
)
def test_an_unknown_inner_word_is_named_with_the_whole_name(typed, message):
    with pytest.raises(AlgorithmNotFound) as caught:
        REGISTRY.alloc_shash(typed)
    assert str(caught.value) == message
    assert caught.value.errno == errno.ENOENT


def test_nothing_close_gets_no_suggestion():
    with pytest.raises(AlgorithmNotFound) as caught:
        REGISTRY.lookup("sha999")
    assert str(caught.value) == "no usable algorithm or driver named 'sha999'"


def test_known_words_in_a_combination_that_does_not_exist_keep_the_message():
    """Every word is real (a hash where a cipher goes): no word to blame or respell."""
    with pytest.raises(AlgorithmNotFound) as caught:
        REGISTRY.alloc_aead("sha256")
    assert str(caught.value) == "no usable aead algorithm or driver named 'sha256'"


def test_a_respelled_answer_is_cached_with_the_canonical_one():
    registry = Registry("off")
    alg = registry.lookup("SHA-1")
    assert registry.lookup("SHA-1") is alg is registry.lookup("sha1")
    assert registry.alloc_shash("Sha1").driver_name == alg.driver


def test_a_users_template_is_a_known_word():
    registry = Registry("off")
    registry.register_template(Template(name="mine", create=_refuse))
    with pytest.raises(AlgorithmNotFound) as caught:
        registry.lookup("mine(sha256)")
    assert str(caught.value) == "mine refuses"  # its own error, not "no template 'mine'"


def _refuse(lookup, args):
    raise AlgorithmNotFound("mine refuses")


def test_canonical_lookups_never_load_the_alias_code():
    code = (
        "import sys, cryptoapi\n"
        "cryptoapi.alloc_shash('sha256'); cryptoapi.alloc_shash('hmac(sha256)')\n"
        "assert 'cryptoapi.registry.aliases' not in sys.modules\n"
        "cryptoapi.alloc_shash('SHA256')\n"
        "assert 'cryptoapi.registry.aliases' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
