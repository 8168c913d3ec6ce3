"""Counts in words for the commands' human output: ``1 policy``, ``2 policies``."""


def counted(count: int, noun: str, plural: str = "") -> str:
    """``count`` and ``noun``, plural unless ``count`` is 1 (``plural``, or ``noun + "s"``):
    a user reading ``1 policies`` wonders what else went wrong."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
