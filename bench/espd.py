"""``python -m bench.espd``: TCP through two ``cryptoapi espd`` endpoints and through
strongSwan's kernel-libipsec in the same topology; Mbit/s and their ratio per transform.

The benchmark is :mod:`bench.system.espd` (``--help`` says what it measures and how); this
module keeps its name for ``python -m bench`` and ``make bench``.
"""

from bench.system.espd import main

if __name__ == "__main__":
    raise SystemExit(main())
