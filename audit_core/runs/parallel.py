"""Batch work on one machine or a Dask cluster: :func:`map_batches`.

The audits' heavy steps (certificates in chunks, refits by seed, bootstrap
replicates) are expressed as ``func(item)`` over a list of items, where every
item carries everything it needs, *including its own seed*. Then the result
does not depend on where or in which order the items run, and

``map_batches(f, items, backend="serial") == map_batches(f, items, backend="processes")
== map_batches(f, items, backend="dask", ...)``

holds exactly (tested in ``tests/test_parallel.py``). Never rely on a global
random state inside ``func``: use ``numpy.random.default_rng(item.seed)``.

Backends
--------
``"serial"``
    A plain loop in this process (the default; no pickling).
``"processes"``
    joblib with its ``loky`` process pool (``n_jobs`` workers, default all
    cores). ``func`` and the items must be picklable; define ``func`` at
    module level.
``"dask"``
    Dask futures on a ``distributed`` cluster: ``scheduler_address`` (e.g.
    ``"tcp://10.0.0.5:8786"``), or the current client if one is active (for
    example inside :func:`local_cluster`). ``func`` must be importable on the
    workers (same code version installed there).

This module is pure library code: it never imports streamlit or plotly, and
imports joblib / distributed lazily, only for the backend in use.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal, TypeVar

from audit_core.errors import fail, register_messages

__all__ = ["BACKENDS", "Backend", "map_batches", "local_cluster", "default_n_jobs"]

T = TypeVar("T")
R = TypeVar("R")
Backend = Literal["serial", "processes", "dask"]
#: The accepted values of ``backend``.
BACKENDS: tuple[str, ...] = ("serial", "processes", "dask")

register_messages(
    {
        "PARALLEL_BAD_BACKEND": (
            "Unknown parallel backend {backend!r}; use one of 'serial', 'processes', 'dask'."
        ),
        "PARALLEL_BAD_N_JOBS": "n_jobs must be a positive whole number or None, got {value!r}.",
        "PARALLEL_NO_SCHEDULER": (
            "The 'dask' backend needs a cluster: pass a scheduler address "
            "(e.g. --dask-scheduler tcp://host:8786) or start a local one "
            "(e.g. --dask-local 2)."
        ),
        "PARALLEL_SCHEDULER_UNREACHABLE": (
            "Cannot connect to the Dask scheduler at {address!r} ({reason}). Check the "
            "address and that the scheduler is running and reachable from this machine."
        ),
        "PARALLEL_NO_DASK": (
            "The 'dask' backend needs the 'distributed' package; install the pinned "
            "requirements (pip install -r requirements.txt)."
        ),
        "PARALLEL_SCHEDULER_WITHOUT_DASK": (
            "A Dask scheduler address was given with backend {backend!r}; use backend 'dask' "
            "or drop the address."
        ),
    }
)


def default_n_jobs() -> int:
    """Number of worker processes used when ``n_jobs`` is ``None``.

    Returns
    -------
    int
        The CPUs available to this process (``os.sched_getaffinity`` where it
        exists), at least 1.
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS / Windows
        return max(1, os.cpu_count() or 1)


def _check_n_jobs(n_jobs: int | None) -> int | None:
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise fail("PARALLEL_BAD_N_JOBS", value=n_jobs)
    return n_jobs


