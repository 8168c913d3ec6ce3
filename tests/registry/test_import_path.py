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
    "cryptoapi", "cryptoapi.errors", "cryptoapi.alg", "cryptoapi.names",
    "cryptoapi.registry", "cryptoapi.registry.registry", "cryptoapi.registry.algapi",
    "cryptoapi.registry.algboss", "cryptoapi.registry.api", "cryptoapi.registry.larval",
    "cryptoapi.registry.manifest", "cryptoapi.registry.modules", "cryptoapi.registry.proc",
    "cryptoapi.selftest", "cryptoapi.selftest.fault", "cryptoapi.selftest.kat",
    "cryptoapi.selftest.manager", "cryptoapi.selftest.vectors",
    "cryptoapi.transforms", "cryptoapi.transforms.base", "cryptoapi.transforms.shash",
    "cryptoapi.providers", "cryptoapi.providers.openssl", "cryptoapi.providers.openssl.hashes",
}  # fmt: skip
"""cryptoapi's own modules on the path: no other provider, no template, no fuzzer."""

USED = {
    "hashlib", "_hashlib", "_blake2",  # OpenSSL's sha256, the driver that answers
    "threading", "_weakrefset",  # the registry's lock and condition
    "json", "json.decoder", "json.scanner", "json.encoder", "_json",  # the KAT file
    "enum", "types", "functools", "_functools", "operator", "_operator", "keyword",
    "reprlib", "collections", "_collections", "collections.abc", "itertools", "copyreg",
    "weakref", "errno", "__future__",
}  # fmt: skip
"""Standard modules the path really uses (or that those pull in)."""

OWED_TO_RECORDS = {
    "dataclasses", "inspect", "dis", "opcode", "_opcode", "ast", "_ast", "tokenize",
    "token", "linecache", "re", "re._casefix", "re._compiler", "re._constants",
    "re._parser", "_sre", "copy", "contextlib", "importlib", "importlib._bootstrap",
    "importlib._bootstrap_external", "importlib.machinery", "warnings",
    "typing", "typing.io", "typing.re", "_typing",
    "hmac",
}  # fmt: skip
"""Loaded only because ``alg.py``/``names.py`` define their records with ``@dataclass``
and ``typing`` at run time, and ``transforms/shash.py`` imports ``hmac`` for
``compare_digest``: to shrink when those modules change (the registry and self-test
manager import none of these)."""


def test_the_first_digest_loads_only_listed_modules():
    result = subprocess.run(
        [sys.executable, "-c", FIRST_DIGEST], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    loaded = set(json.loads(result.stdout))
    assert loaded - (OURS | USED | OWED_TO_RECORDS) == set()
    assert loaded >= OURS  # the list is the real path, not a wish


HEAVY = ("typing", "dataclasses", "re", "inspect", "contextlib")


def test_the_registry_itself_imports_no_heavy_module_at_run_time():
    """By source, since alg.py's imports would hide the registry's at run time; trace.py's
    dataclass is imported only when a trace is asked for."""
    for path in Path(cryptoapi.registry.__file__).parent.glob("*.py"):
        if path.name == "trace.py":
            continue
        for line in path.read_text().splitlines():  # module level only: no indent
            if line.startswith(("import ", "from ")):
                words = line.split()
                assert words[1].split(".")[0] not in HEAVY, (path.name, line)
