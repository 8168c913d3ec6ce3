"""The shape of ``cryptoapi.pfkey``: its public names (a guard: removing or renaming one
breaks the README's imports and users' code, so it fails here first), its layers, and what
importing its lowest layer costs.

The layers, lowest first, as in the kernel's split of ``af_key.c`` and ``xfrm_state.c``:
``wire`` (the format: numbers, structs, messages), ``db`` (the SA and policy databases and
their store), the key manager with its handlers, then ``daemon`` and ``setkey`` on top.
A module imports only from its own layer and the ones below it.
"""

import ast
from pathlib import Path

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

_TOP_MODULES = {path.stem for path in PACKAGE.glob("*.py")}

LAYERS = {"errors": 0, "wire": 1, "db": 2, "manager": 3, "daemon": 4, "setkey": 4}
"""Layer of each part (``manager``: the modules directly in ``pfkey/``)."""


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
    first = module.split(".", 1)[0]
    return first if first in LAYERS and first != "manager" else "manager"


def _imports(path: Path) -> set[str]:
    """What ``path`` imports below ``cryptoapi.pfkey.`` (type-only imports too), without
    that prefix; ``from cryptoapi.pfkey import replies`` counts as ``replies``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "cryptoapi.pfkey":
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    prefix = "cryptoapi.pfkey."
    return {name.removeprefix(prefix) for name in found if name.startswith(prefix)} | {
        name for name in found if "." not in name and name in _TOP_MODULES
    }


def test_modules_import_only_from_their_layer_and_below():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).with_suffix("")
        if relative.name == "__init__" and len(relative.parts) == 1:
            continue  # the package's own re-exports
        own = _part(".".join(relative.parts))
        for imported in sorted(_imports(path)):
            other = _part(imported)
            if LAYERS[other] > LAYERS[own]:
                upward.append(f"{'/'.join(relative.parts)} ({own}) imports {imported} ({other})")
    assert upward == []
