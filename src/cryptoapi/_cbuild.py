"""C sources the package ships, compiled on first use into a private per-user cache.

The package ships C source, not binaries: one binary would not fit every C library and
architecture the package is installed on. :func:`built` compiles a source with the
system's C compiler (``$CC``, else ``cc``, else ``gcc``) into ``$XDG_CACHE_HOME/cryptoapi``
(default ``~/.cache/cryptoapi``), as ``<stem>-<key><suffix>``, where the key is the SHA-256
of the source, of the compiler's ``--version`` output and of what else the caller says the
binary depends on (the Python it is an extension of): a changed source or an upgraded
compiler builds anew, anything else reuses the file. The build writes a temporary file in
the cache and renames it into place, so concurrent first uses never load a half-written
binary.

What is built there is loaded into processes (``LD_PRELOAD``, an extension module), so the
cache must be a directory of this user that nobody else can write; otherwise, or without a
compiler, or when the build fails, :class:`BuildError` says so in one line.
"""

import errno
import hashlib
import importlib.machinery
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from cryptoapi.errors import CryptoError

COMPILERS = ("cc", "gcc")
"""Tried in order when ``$CC`` is not set."""

FLAGS = ("-shared", "-fPIC", "-O2", "-Wall", "-Wextra")
"""No -Werror here: a newer compiler's new warning must not stop a user's build (the tests
build with -Werror)."""

BUILD_TIMEOUT = 120.0
"""Seconds a compiler gets: a first build takes about a second."""


class BuildError(CryptoError):
    """A shipped C source cannot be built or kept; ``errno`` says why."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.errno = code


def built(
    source: bytes,
    name: str,
    *,
    what: str,
    options: Sequence[str] = (),
    depends: bytes = b"",
    suffix: str = ".so",
    cache: Path | None = None,
) -> Path:
    """The binary of ``source`` (the file ``name``, which ``what`` describes in errors),
    compiled with :data:`FLAGS` and ``options`` first if the cache has none for this
    source, compiler and ``depends``."""
    compiler = find_compiler(what)
    folder = cache_dir() if cache is None else cache
    _make_private_dir(folder, what)
    key = build_key(source, compiler_version(compiler) + depends + " ".join(options).encode())
    target = folder / f"{Path(name).stem}-{key}{suffix}"
    if not target.exists():
        _build(compiler, source, name, target, options=options, what=what)
    return target


def extension(
    source: bytes, name: str, module: str, *, what: str, libraries: Sequence[str] = ()
) -> ModuleType:
    """The Python extension ``module`` built from ``source`` (the file ``name``) against this
    Python's headers and linked with ``libraries`` (``-l`` options), built first if the
    cache has none for this source, compiler and Python. ModuleNotFoundError naming the
    reason if it cannot be built or loaded, which callers take as an optional library
    missing."""
    include = sysconfig.get_paths()["include"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    try:
        path = built(
            source, name, what=what, options=(f"-I{include}", *libraries),
            depends=sys.version.encode(), suffix=suffix,
        )  # fmt: skip
    except BuildError as error:
        raise ModuleNotFoundError(f"{module}: {error}", name=module) from None
    loader = importlib.machinery.ExtensionFileLoader(module, str(path))
    spec = importlib.machinery.ModuleSpec(module, loader, origin=str(path))
    try:
        made = loader.create_module(spec)
        loader.exec_module(made)
    except ImportError as error:  # an unloadable file: a library missing since the build
        raise ModuleNotFoundError(f"{module}: {error}", name=module) from None
    return made


def find_compiler(what: str) -> str:
    """The C compiler's path: ``$CC`` if set, else the first of ``COMPILERS`` on PATH."""
    wanted = os.environ.get("CC")
    for name in (wanted,) if wanted else COMPILERS:
        found = shutil.which(name)
        if found:
            return found
    named = f"$CC ({wanted})" if wanted else "cc or gcc"
    raise BuildError(
        errno.ENOENT,
        f"no C compiler to build {what}: {named} is not on PATH"
        " (install gcc, e.g. with scripts/system-deps)",
    )


def compiler_version(compiler: str) -> bytes:
    """What ``compiler --version`` prints: part of the cache key."""
    try:
        done = subprocess.run(
            [compiler, "--version"], capture_output=True, timeout=BUILD_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BuildError(errno.ENOEXEC, f"{compiler} --version failed: {error}") from None
    return done.stdout


def build_key(source: bytes, version: bytes) -> str:
    """16 hex digits of SHA-256 over the source and ``version``: the compiler's, with what
    else the binary depends on and the options it is built with."""
    digest = hashlib.sha256(hashlib.sha256(source).digest() + version)
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/cryptoapi``, else ``~/.cache/cryptoapi``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cryptoapi"


def _make_private_dir(folder: Path, what: str) -> None:
    """Create ``folder`` (mode 0700) if needed; refuse one another user owns or can write."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.stat(folder)
    except OSError as error:
        code = error.errno or errno.EACCES
        raise BuildError(code, f"cannot use {folder}: {error.strerror}") from None
    if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise BuildError(
            errno.EPERM,
            f"{folder} is not a private directory of this user: {what} is not kept where"
            " others could replace it",
        )


def _build(
    compiler: str, source: bytes, name: str, target: Path, *, options: Sequence[str], what: str
) -> None:
    """Compile ``source`` into ``target`` through a temporary file renamed into place."""
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as work:
        source_file = Path(work) / name
        source_file.write_bytes(source)
        made = Path(work) / target.name
        command = [compiler, *FLAGS, "-o", str(made), str(source_file), *options]
        try:
            done = subprocess.run(command, capture_output=True, timeout=BUILD_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise BuildError(errno.ENOEXEC, f"{compiler} failed: {error}") from None
        if done.returncode != 0:
            raise BuildError(
                errno.ENOEXEC, f"{compiler} could not build {what}: {_first_error(done)}"
            )
        os.replace(made, target)


def _first_error(done: "subprocess.CompletedProcess[bytes]") -> str:
    """The compiler's first line that says "error", else its last line."""
    lines = done.stderr.decode(errors="replace").splitlines() or [f"status {done.returncode}"]
    return next((line for line in lines if "error" in line), lines[-1]).strip()
