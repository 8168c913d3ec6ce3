"""Key material from a setkey(8) file (``espd -f FILE``): espd as its own key manager.

The file is parsed whole first (an error names file, line and column and nothing is
applied, :mod:`cryptoapi.pfkey.setkey`), then run against espd's in-process key manager
through :class:`~cryptoapi.pfkey.setkey.LocalTransport`, exactly as ``cryptoapi setkey -f``
runs it without ``--socket``. A statement the key manager refuses is reported; espd does
not start with a half-loaded file.
"""

from cryptoapi.pfkey.km.manager import KeyManager
from cryptoapi.pfkey.setkey import LocalTransport, apply, parse_file


def load(key_manager: KeyManager, path: str) -> list[str]:
    """Apply the setkey file at ``path`` to ``key_manager``; the refusals, one line each
    (``file:line:col: command: reason (errno N)``). Raises SetkeyError (EINVAL) for a file
    that does not parse and OSError for one that cannot be read."""
    outcomes = apply(parse_file(path), LocalTransport(key_manager))
    return [line for outcome in outcomes for line in outcome.describe_errors()]
