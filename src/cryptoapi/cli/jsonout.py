"""The JSON the commands print with ``--json``: one vocabulary, one versioned envelope.

Every document is an object whose first key is ``"schema": 1``; the version goes up when a
key changes meaning or disappears (adding keys does not change it). An implementation is
described with the keys of ``cryptoapi list --json`` (``AlgInfo.as_dict``): ``name`` (the
algorithm name), ``driver``, ``provider``, ``priority``, ``type``, ``selftest`` (its result)
and ``selftest_us``; other commands add their own keys beside them, never rename them.
"""

import json
import sys

SCHEMA = 1


def dump(document: dict[str, object]) -> None:
    """Print ``document`` under the schema version, indented, ending in a newline."""
    json.dump({"schema": SCHEMA, **document}, sys.stdout, indent=2)
    print()