def map_batches(
    func: Callable[[T], R],
    items: Iterable[T],
    *,
    backend: Backend = "serial",
    n_jobs: int | None = None,
    scheduler_address: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[R]:
    """Apply ``func`` to every item and return the results in input order.

    Parameters
    ----------
    func : callable(item) -> result
        A pure function of its item. For ``"processes"`` and ``"dask"`` it
        must be picklable (a module-level function).
    items : iterable
        The work items; each carries its own seed if ``func`` is stochastic.
    backend : {"serial", "processes", "dask"}, default "serial"
        Where the items run (see the module docstring).
    n_jobs : int, optional
        Worker processes for ``"processes"`` (default: all available CPUs).
        Ignored by ``"serial"`` and ``"dask"`` (the cluster decides).
    scheduler_address : str, optional
        Dask scheduler to connect to (``"dask"`` only). Without it the current
        ``distributed`` client is used, e.g. inside :func:`local_cluster`.
    progress : callable(done, total), optional
        Called with ``(0, total)`` first and after each finished item.

    Returns
    -------
    list
        ``[func(item) for item in items]``, identical for every backend.

    Raises
    ------
    AuditInputError
        ``PARALLEL_BAD_BACKEND``, ``PARALLEL_BAD_N_JOBS``,
        ``PARALLEL_NO_SCHEDULER``, ``PARALLEL_SCHEDULER_UNREACHABLE``,
        ``PARALLEL_SCHEDULER_WITHOUT_DASK``. Exceptions raised by ``func``
        propagate unchanged (the first one, for the pooled backends).

    Examples
    --------
    >>> map_batches(abs, [-2, 3, -1])
    [2, 3, 1]
    >>> seen = []
    >>> map_batches(str, range(3), progress=lambda d, t: seen.append((d, t)))
    ['0', '1', '2']
    >>> seen
    [(0, 3), (1, 3), (2, 3), (3, 3)]
    """
    if backend not in BACKENDS:
        raise fail("PARALLEL_BAD_BACKEND", backend=backend)
    n_jobs = _check_n_jobs(n_jobs)
    if scheduler_address is not None and backend != "dask":
        raise fail("PARALLEL_SCHEDULER_WITHOUT_DASK", backend=backend)
    work: Sequence[T] = list(items)
    total = len(work)
    report = progress or (lambda done, total: None)
    report(0, total)
    if total == 0:
        return []
    if backend == "serial":
        return _serial(func, work, report)
    if backend == "processes":
        return _processes(func, work, n_jobs, report)
    return _dask(func, work, scheduler_address, report)


def _serial(func: Callable[[T], R], work: Sequence[T], report: Callable[[int, int], None]) -> list[R]:
    out: list[R] = []
    for i, item in enumerate(work, start=1):
        out.append(func(item))
        report(i, len(work))
    return out


def _processes(
    func: Callable[[T], R], work: Sequence[T], n_jobs: int | None, report: Callable[[int, int], None]
) -> list[R]:
    from joblib import Parallel, delayed

    workers = min(n_jobs or default_n_jobs(), len(work))
    parallel = Parallel(n_jobs=workers, backend="loky", return_as="generator")
    out: list[R] = []
    # The generator yields in input order; progress advances as results arrive.
    for i, result in enumerate(parallel(delayed(func)(item) for item in work), start=1):
        out.append(result)
        report(i, len(work))
    return out


def _dask(
    func: Callable[[T], R],
    work: Sequence[T],
    scheduler_address: str | None,
    report: Callable[[int, int], None],
) -> list[R]:
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - pinned in requirements
        raise fail("PARALLEL_NO_DASK") from exc
    with _client(distributed, scheduler_address) as client:
        futures = client.map(func, work, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        results: list[Any] = [None] * len(work)
        try:
            for done, future in enumerate(distributed.as_completed(futures), start=1):
                results[index[future.key]] = future.result()
                report(done, len(work))
        finally:
            client.cancel([f for f in futures if not f.done()])
        return results


@contextlib.contextmanager
def _client(distributed: Any, address: str | None) -> Iterator[Any]:
    if address is None:
        try:
            yield distributed.get_client()
        except ValueError as exc:  # no active client
            raise fail("PARALLEL_NO_SCHEDULER") from exc
        return
    try:
        client = distributed.Client(address, timeout="10s", set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise fail("PARALLEL_SCHEDULER_UNREACHABLE", address=address, reason=str(exc)) from exc
    try:
        yield client
    finally:
        client.close()


@contextlib.contextmanager
def local_cluster(n_workers: int, *, memory_limit: str | int = "auto") -> Iterator[Any]:
    """Start a local Dask cluster of worker *processes* and a client on it.

    Parameters
    ----------
    n_workers : int
        Worker processes, each with one thread (NumPy work is not shared
        between threads; parallelism comes from processes).
    memory_limit : str or int, default "auto"
        Per-worker memory limit, as ``distributed.LocalCluster`` takes it.

    Yields
    ------
    distributed.LocalCluster
        Running cluster; its ``scheduler_address`` can be passed to
        :func:`map_batches`, and inside the block the cluster's client is the
        current client, so ``map_batches(..., backend="dask")`` uses it.

    Notes
    -----
    The dashboard is off (``dashboard_address=None``): no HTTP port is opened.
    Everything is shut down when the block exits.
    """
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise fail("PARALLEL_BAD_N_JOBS", value=n_workers)
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - pinned in requirements
        raise fail("PARALLEL_NO_DASK") from exc
    with distributed.LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        memory_limit=memory_limit,
        silence_logs=40,  # logging.ERROR
    ) as cluster, distributed.Client(cluster, set_as_default=True) as client:
        client.wait_for_workers(n_workers, timeout=120)
        yield cluster
