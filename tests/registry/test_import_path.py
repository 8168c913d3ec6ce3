"""A guard on the path from ``import cryptoapi`` to the first verified digest: the modules
it loads stay within a listed set (not a timing: a new import on that path fails here, and
whoever adds it decides whether the first digest should pay for it)."""

import json
import subprocess
import sys
from pathlib import Path

import cryptoapi.registry

FIRST_DIGEST = """
import json, sys
before = set(sys.modules)
import cryptoapi
assert cryptoapi.alloc_shash("sha256").digest(b"abc").hex().startswith("ba7816bf")
print(json.dumps(sorted(set(sys.modules) - before)))
"""

OURS = {
    "cryptoapi", "cryptoapi.errors", "cryptoapi._strenum", "cryptoapi.alg", "cryptoapi.names",
    "cryptoapi.registry", "cryptoapi.registry.registry", "cryptoapi.registry.algapi",
    "cryptoapi.registry.api", "cryptoapi.registry.sync",
    "cryptoapi.registry.manifest", "cryptoapi.registry.modules",
    "cryptoapi.selftest", "cryptoapi.selftest.kat", "cryptoapi.selftest.manager",
    "cryptoapi.selftest.vectors",
    "cryptoapi.transforms", "cryptoapi.transforms.base", "cryptoapi.transforms.shash",
    "cryptoapi.providers", "cryptoapi.providers.openssl", "cryptoapi.providers.openssl.hashes",
}  # fmt: skip
"""cryptoapi's own modules on the path: no other provider, no template (nor the template
builder), no fault injection, no fuzzer, no ``/proc/crypto`` view."""

USED = {
    "_hashlib",  # OpenSSL's sha256, the driver that answers
    "_json",  # the KAT file, through CPython's JSON scanner
    "errno", "__future__",
}  # fmt: skip
"""Standard modules the path really uses. Not among them, on purpose (each costs more to
import than hashlib): hashlib itself (it loads ``_blake2`` and probes every constructor;
the OpenSSL driver takes its constructors from ``_hashlib``), threading (the registry
waits through ``_thread`` until a thread must wait), enum (``cryptoapi._strenum``), json
and re, dataclasses, typing, functools, collections."""


def test_the_first_digest_loads_only_listed_modules():
    result = subprocess.run(
        [sys.executable, "-c", FIRST_DIGEST], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    loaded = set(json.loads(result.stdout))
    assert loaded - (OURS | USED) == set()
    assert loaded >= OURS  # the list is the real path, not a wish


FIRST_AEAD = """
import json, sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
before = set(sys.modules)
import cryptoapi
aead = cryptoapi.alloc_aead("gcm(aes)")
aead.setkey(bytes(16))
assert aead.encrypt(bytes(12), b"", b"") == AESGCM(bytes(16)).encrypt(bytes(12), b"", b"")
print(json.dumps(sorted(m for m in set(sys.modules) - before if m.startswith("cryptoapi"))))
"""

AEAD_PATH = (OURS - {"cryptoapi.providers.openssl.hashes"}) | {
    "cryptoapi.providers.openssl.aead", "cryptoapi.providers.records",
    "cryptoapi.transforms.aead", "cryptoapi.transforms.keyed",
}  # fmt: skip
"""cryptoapi's modules on the path to a first AES-GCM encryption: OpenSSL's AEAD driver and
the shape table it registers through; no generic provider (XChaCha20's HChaCha20 is in a
module of its own), no legacy-cipher or key-agreement table."""


def test_the_first_aead_loads_only_its_own_modules():
    result = subprocess.run(
        [sys.executable, "-c", FIRST_AEAD], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert set(json.loads(result.stdout)) == AEAD_PATH


HEAVY = ("typing", "dataclasses", "re", "inspect", "contextlib", "threading", "enum", "json")


def test_the_registry_itself_imports_no_heavy_module_at_run_time():
    """By source, so that a heavy import in a registry module not on the sha256 path
    (algboss, proc) is caught too; trace.py's dataclass is imported only when a trace is
    asked for."""
    for path in Path(cryptoapi.registry.__file__).parent.glob("*.py"):
        if path.name == "trace.py":
            continue
        for line in path.read_text().splitlines():  # module level only: no indent
            if line.startswith(("import ", "from ")):
                words = line.split()
                assert words[1].split(".")[0] not in HEAVY, (path.name, line)
