"""The one dispatcher: every batch job of ttrsim (``simulate``, the paired studies, the
fuzzer) runs its tasks through :func:`run_tasks`, in this process, on local joblib workers
(loky) or on a dask.distributed cluster, with one progress bar and one way of stopping on
Ctrl-C.
"""
from __future__ import annotations

import signal
import warnings

import joblib

from ttrsim._validate import check_n_jobs

__all__ = ["run_tasks", "check_backend", "progress_bar"]


def progress_bar(show: bool, total: int, initial: int = 0, unit: str = "game",
                 desc: str | None = None, scale: bool = True):
    """A tqdm bar (rate and ETA) when ``show``, else ``None``; ``scale`` writes large counts
    as 12.3k."""
    if not show:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, unit=unit, unit_scale=scale, desc=desc,
                smoothing=0.1)


def check_backend(backend: str, scheduler: str | None) -> None:
    """Refuse a backend that cannot run before anything is written."""
    if backend == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ImportError("the dask backend needs dask.distributed, which is not installed: "
                              'pip install -e ".[dask]" in the ttrsim checkout') from None
        if not scheduler:
            raise ValueError("the dask backend needs the scheduler address (scheduler=/--scheduler)")
    elif backend != "loky":
        raise ValueError(f"unknown backend {backend!r}: use 'loky' (local) or 'dask' (cluster)")


def run_tasks(func, args_list: list, n_jobs: int = 1, backend: str = "loky",
              scheduler: str | None = None, *, bar=None, sizes=None):
    """Yield ``func(*args)`` for each entry of ``args_list`` as they finish (any order).

    ``n_jobs=1`` runs them in this process; otherwise on joblib workers
    (``backend="loky"``) or on a dask.distributed cluster (``"dask"``, at ``scheduler``).
    ``bar`` (from :func:`progress_bar`) advances by ``sizes[i]`` (default 1) when task ``i``
    finishes. Stopped early (Ctrl-C, an error, the caller closing the generator), the
    tasks still queued are cancelled and the bar is closed; use it inside
    ``contextlib.closing`` so that this happens at once.
    """
    check_n_jobs(n_jobs)
    check_backend(backend, scheduler)
    results = _execute(func, args_list, n_jobs, backend, scheduler)
    try:
        for i, value in results:
            if bar is not None:
                bar.update(1 if sizes is None else sizes[i])
            yield value
    finally:
        # Every finished task has been handed over: joblib's warning about the cancelled
        # ones says nothing the caller needs.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*tasks which were still being processed",
                                    category=UserWarning)
            results.close()
        if bar is not None:
            bar.close()


def _indexed(func, i, args):
    return i, func(*args)


def _execute(func, args_list, n_jobs, backend, scheduler):
    if not args_list:
        return
    tasks = (joblib.delayed(_indexed)(func, i, a) for i, a in enumerate(args_list))
    if backend == "dask":
        from distributed import Client

        try:
            client = Client(scheduler)
        except OSError as exc:
            raise ValueError(f"cannot reach the dask scheduler at {scheduler} ({exc}); start one "
                             "with 'dask scheduler' and give its address to scheduler= "
                             "(--scheduler)") from None
        with client, joblib.parallel_config(backend="dask"):
            try:
                client.wait_for_workers(1, timeout=60)
            except (TimeoutError, OSError):
                raise ValueError(f"the dask scheduler at {scheduler} has had no worker for 60 s; "
                                 f"start some with 'dask worker {scheduler}'") from None
            yield from joblib.Parallel(n_jobs=-1, return_as="generator_unordered")(tasks)
        return
    if n_jobs == 1 or len(args_list) == 1:
        for i, a in enumerate(args_list):
            yield i, func(*a)
        return
    # Workers ignore SIGINT from their start: a Ctrl-C (sent by the terminal to the whole
    # process group) interrupts this process alone, which then cancels the workers,
    # instead of interrupting every worker too (each printing a traceback).
    with joblib.parallel_config(backend="loky", initializer=_ignore_sigint):
        results = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")(tasks)
    yield from results


def _ignore_sigint():
    """Initializer of every local worker: leave Ctrl-C to the main process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
