"""The shape of ``cryptoapi.pfkey``: its public names (a guard: removing or renaming one
breaks the README's imports and users' code, so it fails here first), its layers, and what
importing its lowest layer costs.

The layers, lowest first, as in the kernel's split of ``af_key.c`` and ``xfrm_state.c``:
``wire`` (the format: numbers, structs, messages), ``db`` (the SA and policy databases and
their store), ``km`` (the key manager with its handlers), then ``daemon`` and ``setkey`` on
top. A module imports only from its own layer and the ones below it, by its current name
(the key manager's modules were in the package's root until issue 25; their old names
still import them, for users).
"""

import ast
import importlib
from pathlib import Path

import pytest

import cryptoapi.pfkey
from tests.imports import check_exports, loaded_by

PUBLIC = {
    "AUTH", "ENCRYPT", "Address", "AlgDesc", "AlgSpec", "AuthAlg", "Comb", "EncryptAlg",
    "ExtType", "Filter", "IdentType", "Identity", "IpsecDir", "IpsecLevel", "IpsecMode",
    "IpsecRequest", "Key", "KeyDaemon", "KeyManager", "KmAddress", "KmPrivate", "Lifetime",
    "Message", "MsgType", "NatTPort", "NatTType", "PfkeyClient", "PfkeyError", "Policy",
    "PolicyType", "Proposal", "SADatabase", "Sa", "Sa2", "SaFlags", "SaReplay", "SaState",
    "SaType", "SecCtx", "SecurityAssociation", "SecurityPolicy", "Sensitivity", "SockAddr",
    "SpiRange", "Supported", "decode", "encode", "scan",
}  # fmt: skip

PACKAGE = Path(cryptoapi.pfkey.__file__).parent

LAYERS = {"errors": 0, "wire": 1, "db": 2, "km": 3, "daemon": 4, "setkey": 4}
"""Layer of each part: the package's sub-packages and its one module, ``errors``."""


WIRE = ["cryptoapi.pfkey.wire", *(f"cryptoapi.pfkey.wire.{p.stem}" for p in
         sorted((PACKAGE / "wire").glob("*.py")) if p.stem != "__init__")]  # fmt: skip
"""Every module of the wire codec."""
BASICS = ("struct", "socket", "errno", "enum", "dataclasses", "typing", "ipaddress", "builtins")
"""The standard library the codec may stand on (with whatever these import themselves)."""
UNDER_THE_CODEC = {
    "cryptoapi", "cryptoapi._lazy", "cryptoapi.errors",  # the top package, as light as hashlib
    "cryptoapi.pfkey",  # its re-exports load on first use
    "cryptoapi.pfkey.errors",  # PfkeyError, the one layer below the codec
}  # fmt: skip


def test_the_public_names_are_exactly_the_documented_ones():
    check_exports(cryptoapi.pfkey, PUBLIC)


def test_the_wire_codec_loads_only_itself_and_the_standard_library_basics():
    """Not the key manager, the daemon, the registry (``pfkey/__init__`` imported the
    daemon once, and with it some 150 modules)."""
    assert loaded_by(WIRE, after=BASICS) == set(WIRE) | UNDER_THE_CODEC


def _part(module: str) -> str:
    """The layer name of ``cryptoapi.pfkey.<...>`` (``module`` without that prefix)."""
    return module.split(".", 1)[0]


def _imports(path: Path) -> set[str]:
    """What ``path`` imports below ``cryptoapi.pfkey.`` (type-only imports too), without
    that prefix; ``from cryptoapi.pfkey.km import replies`` counts as ``km.replies``, and
    ``from cryptoapi.pfkey import X`` (a public name) as nothing."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module != "cryptoapi.pfkey":
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    prefix = "cryptoapi.pfkey."
    return {name.removeprefix(prefix) for name in found if name.startswith(prefix)}


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_the_root_holds_the_layers_and_nothing_else():
    """The key manager's modules live in ``km/`` (issue 25), not beside the layers."""
    held = {p.stem for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    assert held == {"__init__", *LAYERS}


def test_modules_import_only_from_their_layer_and_below():
    upward = []
    for path in _sources():
        relative = path.relative_to(PACKAGE).with_suffix("")
        if relative.name == "__init__" and len(relative.parts) == 1:
            continue  # the package's own re-exports
        own = _part(".".join(relative.parts))
        for imported in sorted(_imports(path)):
            other = _part(imported)
            if LAYERS[other] > LAYERS[own]:
                upward.append(f"{'/'.join(relative.parts)} ({own}) imports {imported} ({other})")
    assert upward == []


@pytest.mark.parametrize(("old", "new"), sorted(cryptoapi.pfkey.MOVED.items()))
def test_a_moved_module_is_still_imported_by_its_old_name(old, new):
    """The same module object under both names (a monkeypatch through one is seen through
    the other), still named and specified by its new name."""
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__name__ == module.__spec__.name == new


def test_old_names_work_in_every_form_of_import():
    from cryptoapi.pfkey.routing import Reply  # a name from the module

    from cryptoapi.pfkey import core, manager  # a submodule by name, through the package

    assert manager.KeyManager is cryptoapi.pfkey.KeyManager
    assert core.KeyManagerCore.__module__ == "cryptoapi.pfkey.km.interface"
    assert Reply.__module__ == "cryptoapi.pfkey.km.routing"


def test_nothing_in_the_project_imports_a_moved_module_by_its_old_name():
    old = {name.removeprefix("cryptoapi.pfkey.") for name in cryptoapi.pfkey.MOVED}
    root = PACKAGE.parents[2]
    found = []
    for top in ("src", "bench", "tests"):
        for path in sorted((root / top).rglob("*.py")):
            if path == Path(__file__):
                continue
            stale = {name for name in _imports(path) if name.split(".", 1)[0] in old}
            stale |= {name for name in _package_imports(path) if name in old}
            found += [f"{path.relative_to(root)}: {name}" for name in sorted(stale)]
    assert found == []


def _package_imports(path: Path) -> set[str]:
    """The names ``path`` imports with ``from cryptoapi.pfkey import ...``."""
    return {
        alias.name
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module == "cryptoapi.pfkey"
        for alias in node.names
    }
