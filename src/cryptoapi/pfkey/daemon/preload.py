"""The PF_KEY preload library: ``pfkey_preload.c``, built on first use for ``pfkey-exec``.

The package ships the library's C source, not a binary: one binary would not fit every
C library and architecture the package is installed on. :func:`library` compiles it with
the system's C compiler (``$CC``, else ``cc``, else ``gcc``) into a per-user cache,
``$XDG_CACHE_HOME/cryptoapi`` (default ``~/.cache/cryptoapi``), as
``pfkey_preload-<key>.so``, where the key is the SHA-256 of the source and of the compiler's
``--version`` output: a changed source or an upgraded compiler builds anew, anything else
reuses the file. The build writes a temporary file in the cache and renames it into place,
so concurrent first uses never load a half-written library.

The cache is loaded into other programs (``LD_PRELOAD``), so it must be a directory of this
user that nobody else can write; otherwise, or without a compiler, or when the build fails,
:class:`PreloadError` says so in one line.
"""

import errno
import hashlib
import importlib.resources
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from cryptoapi.pfkey.errors import PfkeyError

SOURCE = "pfkey_preload.c"
"""The library's C source, package data next to this module."""

SOCKET_ENV = "CRYPTOAPI_KEYD_SOCKET"
"""The variable naming keyd's socket to the library (``SOCKET_ENV`` in the C source)."""

COMPILERS = ("cc", "gcc")
"""Tried in order when ``$CC`` is not set."""

FLAGS = ("-shared", "-fPIC", "-O2", "-Wall", "-Wextra")
"""No -Werror here: a newer compiler's new warning must not stop a user's build (the tests
build with -Werror)."""

BUILD_TIMEOUT = 120.0
"""Seconds a compiler gets: a first build takes well under one."""


class PreloadError(PfkeyError):
    """The preload library cannot be built or kept."""


def library(cache: Path | None = None) -> Path:
    """The built preload library, compiled first if the cache has none for this source
    and compiler."""
    compiler = find_compiler()
    source = read_source()
    folder = cache_dir() if cache is None else cache
    _make_private_dir(folder)
    target = folder / f"pfkey_preload-{build_key(source, compiler_version(compiler))}.so"
    if not target.exists():
        _build(compiler, source, target)
    return target


def read_source() -> bytes:
    """The C source shipped in the package."""
    return importlib.resources.files("cryptoapi.pfkey.daemon").joinpath(SOURCE).read_bytes()


def find_compiler() -> str:
    """The C compiler's path: ``$CC`` if set, else the first of ``COMPILERS`` on PATH."""
    wanted = os.environ.get("CC")
    for name in (wanted,) if wanted else COMPILERS:
        found = shutil.which(name)
        if found:
            return found
    named = f"$CC ({wanted})" if wanted else "cc or gcc"
    raise PreloadError(
        errno.ENOENT,
        f"no C compiler to build the PF_KEY preload library: {named} is not on PATH"
        " (install gcc, e.g. with scripts/system-deps)",
    )


def compiler_version(compiler: str) -> bytes:
    """What ``compiler --version`` prints: part of the cache key."""
    try:
        done = subprocess.run(
            [compiler, "--version"], capture_output=True, timeout=BUILD_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PreloadError(errno.ENOEXEC, f"{compiler} --version failed: {error}") from None
    return done.stdout


def build_key(source: bytes, version: bytes) -> str:
    """16 hex digits of SHA-256 over the source and the compiler's version."""
    digest = hashlib.sha256(hashlib.sha256(source).digest() + version)
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/cryptoapi``, else ``~/.cache/cryptoapi``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cryptoapi"


def _make_private_dir(folder: Path) -> None:
    """Create ``folder`` (mode 0700) if needed; refuse one another user owns or can write."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.stat(folder)
    except OSError as error:
        code = error.errno or errno.EACCES
        raise PreloadError(code, f"cannot use {folder}: {error.strerror}") from None
    if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise PreloadError(
            errno.EPERM,
            f"{folder} is not a private directory of this user: the preload library is not"
            " kept where others could replace it",
        )


def _build(compiler: str, source: bytes, target: Path) -> None:
    """Compile ``source`` into ``target`` through a temporary file renamed into place."""
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as work:
        source_file = Path(work) / SOURCE
        source_file.write_bytes(source)
        built = Path(work) / target.name
        command = [compiler, *FLAGS, "-o", str(built), str(source_file), "-ldl"]
        try:
            done = subprocess.run(command, capture_output=True, timeout=BUILD_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise PreloadError(errno.ENOEXEC, f"{compiler} failed: {error}") from None
        if done.returncode != 0:
            raise PreloadError(
                errno.ENOEXEC,
                f"{compiler} could not build the PF_KEY preload library: {_first_error(done)}",
            )
        os.replace(built, target)


def _first_error(done: "subprocess.CompletedProcess[bytes]") -> str:
    """The compiler's first line that says "error", else its last line."""
    lines = done.stderr.decode(errors="replace").splitlines() or [f"status {done.returncode}"]
    return next((line for line in lines if "error" in line), lines[-1]).strip()
