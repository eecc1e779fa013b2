"""The one dispatcher: every batch job of ttrsim (``simulate``, the studies and the league,
the fuzzer) runs its tasks through :func:`run_tasks`, in this process, on local joblib
workers (loky) or on a dask.distributed cluster, with one progress bar and one way of
stopping on Ctrl-C.
"""
from __future__ import annotations

import signal
import warnings

import joblib

from ttrsim._validate import check_n_jobs
from ttrsim._version import __version__

__all__ = ["run_tasks", "check_backend", "check_scheduler", "check_workers", "progress_bar"]


def progress_bar(show: bool, total: int, initial: int = 0, unit: str = "game",
                 desc: str | None = None, scale: bool = True):
    """A tqdm bar (rate and ETA) when ``show``, else ``None``; ``scale`` writes large counts
    as 12.3k."""
    if not show:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, unit=unit, unit_scale=scale, desc=desc,
                smoothing=0.1)


#: How the messages of :func:`check_workers` name the arguments: in Python (the default)
#: and on the command line.
PYTHON_NAMES = {"jobs": "n_jobs (--jobs)", "scheduler": "scheduler= (--scheduler)",
                "dask": "backend='dask' (--backend dask)"}
COMMAND_NAMES = {"jobs": "--jobs", "scheduler": "--scheduler", "dask": "--backend dask"}


def check_workers(n_jobs, backend: str, scheduler: str | None, names: dict = PYTHON_NAMES) -> None:
    """The one check of where a job's games are played, before any is played or anything
    written: ``simulate``, every study and every command that takes ``--jobs``,
    ``--backend`` and ``--scheduler`` call it (``names``: how the messages name them). A
    worker count, a backend that can run, a scheduler only with dask and always with it,
    and one that answers (:func:`check_scheduler`)."""
    check_n_jobs(n_jobs, names["jobs"])
    if scheduler is not None and backend != "dask":
        raise ValueError(f"{names['scheduler']} is the address of a dask scheduler: add "
                         f"{names['dask']} to play on its cluster (or leave "
                         f"{names['scheduler'].split(' ')[0]} out to play here)")
    if backend == "dask" and not scheduler:
        raise ValueError(f"{names['dask']} needs {names['scheduler']} ADDRESS, the address "
                         "'dask scheduler' prints, e.g. tcp://10.0.0.5:8786")
    check_backend(backend, scheduler)
    if backend == "dask":
        check_scheduler(scheduler)


def check_backend(backend: str, scheduler: str | None) -> None:
    """Refuse a backend that cannot run before anything is written (the part of
    :func:`check_workers` that needs no connection)."""
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


def check_scheduler(scheduler: str) -> None:
    """Refuse an address where no dask scheduler answers, within dask's connect timeout
    (``distributed.comm.timeouts.connect``, 30 s unless configured, e.g. by
    ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=10s``): nothing listening, a peer that
    accepts the connection and never answers (dask's own client would wait for it for
    ever), something else (a web server, a dask worker). Reads dask's TLS settings as its
    client does."""
    import asyncio
    import concurrent.futures

    import dask
    from dask.utils import parse_timedelta
    from distributed.comm import connect, get_address_host
    from distributed.security import Security

    try:
        get_address_host(scheduler)
    except ValueError as exc:
        raise ValueError(f"{scheduler} is no dask scheduler address ({exc}); give one such as "
                         "tcp://10.0.0.5:8786") from None
    timeout = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), "s")
    how = ("start one with 'dask scheduler' and give the address it prints (port 8786 unless "
           "told otherwise; 8787 is its dashboard) to scheduler= (--scheduler)")

    async def identity():
        comm = await asyncio.wait_for(
            connect(scheduler, timeout=timeout, **Security().get_connection_args("client")),
            timeout)
        try:
            await comm.write({"op": "identity"})
            return await asyncio.wait_for(comm.read(), timeout)
        finally:
            await comm.close()

    # an event loop of its own, in a thread: the caller may be running one (a notebook)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        try:
            info = pool.submit(asyncio.run, identity()).result()
        except (OSError, asyncio.TimeoutError):     # dask retries until its timeout
            raise ValueError(f"cannot reach the dask scheduler at {scheduler} (no answer "
                             f"within {timeout:g} s); {how}") from None
        except Exception as exc:                    # noqa: BLE001 - a peer speaking otherwise
            raise ValueError(f"what answers at {scheduler} is not a dask scheduler (reading "
                             f"its answer: {type(exc).__name__}); {how}") from None
    kind = info.get("type") if isinstance(info, dict) else None
    if kind != "Scheduler":
        raise ValueError(f"what answers at {scheduler} is a dask {kind or 'peer'}, not the "
                         f"scheduler; give the scheduler's address ('dask scheduler' prints it)")


