"""The boot chart: one lane per thread, a bar per registration or self-test.

Drawn with matplotlib (the ``chart`` extra: ``pip install cryptoapi[chart]``), like the
kernel's bootgraph.pl: time runs left to right from the registry's creation.
"""

from typing import TYPE_CHECKING

from cryptoapi.errors import CryptoError

if TYPE_CHECKING:
    from cryptoapi.cli.boot import BootReport

COLOURS = {
    "ok": "#9aa5b1",  # a registration
    "passed": "#2e9e44",
    "failed": "#d1332e",
    "untested": "#e0a800",
}


def draw(report: "BootReport", path: str) -> None:
    """Write the chart of ``report`` to ``path`` (.svg or .png)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
        from matplotlib.patches import Patch
    except ImportError:
        raise CryptoError(
            "the boot chart needs matplotlib: pip install 'cryptoapi[chart]'"
        ) from None
    lanes = sorted({e.thread for e in report.events}, key=lambda t: (t != "MainThread", t))
    figure, axes = pyplot.subplots(figsize=(11, 1.2 + 0.45 * len(lanes)))
    for lane, thread in enumerate(lanes):
        events = [e for e in report.events if e.thread == thread]
        spans = [
            ((e.start - report.started) * 1e3, max(e.duration_us / 1e3, 0.004)) for e in events
        ]
        colours = [COLOURS.get(e.result, "#555555") for e in events]
        axes.broken_barh(spans, (lane - 0.4, 0.8), facecolors=colours, edgecolors="none")
    axes.set_yticks(range(len(lanes)), lanes)
    axes.invert_yaxis()
    axes.set_xlabel("milliseconds since the registry was created")
    axes.set_title(
        f"cryptoapi boot, self-tests {report.mode}: wall {report.wall_ms:.1f} ms, "
        f"{report.tests_run} tests, {report.threads_started} threads started"
    )
    used = {e.result for e in report.events}
    legend = [
        Patch(color=c, label="registration" if r == "ok" else r)
        for r, c in COLOURS.items()
        if r in used
    ]
    axes.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    figure.tight_layout()
    figure.savefig(path)
    pyplot.close(figure)
