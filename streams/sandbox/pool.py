"""A pool of sandbox worker processes (one per core by default) with a content-hash result cache.

Workers are started by ``forkserver`` (or ``spawn``), never ``fork``: a process that holds a wasmtime
engine must not be forked. Each worker makes its own :class:`Sandbox` on first use. The cache lives in
the parent: key = mode + code + entry point + case inputs + check + limits + backend + runtime hash,
so a changed runtime, harness or limit never serves an old result. Infra failures are never cached.
"""

from __future__ import annotations

import multiprocessing
import os
import select
import threading
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace

from streams.sandbox.config import SandboxConfig
from streams.sandbox.result import ExecutionResult, Job
from streams.sandbox.service import Sandbox

_worker_sandbox: Sandbox | None = None


def _end_with(owner: int) -> None:
    """End this worker as soon as the pool's owner process ends, however it ends. Without it a pool
    whose owner was killed with SIGKILL left its workers behind for good: each holds both ends of the
    pool's call queue (so none reads EOF) and the forkserver's liveness pipe (so the forkserver, their
    parent, waits for them too)."""
    try:
        pidfd = os.pidfd_open(owner)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):
        return  # no pidfds here: the worker ends when the pool is closed, as before

    def watch() -> None:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        while not poller.poll():
            pass
        os._exit(1)  # the owner is gone: nobody will ever read this worker's results

    threading.Thread(target=watch, name="rlstream-pool-owner", daemon=True).start()


def _init_worker(config: SandboxConfig, owner: int) -> None:
    global _worker_sandbox
    _end_with(owner)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _worker_sandbox = Sandbox(config)


def _warm(backend: str) -> bool:
    assert _worker_sandbox is not None
    if backend in ("wasm", "auto"):
        _worker_sandbox.wasm()
    return True


def _work(job: Job, backend: str) -> ExecutionResult:
    assert _worker_sandbox is not None
    return _worker_sandbox.execute(job, backend)


#: what one result and one of its cases hold in memory besides their texts (the objects, their field
#: dicts, small strings and floats), measured with tracemalloc by what deleting a WASM result of 1 to
#: 3000 cases freed: 745 bytes with one case, 1,118 to 1,141 bytes a case; taken a little above
_RESULT_OVERHEAD = 1024
_CASE_OVERHEAD = 1200


def result_size(result: ExecutionResult) -> int:
    """About how many bytes ``result`` holds in memory (its texts, its cases and their objects)."""
    size = _RESULT_OVERHEAD + len(result.stdout) + len(result.stderr) + len(result.load_error or "")
    for case in result.cases:
        size += _CASE_OVERHEAD + len(case.result_repr or "") + len(case.error or "")
    return size


class ResultCache:
    """A bounded LRU of results by content hash (thread-safe): at most ``capacity`` results and at most
    ``max_bytes`` of them (:func:`result_size`). Bounded by count alone it grew a pipeline's sandbox
    worker by ~200 KiB a sample: a probe run holds hundreds of cases (inputs thousands of elements long
    among them), so 65,536 results were many GiB; a result larger than the whole budget is not kept."""

    def __init__(self, capacity: int, max_bytes: int | None = None) -> None:
        self.capacity = capacity
        self.max_bytes = max_bytes
        self._data: OrderedDict[str, tuple[ExecutionResult, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: str) -> ExecutionResult | None:
        with self._lock:
            hit = self._data.get(key)
            if hit is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return hit[0]

    def put(self, key: str, result: ExecutionResult) -> None:
        if self.capacity <= 0 or result.infra_error:
            return
        size = result_size(result)
        if self.max_bytes is not None and size > self.max_bytes:
            return
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self._data[key] = (result, size)
            self.bytes += size
            budget = self.max_bytes if self.max_bytes is not None else self.bytes
            while len(self._data) > self.capacity or self.bytes > budget:
                _, (_, dropped) = self._data.popitem(last=False)
                self.bytes -= dropped


class SandboxPool:
    """``submit(job)`` returns a future of its :class:`ExecutionResult`; ``run_many`` keeps order."""

    def __init__(
        self,
        config: SandboxConfig | None = None,
        *,
        workers: int | None = None,
        start_method: str = "forkserver",
    ) -> None:
        self.config = config or SandboxConfig()
        n = workers if workers is not None else (self.config.workers or os.cpu_count() or 1)
        self.workers = max(1, n)
        if start_method not in multiprocessing.get_all_start_methods():
            start_method = "spawn"
        ctx = multiprocessing.get_context(start_method)
        self._executor = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=ctx,
            initializer=_init_worker,
            initargs=(self.config, os.getpid()),
        )
        self.cache = ResultCache(self.config.result_cache_entries, self.config.result_cache_mb * 1024 * 1024)
        self._runtime_hash: str | None = None

    def warm_up(self, backend: str | None = None) -> None:
        """Load the compiled module in every worker now, not on the first job."""
        name = backend or self.config.backend
        futures = [self._executor.submit(_warm, name) for _ in range(self.workers)]
        for f in futures:
            f.result()

    def _key(self, job: Job, backend: str) -> str:
        if self._runtime_hash is None:
            from streams.sandbox.artifact import runtime_hash

            self._runtime_hash = runtime_hash()
        return job.cache_key(backend, self._runtime_hash + self.config.container_python)

    def submit(
        self, job: Job, backend: str | None = None, *, use_cache: bool = True
    ) -> Future[ExecutionResult]:
        name = backend or self.config.backend
        key = self._key(job, name)
        if use_cache:
            hit = self.cache.get(key)
            if hit is not None:
                done: Future[ExecutionResult] = Future()
                done.set_result(replace(hit, cache_hit=True))
                return done
        inner = self._executor.submit(_work, job, name)
        outer: Future[ExecutionResult] = Future()

        def finish(f: Future[ExecutionResult]) -> None:
            exc = f.exception()
            if exc is not None:
                outer.set_exception(exc)
                return
            result = replace(f.result(), cache_key=key)
            self.cache.put(key, result)
            outer.set_result(result)

        inner.add_done_callback(finish)
        return outer

    def run_many(
        self, jobs: Iterable[Job], backend: str | None = None, *, use_cache: bool = True
    ) -> list[ExecutionResult]:
        futures = [self.submit(j, backend, use_cache=use_cache) for j in jobs]
        return [f.result() for f in futures]

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
