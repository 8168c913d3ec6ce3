"""The package's integrity self-check (FIPS 140-3 §7.10.2, the pre-operational software
integrity test), as ``openssl fipsinstall`` and the OpenSSL FIPS provider do it.

``cryptoapi fips-install`` computes an HMAC-SHA-256 over the installed package's files and
writes it, in hex, to ``fips.mac`` beside them (in the package directory). In FIPS mode,
before any algorithm is offered, the MAC is computed again and compared; a missing or
different MAC puts every FIPS registry in the error state.

What it covers: every ``*.py`` and ``*.json`` file under the package directory (sources,
self-test vectors, the manifest), each as its relative path, its length and its bytes, in
sorted order, so a renamed, added, removed or edited file changes the MAC.

What it protects against, and what not: it detects accidental change (a half-applied
upgrade, a corrupted disk, a file edited by mistake), and reports it before any service
runs. It is a self-check, not a signature: the key is fixed and public (as OpenSSL's
default ``fipsinstall`` key is), so anyone who can write the files can write a matching
MAC; it does not cover the interpreter, the C libraries the providers call (OpenSSL,
libsodium...), bytecode caches, or anything imported from outside the package. Protecting
against a deliberate attacker needs a signed package and a verified boot chain.

``CRYPTOAPI_FIPS_MAC`` names another MAC file (tests, read-only installs); the check runs
once per process and its outcome is kept.
"""

from __future__ import annotations

import os

MAC_FILE = "fips.mac"
INTEGRITY_KEY = b"cryptoapi fips-install self-check key"
"""Fixed and public: the MAC detects change, it does not authenticate (see above)."""
COVERED = (".py", ".json")

_outcome: list[str | None] = []  # the first check's failure (None: passed), once checked


def package_dir() -> str:
    """The directory of the installed ``cryptoapi`` package."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def mac_path(root: str | None = None) -> str:
    """Where the MAC is written and read: ``CRYPTOAPI_FIPS_MAC``, else beside the files."""
    return os.environ.get("CRYPTOAPI_FIPS_MAC") or os.path.join(root or package_dir(), MAC_FILE)


def covered_files(root: str) -> list[str]:
    """The covered files' paths relative to ``root``, sorted (caches skipped)."""
    found = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = [d for d in subdirectories if d != "__pycache__"]
        for name in files:
            if name.endswith(COVERED):
                found.append(os.path.relpath(os.path.join(directory, name), root))
    return sorted(found)


def compute(root: str | None = None) -> str:
    """The HMAC-SHA-256 (hex) of the package at ``root`` (default: this one)."""
    import hmac

    root = root or package_dir()
    mac = hmac.new(INTEGRITY_KEY, digestmod="sha256")
    for relative in covered_files(root):
        with open(os.path.join(root, relative), "rb") as file:
            data = file.read()
        mac.update(b"%s\0%d\0" % (relative.encode(), len(data)))
        mac.update(data)
    return mac.hexdigest()


def install(root: str | None = None) -> str:
    """Compute the MAC of the package at ``root`` and write it to its MAC file; returns
    the file's path."""
    root = root or package_dir()
    path = mac_path(root)
    with open(path, "w") as file:
        file.write(compute(root) + "\n")
    return path


def failure(root: str | None = None) -> str | None:
    """Why the integrity check fails (a missing or different MAC), or None if it passes."""
    import hmac

    path = mac_path(root)
    try:
        with open(path) as file:
            expected = file.read().strip()
    except OSError as error:
        return f"no integrity MAC at {path} ({error.strerror}); run 'cryptoapi fips-install'"
    if not hmac.compare_digest(expected, compute(root)):
        return f"the package's files do not match the integrity MAC in {path}"
    return None


def check_at_import() -> None:
    """Run the check when ``import cryptoapi`` finds FIPS mode requested, before any
    algorithm is offered (its outcome then awaits the first FIPS registry)."""
    from cryptoapi.selftest.manager import fips_from

    if fips_from(None):
        checked()


def checked() -> str | None:
    """:func:`failure` of this package, computed on the first call of the process only."""
    if not _outcome:
        _outcome.append(failure())
    return _outcome[0]
