"""Logging for the daemons (keyd, espd): records of ``--log-level`` and above (INFO by
default) on standard error, for as long as the daemon runs.

On a terminal or in a file each line is ``prefix: message``. Under systemd, whose journal
takes standard error (``$JOURNAL_STREAM`` names that very stream), each line starts
with its syslog priority instead, ``<3>`` for an error ... ``<7>`` for debug, which
journald reads as the line's level (``SyslogLevelPrefix=``, on by default), so
``journalctl -p warning -u cryptoapi-keyd`` shows only what matters; the unit's
``SyslogIdentifier=`` names the daemon there.
"""

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

LEVELS = ("debug", "info", "warning", "error")
"""What ``--log-level`` takes."""
PRIORITIES = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3}
"""syslog priorities (``<syslog.h>``) of the logging levels; CRITICAL is 2."""


class JournalFormatter(logging.Formatter):
    """``<priority>message``: the journal's level prefix (sd-daemon(3))."""

    def format(self, record: logging.LogRecord) -> str:
        priority = PRIORITIES.get(record.levelno, 2 if record.levelno > logging.ERROR else 6)
        return f"<{priority}>{super().format(record)}"


def to_journal(stream: TextIO) -> bool:
    """Whether ``stream`` is the journal's (``$JOURNAL_STREAM`` is its ``device:inode``)."""
    wanted = os.environ.get("JOURNAL_STREAM", "")
    try:
        info = os.fstat(stream.fileno())
    except (OSError, ValueError):  # no descriptor (a test's StringIO) or closed
        return False
    return wanted == f"{info.st_dev}:{info.st_ino}"


@contextmanager
def logging_to_stderr(prefix: str, logger_name: str, level: str = "info") -> Iterator[None]:
    """Send ``logger_name``'s records of ``level`` and above to stderr (see the module
    doc) inside the ``with`` block; the handler is removed after it."""
    handler = logging.StreamHandler(sys.stderr)
    if to_journal(sys.stderr):
        handler.setFormatter(JournalFormatter("%(message)s"))
    else:
        handler.setFormatter(logging.Formatter(f"{prefix}: %(message)s"))
    logger = logging.getLogger(logger_name)
    logger.addHandler(handler)
    logger.setLevel(level.upper())
    try:
        yield
    finally:
        logger.removeHandler(handler)
