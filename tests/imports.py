"""What an import costs, and what a lazy package re-exports: helpers for the guards that
keep ``import cryptoapi.pfkey.wire`` and ``import cryptoapi.esp.ip`` light, and the
packages' public names whole.

Each import is measured in a fresh interpreter: a module the test process loaded already
would hide it."""

import ast
import subprocess
import sys
from pathlib import Path
from types import ModuleType


def loaded_by(imports: list[str], *, after: tuple[str, ...] = ()) -> set[str]:
    """The modules importing ``imports`` adds to a fresh interpreter in which the modules
    ``after`` (and what they import) are loaded already."""
    code = "\n".join(
        [
            "import sys",
            *(f"import {name}" for name in after),
            "before = set(sys.modules)",  # printed without json: it would load re, codecs...
            *(f"import {name}" for name in imports),
            "print('\\n'.join(sorted(set(sys.modules) - before)))",
        ]
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def check_exports(package: ModuleType, public: set[str]) -> None:
    """``package`` exports exactly ``public``: in ``__all__`` and ``dir()``, each loaded on
    first use, and each seen by type checkers where it is loaded from."""
    assert set(package.__all__) == public
    assert set(dir(package)) >= public
    assert all(getattr(package, name) is not None for name in public)
    lazy = {(module, name) for name, module in package._EXPORTS.module_of.items()}
    assert type_checked(package) == lazy
    assert {name for _, name in lazy} == public


def type_checked(package: ModuleType) -> set[tuple[str, str]]:
    """(module, name) of each import under the package's ``if TYPE_CHECKING:``: what type
    checkers see of its lazy re-exports."""
    tree = ast.parse(Path(str(package.__file__)).read_text())
    blocks = [
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    ]
    return {
        (str(node.module), alias.name)
        for block in blocks
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