def run_tasks(func, args_list: list, n_jobs: int = 1, backend: str = "loky",
              scheduler: str | None = None, *, bar=None, sizes=None):
    """Yield ``func(*args)`` for each entry of ``args_list`` as they finish (any order).

    ``backend="loky"``: in this process (``n_jobs=1``) or on ``n_jobs`` joblib workers;
    ``"dask"``: on every worker of the dask.distributed cluster at ``scheduler``
    (``n_jobs`` unused), each task on a worker with this ttrsim, a task of a worker lost
    on another worker.
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


def _on_worker(version, func, i, args):
    """A task on a dask worker, refused when the worker's ttrsim is not this one's (a worker
    that joined after the check at connection): it could play other games."""
    if version != __version__:
        raise ImportError(f"a dask worker runs ttrsim {__version__} and this process ttrsim "
                          f"{version}: install the same ttrsim on every worker")
    return i, func(*args)


def _worker_wait() -> float:
    """How long a run waits for a worker of its dask cluster, at its start and whenever the
    cluster has lost every worker: dask's setting ``ttrsim.worker-wait`` (seconds or a
    duration such as ``"30m"``, e.g. ``DASK_TTRSIM__WORKER_WAIT=30m`` for workers still
    queued on a batch system), 60 s unless set."""
    import dask
    from dask.utils import parse_timedelta

    return parse_timedelta(dask.config.get("ttrsim.worker-wait", 60), "s")


def _no_worker(scheduler, wait: float) -> ValueError:
    return ValueError(f"the dask scheduler at {scheduler} has had no worker for {wait:g} s; "
                      f"start some with 'dask worker {scheduler}' (DASK_TTRSIM__WORKER_WAIT=30m "
                      "waits longer, as for workers queued on a batch system)")


def _dask_client(scheduler, stop):
    """A client of the scheduler at ``scheduler`` that has a worker, or a ValueError that
    says what is wrong, never a wait without end; ``None`` when ``stop`` is set first."""
    import time

    from distributed import Client

    check_scheduler(scheduler)
    try:
        client = Client(scheduler, set_as_default=False)     # not the caller's default client
    except OSError as exc:
        raise ValueError(f"cannot reach the dask scheduler at {scheduler} ({exc}); start one "
                         "with 'dask scheduler' and give its address to scheduler= "
                         "(--scheduler)") from None
    wait = _worker_wait()
    deadline = time.monotonic() + wait
    try:
        while not stop.is_set():    # in short waits, so that a stop is heard within a second
            try:
                client.wait_for_workers(1, timeout=min(1, max(deadline - time.monotonic(), 0.01)))
                break
            except TimeoutError:
                if time.monotonic() > deadline:
                    raise
        # another ttrsim (or none) on a worker could play other games (or none)
        workers = client.get_versions(packages=["ttrsim"])["workers"]
    except (TimeoutError, OSError):
        client.close()
        raise _no_worker(scheduler, wait) from None
    if stop.is_set():
        client.close()
        return None
    other = {w: v["packages"].get("ttrsim") for w, v in workers.items()
             if v["packages"].get("ttrsim") != __version__}
    if other:
        client.close()
        worker, version = next(iter(other.items()))
        raise ImportError(f"the dask worker at {worker} "
                          f"{'has no ttrsim' if version is None else f'runs ttrsim {version}'} "
                          f"({len(other)} of {len(workers)} workers differ from this process, "
                          f"ttrsim {__version__}): install the same ttrsim on every worker")
    return client


def _on_cluster(func, args_list, scheduler):
    """``(i, func(*args_list[i]))`` as the tasks finish on the dask cluster at ``scheduler``
    (:func:`_cluster_results`), which a thread of its own drives. Ctrl-C reaches the main
    thread alone, and must never land in one of dask's blocking calls: one interrupted
    early leaves a failing callback on dask's event loop, which prints a traceback. So the
    caller's thread only waits on a queue here; left early (Ctrl-C, an error, the caller
    closing), it tells the thread to stop, and waits while that cancels the unfinished
    tasks and closes its client (a second or so; up to dask's connect timeout when the
    scheduler has not answered yet)."""
    import queue
    import threading

    news = queue.Queue()
    stop = threading.Event()

    def drive():
        try:
            for results in _cluster_results(func, args_list, scheduler, stop):
                news.put((results, None))
        except BaseException as exc:            # noqa: BLE001 - raised in the caller's thread
            news.put(([], exc))
        else:
            news.put((None, None))

    driver = threading.Thread(target=drive, name="ttrsim-dask", daemon=True)
    driver.start()
    try:
        while True:
            results, error = news.get()
            if error is not None:
                raise error
            if results is None:
                return
            yield from results
    finally:
        stop.set()
        driver.join()


def _cluster_results(func, args_list, scheduler, stop):
    """Lists of ``(i, func(*args_list[i]))`` as the tasks finish on the workers of the dask
    cluster at ``scheduler``, however few (joblib's dask backend plays in this process when
    the cluster has one thread), until they are all done or ``stop`` is set. A worker lost
    mid-task costs only that task, which the scheduler gives to another worker; a cluster
    left without any worker for :func:`_worker_wait` ends the run. Left early, the
    unfinished tasks are cancelled."""
    import queue
    import time

    from distributed import KilledWorker

    client = _dask_client(scheduler, stop)
    if client is None:
        return
    with client:
        n = len(args_list)
        futures = client.map(_on_worker, [__version__] * n, [func] * n, range(n), args_list,
                             pure=False)
        finished = queue.Queue()
        for future in futures:
            future.add_done_callback(finished.put)
        left, alone_since, patience = n, None, _worker_wait()
        try:
            while left and not stop.is_set():
                try:
                    done = [finished.get(timeout=0.2)]
                except queue.Empty:
                    if client.nthreads():
                        alone_since = None
                    elif alone_since is None:
                        alone_since = time.monotonic()
                    elif time.monotonic() - alone_since > patience:
                        raise _no_worker(scheduler, patience) from None
                    continue
                while not finished.empty():
                    done.append(finished.get())
                left -= len(done)
                yield client.gather(done)
        except KilledWorker as exc:
            raise ValueError(f"dask workers died running a task of this run ({exc}): a worker "
                             f"without ttrsim {__version__}, out of memory or crashing does "
                             "this; see the workers' logs") from None
        finally:
            client.cancel(futures)


def _execute(func, args_list, n_jobs, backend, scheduler):
    if not args_list:
        return
    if backend == "dask":
        yield from _on_cluster(func, args_list, scheduler)
        return
    tasks = (joblib.delayed(_indexed)(func, i, a) for i, a in enumerate(args_list))
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
