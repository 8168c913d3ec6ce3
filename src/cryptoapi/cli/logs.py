"""Logging for the daemons (keyd, espd): INFO and above on standard error, each line
prefixed with the daemon's name, for as long as the daemon runs."""

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def logging_to_stderr(prefix: str, logger_name: str) -> Iterator[None]:
    """Send ``logger_name``'s records (INFO and above) to stderr as ``prefix: message``
    inside the ``with`` block; the handler is removed after it."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{prefix}: %(message)s"))
    logger = logging.getLogger(logger_name)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
