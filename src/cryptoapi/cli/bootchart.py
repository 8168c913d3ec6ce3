"""The boot chart: one lane per thread, a bar per provider import, registration or test.

Drawn with matplotlib (the ``chart`` extra: ``pip install cryptoapi[chart]``), like the
kernel's bootgraph.pl: time runs left to right from the registry's creation. Bars are
coloured by kind (and a test by its result), with a legend that counts each kind. The
longest imports and tests are named, inside the bar where the name fits or just after it
where the lane is free, at most MAX_LABELS of them, so that a ``full`` boot with its
hundreds of bars stays readable; in an SVG every bar also has a ``<title>``, which a
browser shows as a tooltip: what it was, how long it took, when, on which thread.
"""

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

from cryptoapi._counts import counted
from cryptoapi.errors import CryptoError
from cryptoapi.registry.trace import TraceEvent

if TYPE_CHECKING:
    from cryptoapi.cli.bootreport import BootReport


@dataclass(frozen=True)
class Kind:
    """How one kind of bar looks and what the legend calls it."""

    label: str
    colour: str
    text_colour: str


KINDS = {
    "load": Kind("provider import", "#4c78a8", "white"),
    "register": Kind("registration", "#9aa5b1", "black"),
    "passed": Kind("self-test passed", "#2e9e44", "white"),
    "failed": Kind("self-test failed", "#d1332e", "white"),
    "untested": Kind("no self-test (no vectors)", "#e0a800", "black"),
}
OTHER = Kind("other", "#555555", "white")

MAX_LABELS = 30
"""Bars named on the chart at most (the longest that have room); the rest: tooltips only."""
FONT_SIZE = 7.0
LABEL_PAD_PIXELS = 4  # between a name and the edges of its bar
OUTSIDE_TEXT_COLOUR = "#333333"  # a name after its bar, on the white background
MIN_BAR_FRACTION = 1 / 1500  # of the time axis: a 3 us registration still shows, as a tick
PROVIDER_PREFIX = "cryptoapi.providers."
SVG_NS = "http://www.w3.org/2000/svg"
SVG_PREFIXES = {  # the namespaces matplotlib's SVG declares, kept under their usual names
    "": SVG_NS,
    "xlink": "http://www.w3.org/1999/xlink",
    "dc": "http://purl.org/dc/elements/1.1/",
    "cc": "http://creativecommons.org/ns#",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
}


def kind_of(event: TraceEvent) -> str:
    """The key in KINDS: ``load`` and ``register`` by kind, a test by its result."""
    return event.kind if event.kind in ("load", "register") else event.result


def label_of(event: TraceEvent) -> str:
    """The name written on a bar: the driver, or the provider without its package."""
    return event.driver.removeprefix(PROVIDER_PREFIX)


def tooltip_of(event: TraceEvent, started: float) -> str:
    """What a bar's tooltip says: kind, name, outcome, duration, start, thread."""
    what = {"load": "import", "register": "register", "test": "self-test"}.get(event.kind)
    at = (event.start - started) * 1e3
    return (
        f"{what or event.kind} {event.driver}: {event.result}, "
        f"{_duration(event.duration_us)} at {at:.2f} ms [{event.thread}]"
    )


def _duration(micros: float) -> str:
    return f"{micros / 1e3:.2f} ms" if micros >= 1000 else f"{micros:.0f} us"


def draw(report: "BootReport", path: str) -> None:
    """Write the chart of ``report`` to ``path`` (.svg with tooltips, or .png)."""
    pyplot = _pyplot()
    lanes = sorted({e.thread for e in report.events}, key=lambda t: (t != "MainThread", t))
    figure, axes = pyplot.subplots(figsize=(12, 1.6 + 0.6 * len(lanes)))
    try:
        tooltips = _bars(axes, report, lanes)
        _frame(axes, report, lanes)
        figure.tight_layout()
        _labels(axes, report, lanes)
        _save(figure, path, tooltips)
    finally:
        pyplot.close(figure)


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        raise CryptoError(
            "the boot chart needs matplotlib: pip install 'cryptoapi[chart]'"
        ) from None
    return pyplot


def _span(event: TraceEvent, report: "BootReport") -> tuple[float, float]:
    """A bar's start and width in milliseconds since the registry was created (at least
    MIN_BAR_FRACTION of the boot, so that every bar can be seen)."""
    shortest = report.wall_ms * MIN_BAR_FRACTION
    return (event.start - report.started) * 1e3, max(event.duration_us / 1e3, shortest)


def _bars(axes: Any, report: "BootReport", lanes: list[str]) -> dict[str, str]:
    """One rectangle per event, each with an SVG id; returns id -> tooltip text. Bars are
    edged in white so that back-to-back ones stay apart, except registrations: a tick
    that thin would be all edge."""
    from matplotlib.patches import Rectangle

    tooltips = {}
    for number, event in enumerate(report.events):
        gid = f"cryptoapi-bar-{number}"
        left, width = _span(event, report)
        kind = KINDS.get(kind_of(event), OTHER)
        edge = 0 if event.kind == "register" else 0.6
        bar = Rectangle(
            (left, lanes.index(event.thread) - 0.4), width, 0.8,
            facecolor=kind.colour, edgecolor="white", linewidth=edge, gid=gid,
        )  # fmt: skip
        axes.add_patch(bar)
        tooltips[gid] = tooltip_of(event, report.started)
    return tooltips


