"""``cryptoapi fuzz --scheduler ADDRESS`` / ``--cluster local:N``: a campaign's ranges as
tasks of a Dask distributed cluster.

Imported only when one of those options is used (it imports ``distributed``). Every
range is one task (``fuzz_range``, which each worker imports from its own cryptoapi, so
workers need the same cryptoapi installed); results stream back as they finish
(``as_completed``) into the same ``campaign.gather`` as ``--jobs``. A task whose worker
dies is rerun elsewhere by the scheduler (a lost worker's tasks are rescheduled; an error
inside a task is retried ``RETRIES`` times, then reported).
"""

import logging
import time
from collections.abc import Callable
from contextlib import ExitStack

from distributed import Client, LocalCluster, as_completed, get_worker

from cryptoapi.selftest.fuzz.campaign import Campaign, CaseRange, RangeResult, gather

RETRIES = 2

RunRange = Callable[..., RangeResult]
"""``cli.fuzz.fuzz_range(task, seed, deadline, worker=)``, passed in (it imports this
module only when a cluster option is used)."""


def run_on_cluster(
    campaign: Campaign,
    run_range: RunRange,
    *,
    deadline: float | None,
    on_result: Callable[[RangeResult], None],
    scheduler: str | None,
    local_workers: int | None,
) -> None:
    """Run ``campaign``'s pending ranges (each with ``run_range``) on the cluster of
    ``scheduler``, or on a LocalCluster of ``local_workers`` processes (one thread each)."""
    tasks = campaign.to_run()
    if not tasks:
        return
    with ExitStack() as stack:
        client = stack.enter_context(_client(stack, scheduler, local_workers))
        futures = client.map(
            _on_worker, tasks, run_range=run_range, seed=campaign.parameters.seed,
            deadline=deadline, retries=RETRIES, pure=False,
        )  # fmt: skip
        gather(
            campaign, dict(zip(futures, tasks, strict=True)),
            as_completed(futures),  # type: ignore[no-untyped-call]
            deadline=deadline, clock=time.time, on_result=on_result,
        )  # fmt: skip


def _client(stack: ExitStack, scheduler: str | None, local_workers: int | None) -> Client:
    # distributed's constructors and as_completed carry no annotations: hence the ignores.
    if scheduler is not None:
        return Client(scheduler)  # type: ignore[no-untyped-call]
    options = {"threads_per_worker": 1, "processes": True, "dashboard_address": None}
    cluster = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=local_workers, silence_logs=logging.ERROR, **options
    )
    stack.enter_context(cluster)
    return Client(cluster)  # type: ignore[no-untyped-call]


def _on_worker(
    task: CaseRange, run_range: RunRange, seed: int, deadline: float | None
) -> RangeResult:
    """``run_range`` on a worker, naming the worker by its address."""
    return run_range(task, seed, deadline, worker=get_worker().address)
