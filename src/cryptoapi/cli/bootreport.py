"""What one bring-up did, as ``cryptoapi boot`` prints it and the boot chart draws it (its
own module, so that the command and the chart both import it and not each other)."""

from dataclasses import dataclass

from cryptoapi.registry.trace import TraceEvent


@dataclass
class BootReport:
    """What one bring-up did (the trace events, in order) and what it cost."""

    mode: str
    events: list[TraceEvent]
    started: float
    wall_ms: float
    cpu_ms: float
    threads_started: int

    @property
    def tests_run(self) -> int:
        return sum(1 for e in self.events if e.kind == "test" and e.result != "untested")

    @property
    def imports(self) -> int:
        """Provider modules imported (traced as "load" events)."""
        return sum(1 for e in self.events if e.kind == "load")