def _frame(axes: Any, report: "BootReport", lanes: list[str]) -> None:
    """Axes, title and the legend by kind (with counts)."""
    ends = [sum(_span(e, report)) for e in report.events]
    axes.set_xlim(0, max([report.wall_ms, *ends]) * 1.01 or 1.0)
    axes.set_ylim(len(lanes) - 0.5, -0.5)  # the main thread on top
    axes.set_yticks(range(len(lanes)), lanes)
    axes.set_xlabel("milliseconds since the registry was created")
    imports = report.imports
    loaded = f"{counted(imports, 'provider import')}, " if imports else ""  # none traced: none
    axes.set_title(
        f"cryptoapi boot, self-tests {report.mode}: wall {report.wall_ms:.1f} ms, "
        f"{loaded}{counted(report.tests_run, 'test')}, "
        f"{counted(report.threads_started, 'thread')} started"
    )
    axes.legend(
        handles=_legend(report.events), loc="upper left", bbox_to_anchor=(1.0, 1.0),
        fontsize="small",
    )  # fmt: skip


def _legend(events: list[TraceEvent]) -> list[Any]:
    from matplotlib.patches import Patch

    counts: dict[str, int] = {}
    for event in events:
        counts[kind_of(event)] = counts.get(kind_of(event), 0) + 1
    return [
        Patch(color=kind.colour, label=f"{kind.label} ({counts[key]})")
        for key, kind in KINDS.items()
        if key in counts
    ]


def _labels(axes: Any, report: "BootReport", lanes: list[str]) -> None:
    """Name the longest imports and tests, MAX_LABELS at most: inside the bar if the name
    fits there, else just after it if the lane is free that far (as a Gantt chart does).
    Registrations take microseconds and are never named; their tooltips say what they are."""
    labeller = _Labeller(axes, report, lanes)
    named = [e for e in report.events if e.kind != "register"]
    placed = 0
    for event in sorted(named, key=lambda e: e.duration_us, reverse=True):
        if placed == MAX_LABELS:
            return
        placed += labeller.place(event)


class _Labeller:
    """Places names on bars, measuring each as drawn (the layout must be final), and keeps
    the stretches of each lane already taken by a bar or by a name outside its bar."""

    def __init__(self, axes: Any, report: "BootReport", lanes: list[str]) -> None:
        self.axes = axes
        self.report = report
        self.lanes = lanes
        self.renderer = axes.figure.canvas.get_renderer()
        left, right = axes.get_xlim()
        self.right = right
        self.ms_per_pixel = (right - left) / axes.get_window_extent().width
        self.taken: dict[str, list[tuple[float, float]]] = {lane: [] for lane in lanes}
        for event in report.events:
            start, width = _span(event, report)
            self.taken[event.thread].append((start, start + width))

    def place(self, event: TraceEvent) -> bool:
        """Name ``event``'s bar if there is room inside or after it; whether it was."""
        start, width = _span(event, self.report)
        text = self.axes.text(
            start + width / 2, self.lanes.index(event.thread), label_of(event),
            ha="center", va="center", fontsize=FONT_SIZE, clip_on=True,
            color=KINDS.get(kind_of(event), OTHER).text_colour,
        )  # fmt: skip
        needed = (
            text.get_window_extent(self.renderer).width + LABEL_PAD_PIXELS
        ) * self.ms_per_pixel
        if needed < width:
            return True
        after = (start + width, start + width + needed)
        if after[1] <= self.right and self._free(event.thread, after):
            text.set(x=after[0] + LABEL_PAD_PIXELS / 2 * self.ms_per_pixel, ha="left",
                     color=OUTSIDE_TEXT_COLOUR)  # fmt: skip
            self.taken[event.thread].append(after)
            return True
        text.remove()
        return False

    def _free(self, lane: str, stretch: tuple[float, float]) -> bool:
        return all(end <= stretch[0] or start >= stretch[1] for start, end in self.taken[lane])


def _save(figure: Any, path: str, tooltips: dict[str, str]) -> None:
    if not path.endswith(".svg"):
        figure.savefig(path)
        return
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg")
    with open(path, "wb") as stream:
        stream.write(with_titles(buffer.getvalue(), tooltips))


def with_titles(svg: bytes, titles: dict[str, str]) -> bytes:
    """``svg`` with a ``<title>`` (a browser's tooltip) first in each element whose id is
    a key of ``titles``: matplotlib writes an artist's gid as the id of its ``<g>``."""
    for prefix, uri in SVG_PREFIXES.items():
        ElementTree.register_namespace(prefix, uri)
    root = ElementTree.fromstring(svg)
    for element in root.iter():
        text = titles.get(element.get("id", ""))
        if text is not None:
            title = ElementTree.Element(f"{{{SVG_NS}}}title")
            title.text = text
            element.insert(0, title)
    written: bytes = ElementTree.tostring(root, xml_declaration=True, encoding="utf-8")
    return written
