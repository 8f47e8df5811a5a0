"""What a fresh WASM guest's start costs, beside ``bench.sandbox --breakdown``: (1) the reactor's turn
of tiny programs (its own cost, compiling, ``random.seed()``), (2) a page fault in a fresh instance's
memory (1000 pages touched from the host: an image page written, one read, a zero page past the image
written; then the same pages again), (3) wasmtime's pooling allocator against the default one,
executions of the empty program alternating (``--keep``: its ``linear_memory_keep_resident`` sizes, MiB).

    .venv/bin/python -m bench.wasm_start [--rounds 40] [--pool-rounds 200] [--keep 0,16]
"""

from __future__ import annotations

import argparse
import ctypes
import resource
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.revision import ROOT


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def turns(wasm: Any, rounds: int) -> None:
    from streams.sandbox import Limits
    from streams.sandbox.protocol import Session

    limits = Limits(timeout_s=10.0, memory_mb=512)
    end = "\nimport os\nos._exit(0)"
    sources = {
        "import os; os._exit(0)": end.strip(),
        "20 assignments, then exit": "\n".join(f"x{i} = {i}" for i in range(20)) + end,
        "random.seed(), then exit": "import random\nrandom.seed()" + end,
    }
    seen: dict[str, list[tuple[float, int]]] = {name: [] for name in sources}
    for _ in range(rounds):
        for name, source in sources.items():
            marks: list[tuple[str, str, float]] = []
            wasm.spans = marks
            f0 = _faults()
            raw = wasm.run(Session(b""), limits, source=source)
            f1 = _faults()
            wasm.spans = None
            if raw.exit_code != 0:
                raise SystemExit(f"{name}: {raw}")
            at = {what: t for _, what, t in marks}
            seen[name].append((1000 * (at["exit"] - at["turn"]), f1 - f0))
    print(f"(1) the reactor's turn to the guest's exit (median of {rounds}):")
    for name, rows in seen.items():
        ms, faults = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
        print(f"  {name:28s} {ms:6.3f} ms   {faults:5.0f} page faults in the whole run")


def page_touches(wasm: Any, rounds: int) -> None:
    import wasmtime as wt

    def trial(offset: int, write: bool) -> tuple[float, float, int]:
        store = wt.Store(wasm.engine)
        store.set_wasi(wt.WasiConfig())
        memory = wasm.pre.instantiate(store).exports(store)["memory"]
        base = ctypes.addressof(memory.data_ptr(store).contents) + offset
        took = []
        for _ in range(2):
            f0, t0 = _faults(), time.perf_counter()
            for i in range(1000):
                if write:
                    ctypes.memset(base + i * 4096, 1, 1)
                else:
                    ctypes.string_at(base + i * 4096, 1)
            took.append((1e6 * (time.perf_counter() - t0) / 1000, _faults() - f0))
        store.close()
        return took[0][0], took[1][0], took[0][1]

    print(f"(2) 1000 pages of a fresh instance touched from the host (median of {rounds}; µs a page):")
    cases = (("image page written", 4 << 20, True), ("image page read", 4 << 20, False))
    for name, offset, write in (*cases, ("zero page past the image written", 36 << 20, True)):
        rows = [trial(offset, write) for _ in range(rounds)]
        first, again = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
        faults = statistics.median(r[2] for r in rows)
        print(f"  {name:34s} first touch {first:5.2f}, again {again:5.2f} ({faults:.0f} faults a 1000)")


def _pooled_engine(keep: int) -> Callable[[], Any]:
    def make() -> Any:
        import wasmtime as wt
        from wasmtime import _ffi

        from streams.sandbox.artifact import ASYNC_STACK_BYTES, WASM_STACK_BYTES

        # artifact.new_engine's settings (the compiled module loads only into an engine like it)
        cfg = wt.Config()
        cfg.epoch_interruption = True
        _ffi.wasmtime_config_async_stack_size_set(cfg.ptr(), ASYNC_STACK_BYTES)
        cfg.max_wasm_stack = WASM_STACK_BYTES
        pool = _ffi.wasmtime_pooling_allocation_config_new()
        _ffi.wasmtime_pooling_allocation_config_total_core_instances_set(pool, 64)
        _ffi.wasmtime_pooling_allocation_config_total_memories_set(pool, 16)
        _ffi.wasmtime_pooling_allocation_config_total_tables_set(pool, 16)
        _ffi.wasmtime_pooling_allocation_config_table_elements_set(pool, 200_000)
        _ffi.wasmtime_pooling_allocation_config_max_core_instance_size_set(pool, 64 << 20)
        _ffi.wasmtime_pooling_allocation_config_linear_memory_keep_resident_set(pool, keep)
        _ffi.wasmtime_pooling_allocation_strategy_set(cfg.ptr(), pool)
        _ffi.wasmtime_pooling_allocation_config_delete(pool)
        return wt.Engine(cfg)

    return make


def pooling(rounds: int, keeps: list[int]) -> None:
    from bench.sandbox import EMPTY_PROGRAM, _cpu
    from streams.sandbox import Job, Limits, Sandbox, SandboxConfig
    from streams.sandbox import wasm as wasm_module

    limits = Limits(timeout_s=10.0, memory_mb=512)
    job = Job(mode="cases", code=EMPTY_PROGRAM, entry_point="f", inputs=("()",), limits=limits)
    sides: dict[str, Sandbox] = {"default allocator": Sandbox(SandboxConfig())}
    runtime = sides["default allocator"].wasm().runtime
    for keep in keeps:
        sandbox = Sandbox(SandboxConfig())
        # the backend makes its engine with the module's new_engine: a pooled one, for this backend only
        namespace = vars(wasm_module)
        made = namespace["new_engine"]
        namespace["new_engine"] = _pooled_engine(keep << 20)
        try:
            sandbox._wasm = wasm_module.WasmBackend(runtime)
        finally:
            namespace["new_engine"] = made
        sides[f"pooling, keep {keep} MiB"] = sandbox
    seen: dict[str, list[tuple[float, int]]] = {name: [] for name in sides}
    for rnd in range(rounds + 3):
        for name, sandbox in sides.items():
            c0, f0 = _cpu(), _faults()
            r = sandbox.execute(job, "wasm")
            c1, f1 = _cpu(), _faults()
            if r.infra_error or not r.cases or r.cases[0].status != "ok":
                raise SystemExit(f"{name}: {r}")
            if rnd >= 3:
                seen[name].append((1000 * (c1 - c0), f1 - f0))
    print(f"(3) the empty program, {rounds} executions each, alternating (CPU ms, median):")
    for name, rows in seen.items():
        cpu, faults = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
        print(f"  {name:24s} {cpu:6.2f} ms   {faults:5.0f} page faults")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--pool-rounds", type=int, default=200)
    ap.add_argument("--keep", default="0,16", help="linear_memory_keep_resident sizes to try, MiB")
    args = ap.parse_args()

    import os

    from streams.sandbox import Sandbox, SandboxConfig

    wasm = Sandbox(SandboxConfig()).wasm()
    print(f"a fresh WASM guest's start, load average {os.getloadavg()[0]:.1f}")
    turns(wasm, args.rounds)
    page_touches(wasm, max(5, args.rounds // 3))
    pooling(args.pool_rounds, [int(k) for k in args.keep.split(",") if k.strip()])
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
