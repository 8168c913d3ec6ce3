"""Plain-text tables for the commands' human output."""

from collections.abc import Sequence


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns padded to their widest cell; numbers right-aligned (a column of numbers may
    have blank cells)."""
    cells = [[str(h) for h in headers], *([_cell(v) for v in row] for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [
        any(isinstance(r[i], int | float) for r in rows)
        and all(isinstance(r[i], int | float) or r[i] == "" for r in rows)
        for i in range(len(headers))
    ]
    lines = []
    for row in cells:
        padded = (
            c.rjust(w) if n else c.ljust(w) for c, w, n in zip(row, widths, numeric, strict=True)
        )
        lines.append("  ".join(padded).rstrip())
    return "\n".join(lines)


def _cell(value: object) -> str:
    return f"{value:.0f}" if isinstance(value, float) else str(value)
