"""``python -m cryptoapi``: the command line."""

from cryptoapi.cli import main

raise SystemExit(main())
