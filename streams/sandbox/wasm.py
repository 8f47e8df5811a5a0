"""WASM backend: the pre-initialised CPython snapshot run by wasmtime, a fresh instance per job.

Isolation comes from WebAssembly itself: the guest sees no host directory except the stdlib folder,
read-only; it has no sockets, processes or threads; its memory is capped by the store's limits; its
wall time by epoch interruption, and ``time.sleep`` cannot outlive the deadline because
``poll_oneoff`` is served by us and clamped to it. Its stdout/stderr go to capped host buffers and the
call interface (:mod:`streams.sandbox.protocol`) goes through the ``host.call`` import — neither is a
file the guest can see. Each WASI open costs this process a real descriptor, so a guest may hold at most
:data:`MAX_OPEN_FILES` open files at once (``path_open``/``fd_close`` are shadowed by counting wrappers
that reach the real functions through a tiny trampoline module sharing the guest's memory).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import hashlib
import math
import os
import queue
import struct
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemas.errors import SandboxError
from streams.sandbox.artifact import GUEST_ENV, GUEST_THREAD_STACK, STDLIB_GUEST_DIR, Runtime, new_engine
from streams.sandbox.clocks import GuestClocks, machine_clocks
from streams.sandbox.growth import REFUSED_EXPORT
from streams.sandbox.limits import Limits, Policy, RawRun
from streams.sandbox.protocol import MAX_MESSAGE_BYTES, STOP, Session, harness_source, stub_digest

TICK_S = 0.01
MASK32 = 0xFFFFFFFF
EINVAL, ENOMEM, EFAULT, EBADF, EMFILE = 28, 48, 21, 8, 33
SUBSCRIPTION = "<QB7xIxxxxQQH6x"  # userdata, tag, clock id or fd, timeout, precision, flags: 48 bytes
EVENT = "<QHB5xQH6x"  # userdata, error, type, nbytes, flags: 32 bytes
CLOCK, FD_READ, FD_WRITE = 0, 1, 2
REALTIME, MONOTONIC = 0, 1
ABSTIME = 1
MAX_SUBSCRIPTIONS = 4096
MAX_FRAMES = 100_000
#: a call (or a guest with no call out) that writes this many times its output cap is stopped
#: (labelled output_limit; ``Session.output``)
FLOOD_FACTOR = 16
_STACK_LOCK = threading.Lock()
#: What each guest runs, as the reactor's ``turn`` in the warm interpreter (which compiles it in every
#: guest, so it is one call): ``_host.rls_boot`` (artifact.py) reseeds ``random`` (the warm module
#: imported it, so its state would be the same in every guest otherwise) and hands back the stub to
#: run: the one the warm module holds, paused at its job request, when it is this version's, else the
#: code the door hands out. (The final ``pass``: a last expression would be echoed.)
BOOTSTRAP = "import _host\n_host.rls_boot({digest!r})()\npass\n"
#: the guest may not run anything else than the harness, and sees only these files
GUEST_READ_ROOTS = (STDLIB_GUEST_DIR + "/", "/dev/null", "/dev/urandom")
GUEST_BLOCK = (
    "network", "ctypes", "signal", "introspection", "filesystem", "process", "thread", "harness_access",
)  # fmt: skip
#: modules whose WASM build differs from the container's (numpy's default integer is 32-bit on
#: wasm32): the guest reports importing them, so ``auto`` runs the program in the container instead
GUEST_ROUTE = ("numpy", "pandas", "scipy")
#: files one guest may hold open at once (each costs this process a real descriptor)
MAX_OPEN_FILES = 64
#: WASI's calls that name a path, and their parameters (path_open's are below): each is shadowed by a
#: wrapper that sees what WASI answered, so a probe the folder's walls refused is labelled by the host,
#: whatever call the program used (``os.stat``/``os.readlink`` raise no audit event in the guest)
PATH_CALLS: dict[str, str] = {
    "path_open": "i32 i32 i32 i32 i32 i64 i64 i32 i32",
    "path_filestat_get": "i32 i32 i32 i32 i32",
    "path_filestat_set_times": "i32 i32 i32 i32 i64 i64 i32",
    "path_readlink": "i32 i32 i32 i32 i32 i32",
    "path_create_directory": "i32 i32 i32",
    "path_remove_directory": "i32 i32 i32",
    "path_unlink_file": "i32 i32 i32",
    "path_rename": "i32 i32 i32 i32 i32 i32",
    "path_symlink": "i32 i32 i32 i32 i32",
    "path_link": "i32 i32 i32 i32 i32 i32 i32",
}
#: where each call's (first) path is: the index of its pointer; its length follows it
_PATH_ARG = {
    "path_open": 2, "path_filestat_get": 2, "path_filestat_set_times": 2, "path_readlink": 1,
    "path_create_directory": 1, "path_remove_directory": 1, "path_unlink_file": 1, "path_rename": 1,
    "path_symlink": 0, "path_link": 2,
}  # fmt: skip
#: WASI's answers that mean its walls refused the path (outside the folder, or a write to a read-only
#: one): EACCES, EPERM, EROFS, ENOTCAPABLE. A path that is simply not there (ENOENT) is no probe.
WALL_ERRNOS = frozenset({2, 63, 69, 76})


def _trampoline_wat() -> str:
    """The trampoline through which the shadowed calls reach WASI's own: WASI finds the caller's memory
    through the calling instance's export, so the call is made by an instance that exports the
    guest's memory."""
    calls = {**PATH_CALLS, "fd_close": "i32"}
    imports = "".join(
        f'  (import "wasi_snapshot_preview1" "{n}" (func ${n} (param {p}) (result i32)))\n'
        for n, p in calls.items()
    )
    funcs = "".join(
        f'  (func (export "{n}") (param {p}) (result i32) '
        + " ".join(f"local.get {i}" for i in range(len(p.split())))
        + f" call ${n})\n"
        for n, p in calls.items()
    )
    memory = '  (import "guest" "memory" (memory 0))\n  (export "memory" (memory 0))\n'
    return f"(module\n{imports}{memory}{funcs})\n"


class _Capped:
    """A guest stream kept up to a cap; the rest is dropped but reported as written, so the guest
    never retries (and never learns it was cut)."""

    def __init__(self, cap: int) -> None:
        self.cap, self.data, self.dropped = cap, bytearray(), False
        self.total = 0

    def write(self, data: bytes) -> int:
        room = max(0, self.cap - len(self.data))
        if room < len(data):
            self.dropped = True
        self.data.extend(data[:room])
        self.total += len(data)
        return len(data)


def _counted(
    stream: _Capped, session: Session, flood: int, stop: Callable[[], None]
) -> Callable[[bytes], int]:
    """``stream``'s writer, each write counted by the session against the request out; ``stop`` is
    called once the session says the guest floods."""
    stopped: list[bool] = []

    def write(data: bytes) -> int:
        if session.output(len(data), flood) and not stopped:
            stopped.append(True)
            stop()  # a program writing at GB/s need not be watched until its deadline
        return stream.write(data)

    return write


#: (the guest's role, the step just finished, ``perf_counter()``) marks of a run's steps
Spans = list[tuple[str, str, float]]


@dataclass
class _Call:
    """State of the job running on this thread, found by the shared host functions."""

    #: when the guest is stopped: the run's deadline, or the cap of the request out (Session.cutoff)
    deadline: float
    session: Session
    #: what the guest reads as its clocks (the host's own are never its)
    clocks: GuestClocks
    deadline_hit: bool = False
    #: the run's own deadline (``deadline`` returns to it once a capped request is answered)
    run_deadline: float = 0.0
    #: the guest's memory and allocator (looked up once, not on every crossing)
    memory: Any = None
    alloc: Any = None
    #: the real path_open/fd_close, reached through this store's trampoline instance
    real: Any = None
    open_fds: set[int] = field(default_factory=set)
    open_refused: int = 0
    #: path calls WASI's walls refused: (call, the path asked for)
    walls: list[tuple[str, str]] = field(default_factory=list)
    #: where the run's steps are marked (``WasmBackend.spans``), or None
    spans: Spans | None = None
    #: the guest's linear memory, in bytes, when the request out was handed to it (None: none yet)
    handed_memory: int | None = None


_current = threading.local()


class _Ticker:
    """Advances the engine's epoch every TICK_S; one per engine, stopped at interpreter exit."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.stop = threading.Event()
        self.count = 0
        self.thread = threading.Thread(target=self._run, name="rlstream-epoch", daemon=True)
        self.thread.start()
        atexit.register(self.close)

    def _run(self) -> None:
        while not self.stop.wait(TICK_S):
            self.engine.increment_epoch()
            self.count += 1

    def close(self) -> None:
        # joined without a bound: a ticker still inside increment_epoch while the interpreter frees
        # the engine at exit aborts the process (a panic across the C boundary). Seen on a loaded
        # machine where a one-second join gave up; once stopped the loop ends within one tick.
        self.stop.set()
        self.thread.join()


class _GuestThreads:
    """Host threads with a native stack of GUEST_THREAD_STACK that run guests one after another.
    Starting a thread per guest cost a 64 MiB mapping and wasmtime's per-thread signal stack each
    time; only the host thread is reused, never a guest: each is a fresh instance in a fresh store.
    As many threads exist as guests run at once (check mode runs two); up to ``keep`` idle ones wait
    for the next guest (each keeps what a guest's deepest recursion touched of its stack resident:
    the wasm stack is bounded at 8 MiB, so a few MiB)."""

    def __init__(self, keep: int = 2) -> None:
        self.keep = keep
        self._idle: list[queue.SimpleQueue[Any]] = []
        self._lock = threading.Lock()

    def run(self, fn: Callable[..., None], *args: Any) -> None:
        """``fn(*args)`` on a guest thread; returns when it has returned (it must not raise)."""
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            with _STACK_LOCK:
                previous = threading.stack_size(GUEST_THREAD_STACK)
                try:
                    worker = threading.Thread(target=self._serve, args=(inbox,), name="rlstream-guest")
                    worker.daemon = True
                    worker.start()
                finally:
                    threading.stack_size(previous)
        done = threading.Event()
        inbox.put((fn, args, done))
        done.wait()
        with self._lock:
            if len(self._idle) < self.keep:
                self._idle.append(inbox)
                return
        inbox.put(None)  # enough are idle: this one ends

    @staticmethod
    def _serve(inbox: queue.SimpleQueue[Any]) -> None:
        while (work := inbox.get()) is not None:
            fn, args, done = work
            try:
                fn(*args)
            finally:
                done.set()


def _memory_of_stopped_call(
    session: Session, call: _Call, outcome: dict[str, Any], limits: Limits, *, timed_out: bool
) -> None:
    """A call the run's deadline or its cap stopped is marked with what it grew the guest's memory by
    and what the store's limit still allowed (``CaseRecord.memory_grown``/``memory_left``): a call
    stopped for its time while filling the memory (its filling slowed by the machine's load) was about
    to be stopped for its memory, which the filter (v28) reads as such. The host's own reading of the
    store, never the guest's word; the memory a guest grew is never given back, so its size at the stop
    is its height."""
    rec = session.facts.outstanding
    size = outcome.get("memory_size")
    if not timed_out or rec is None or size is None or call.handed_memory is None:
        return
    rec.memory_grown = max(0, size - call.handed_memory)
    rec.memory_left = max(0, (limits.memory_mb << 20) - size)


def _poll_oneoff(caller: Any, in_ptr: int, out_ptr: int, n: int, nevents_ptr: int) -> int:
    """WASI poll_oneoff, served on the host so a sleep never outlives the job's deadline: clocks
    are waited for at most until the deadline (then the epoch check stops the guest); descriptor
    subscriptions are ready at once (the guest has only stdio and a read-only folder)."""
    call: _Call | None = getattr(_current, "call", None)
    try:
        memory = caller.get("memory")
        in_ptr, out_ptr, n, nevents_ptr = (v & MASK32 for v in (in_ptr, out_ptr, n, nevents_ptr))
        if n == 0:
            return EINVAL
        if n > MAX_SUBSCRIPTIONS:
            return ENOMEM
        size = memory.data_len(caller)
        if in_ptr + 48 * n > size or out_ptr + 32 * n > size or nevents_ptr + 4 > size:
            return EFAULT
        raw = bytes(memory.read(caller, in_ptr, in_ptr + 48 * n))
        now_ns = time.perf_counter_ns()
        ready, clocks = [], []
        for userdata, tag, which, timeout, _prec, flags in struct.iter_unpack(SUBSCRIPTION, raw):
            if tag == CLOCK:
                if which not in (REALTIME, MONOTONIC):
                    return EINVAL
                if flags & ABSTIME:
                    # a deadline on the guest's own clock, which it reads as it is now
                    guest_now = call.clocks.peek(which, now_ns) if call is not None else None
                    timeout -= guest_now if guest_now is not None else now_ns
                clocks.append((max(0, timeout), userdata))
            elif tag in (FD_READ, FD_WRITE):
                ready.append((userdata, 0, tag, 1, 0))
            else:
                return EINVAL
        if ready:
            events = ready
        else:
            due_ns = min(t for t, _ in clocks)
            until = time.perf_counter() + due_ns / 1e9
            if call is not None:
                until = min(until, call.deadline)
                # the wait the guest asked for, up to its deadline, counts as its own time (the
                # session's ``own_time``): read as asked, not as served, so a late wake-up on a loaded
                # machine adds nothing
                call.session.slept(min(due_ns / 1e9, max(0.0, call.deadline - now_ns / 1e9)))
            while (left := until - time.perf_counter()) > 0:
                time.sleep(min(left, TICK_S))
            if call is not None and time.perf_counter() >= call.deadline:
                # The sleep outlived the job: an epoch deadline of 0 stops the guest at its next
                # function entry, before it runs anything after the sleep.
                call.deadline_hit = True
                _stop_now(caller)
            # in integers: a float round trip lost a nanosecond now and then, the clock that was due
            # then did not fire, and the guest's sleep failed with ENOTSUP
            events = [(u, 0, CLOCK, 0, 0) for t, u in clocks if t <= due_ns]
        memory.write(caller, b"".join(struct.pack(EVENT, *e) for e in events), out_ptr)
        memory.write(caller, struct.pack("<I", len(events)), nevents_ptr)
        return 0
    except Exception:
        return EINVAL


def _clock_time_get(caller: Any, clock: int, _precision: int, out_ptr: int) -> int:
    """WASI clock_time_get, served from the job's clocks (``streams.sandbox.clocks``), never the
    host's: a program wrong only from some date, or once its process has lived some time, is wrong in
    the judge's runs too."""
    call: _Call | None = getattr(_current, "call", None)
    if call is None:
        return EBADF
    try:
        value = call.clocks.read(clock & MASK32, time.perf_counter_ns())
        if value is None:
            return EINVAL
        out_ptr &= MASK32
        memory = call.memory or caller.get("memory")
        if out_ptr + 8 > memory.data_len(caller):
            return EFAULT
        ctypes.memmove(_base(memory, caller) + out_ptr, struct.pack("<Q", value & 0xFFFFFFFFFFFFFFFF), 8)
        return 0
    except Exception:
        return EINVAL


def _stop_now(caller: Any) -> None:
    from wasmtime import _ffi

    context = getattr(caller, "_Caller__context", None)
    if context is not None:
        _ffi.wasmtime_context_set_epoch_deadline(context, 0)


def _follow_cutoff(caller: Any, call: _Call) -> None:
    """The epoch deadline moved to the cap of the request just handed out (``Session.cutoff``), or back
    to the run's own once it is answered: the guest is interrupted there, as at the run's deadline."""
    from wasmtime import _ffi

    cutoff = call.session.cutoff()
    due = call.run_deadline if cutoff is None else min(call.run_deadline, cutoff)
    context = getattr(caller, "_Caller__context", None)
    if due == call.deadline or context is None:
        return
    call.deadline = due
    _ffi.wasmtime_context_set_epoch_deadline(
        context, max(1, math.ceil((due - time.perf_counter()) / TICK_S)) + 1
    )


def _door(caller: Any, ptr: int, length: int, out_ptr_ptr: int, out_len_ptr: int) -> int:
    """``host.call``: one message of the call interface in, the session's answer out."""
    call: _Call | None = getattr(_current, "call", None)
    if call is None:
        return -1
    import wasmtime as wt

    entered = time.perf_counter() if call.spans is not None else 0.0
    try:
        memory, alloc = call.memory or caller.get("memory"), call.alloc or caller.get("host_alloc")
        ptr, length = ptr & MASK32, length & MASK32
        out_ptr_ptr, out_len_ptr = out_ptr_ptr & MASK32, out_len_ptr & MASK32
        size = memory.data_len(caller)
        if ptr + length > size or out_ptr_ptr + 4 > size or out_len_ptr + 4 > size:
            return -2
        if length > MAX_MESSAGE_BYTES:
            reply = call.session.oversized(length)  # never copied out: it costs what a small one does
        else:
            # one copy straight out of linear memory (bounds checked above)
            message = ctypes.string_at(_base(memory, caller) + ptr, length)
            handed = call.session.calls_handed
            reply = call.session.handle(message)
            if call.session.calls_handed != handed:
                call.handed_memory = size  # what the call grows is read against this
                call.clocks.call_begins()  # the guest's clocks may jump between calls, never within one
            if call.spans is not None:
                _door_marks(call, message[:1], entered)
        if reply is None:
            _stop_now(caller)  # a deviation: the guest runs no further instruction
            reply = STOP
        elif call.session.call_cap is not None:
            _follow_cutoff(caller, call)
        p = _call_i32(caller, alloc, len(reply)) & MASK32
        # the allocation may have grown (and moved) the memory: its base is read again
        if not p or p + len(reply) > memory.data_len(caller):
            return -2
        base = _base(memory, caller)
        ctypes.memmove(base + p, reply, len(reply))
        ctypes.memmove(base + out_ptr_ptr, struct.pack("<I", p), 4)
        ctypes.memmove(base + out_len_ptr, struct.pack("<I", len(reply)), 4)
        return 0
    except (wt.Trap, wt.WasmtimeError):
        raise  # a trap inside host_alloc (the guest ran out of memory or time): the run's outcome
    except Exception:
        return -2


def _door_marks(call: _Call, kind: bytes, entered: float) -> None:
    """``bench.sandbox --breakdown``: the guest reached the door with a message of ``kind`` at
    ``entered`` (its own work since the last answer ends there) and the host answered it now."""
    assert call.spans is not None
    role, name = call.session.role, kind.decode("ascii", "replace")
    call.spans.append((role, f"guest {name}", entered))
    call.spans.append((role, f"door {name}", time.perf_counter()))


def _call_i32(caller: Any, func: Any, *args: int) -> int:
    """``func(*args)`` for a guest function of i32s to one i32 (the allocator, the reactor's turn),
    without the general call path's per-call type lookup and conversions: the door runs once per
    message, and a guest's start calls two. Measured: ~60-70 µs a call of ``host_alloc`` through the
    general path, ~12-15 µs through this one. ``caller``: the host function's caller, or the store."""
    from wasmtime import Trap, WasmtimeError, _ffi
    from wasmtime._func import maybe_raise_last_exn

    params = (_ffi.wasmtime_val_t * len(args))()
    for i, arg in enumerate(args):
        params[i].kind = _ffi.WASMTIME_I32.value  # type: ignore[assignment]
        params[i].of.i32 = arg
    results = (_ffi.wasmtime_val_t * 1)()
    trap = ctypes.POINTER(_ffi.wasm_trap_t)()
    error = _ffi.wasmtime_func_call(
        caller._context(), ctypes.byref(func._func), params, len(args), results, 1, ctypes.byref(trap)
    )
    if error:
        maybe_raise_last_exn()
        raise WasmtimeError._from_ptr(error)
    if trap:
        maybe_raise_last_exn()
        raise Trap._from_ptr(trap)
    return int(results[0].of.i32)


def _base(memory: Any, caller: Any) -> int:
    """The host address of the guest's linear memory now."""
    return ctypes.addressof(memory.data_ptr(caller).contents)


def _real(caller: Any, call: _Call) -> Any:
    """This store's trampoline exports, made on first use."""
    if call.real is None:
        backend: WasmBackend = _current.backend
        wt = backend._wt
        imports = [
            *(backend.raw_linker.get(caller, "wasi_snapshot_preview1", n) for n in (*PATH_CALLS, "fd_close")),
            caller.get("memory"),
        ]
        call.real = wt.Instance(caller, backend.trampoline, imports).exports(caller)
    return call.real


def _path_open(caller: Any, *args: int) -> int:
    """WASI path_open, counted: a guest holding MAX_OPEN_FILES files gets EMFILE, as it would from
    a process limit of its own, and costs this process no more descriptors than that."""
    call: _Call | None = getattr(_current, "call", None)
    if call is None:
        return EBADF
    if len(call.open_fds) >= MAX_OPEN_FILES:
        call.open_refused += 1
        return EMFILE
    try:
        real = _real(caller, call)
    except Exception:  # the trampoline could not be made: no file, as if the guest had none left
        return EMFILE
    rc = int(real["path_open"](caller, *args))
    if rc in WALL_ERRNOS:
        _refused_path(caller, call, "path_open", args)
    if rc == 0:
        fd_ptr = args[-1] & MASK32
        raw = bytes(caller.get("memory").read(caller, fd_ptr, fd_ptr + 4))
        if len(raw) == 4:
            call.open_fds.add(struct.unpack("<I", raw)[0])
    return rc


def _refused_path(caller: Any, call: _Call, name: str, args: tuple[int, ...]) -> None:
    if len(call.walls) >= 16:
        return
    at = _PATH_ARG[name]
    ptr, length = args[at] & MASK32, min(args[at + 1] & MASK32, 200)
    try:
        path = bytes(caller.get("memory").read(caller, ptr, ptr + length)).decode("utf-8", "replace")
    except Exception:
        path = "?"
    call.walls.append((name, path))


def _forward(caller: Any, name: str, *args: int) -> tuple[_Call, int] | None:
    """WASI's own ``name`` called with ``args`` through this store's trampoline: (the job, its
    answer), or None outside a job or when the trampoline cannot be made."""
    call: _Call | None = getattr(_current, "call", None)
    if call is None:
        return None
    try:
        real = _real(caller, call)
    except Exception:
        return None
    return call, int(real[name](caller, *args))


def _path_call(name: str) -> Callable[..., int]:
    """A shadow of WASI's ``name`` that records a path its walls refused."""

    def shadow(caller: Any, *args: int) -> int:
        done = _forward(caller, name, *args)
        if done is None:
            return EBADF
        call, rc = done
        if rc in WALL_ERRNOS:
            _refused_path(caller, call, name, args)
        return rc

    return shadow


def _fd_close(caller: Any, fd: int) -> int:
    done = _forward(caller, "fd_close", fd)
    if done is None:
        return EBADF
    call, rc = done
    if rc == 0:
        call.open_fds.discard(fd & MASK32)
    return rc


class WasmBackend:
    """Holds the engine, the deserialized module and the pre-linked instance template. Make one per
    process (after any fork: never fork a process that holds an engine)."""

    name = "wasm"

    def __init__(self, runtime: Runtime) -> None:
        import wasmtime as wt

        self._wt = wt
        self.runtime = runtime
        self.engine = new_engine()
        try:
            self.module = wt.Module.deserialize_file(self.engine, str(runtime.warm))
        except wt.WasmtimeError as exc:
            raise SandboxError(
                f"{runtime.warm} cannot be loaded by this wasmtime: {exc}",
                hint="delete it and run `rlstream sandbox prepare`",
            ) from exc
        linker = wt.Linker(self.engine)
        linker.define_wasi()
        linker.allow_shadowing = True
        i32, i64 = wt.ValType.i32(), wt.ValType.i64()
        ty = wt.FuncType([i32] * 4, [i32])
        linker.define_func("wasi_snapshot_preview1", "poll_oneoff", ty, _poll_oneoff, True)
        linker.define_func("host", "call", ty, _door, True)
        clock_ty = wt.FuncType([i32, i64, i32], [i32])
        linker.define_func("wasi_snapshot_preview1", "clock_time_get", clock_ty, _clock_time_get, True)
        types = {"i32": i32, "i64": i64}
        for name, params in PATH_CALLS.items():
            path_ty = wt.FuncType([types[p] for p in params.split()], [i32])
            shadow = _path_open if name == "path_open" else _path_call(name)
            linker.define_func("wasi_snapshot_preview1", name, path_ty, shadow, True)
        linker.define_func("wasi_snapshot_preview1", "fd_close", wt.FuncType([i32], [i32]), _fd_close, True)
        self.pre = linker.instantiate_pre(self.module)
        self.raw_linker = wt.Linker(self.engine)
        self.raw_linker.define_wasi()
        self.trampoline = wt.Module(self.engine, bytes(wt.wat2wasm(_trampoline_wat())))
        self.harness = harness_source()
        self.ticker = _Ticker(self.engine)
        self.threads = _GuestThreads()
        #: while a list, every run appends ``perf_counter`` marks of its steps to it (``Spans``;
        #: ``bench.sandbox --breakdown``); None otherwise, where a step costs one test of it. Set
        #: before the harness is compiled below: that compiling is a run too.
        self.spans: Spans | None = None
        # compiled once per harness version, then handed to each guest through the door (its first
        # message): no file to open, no source to compile
        self.harness_code = (Path(self._compiled_harness()) / "harness.pyc").read_bytes()[16:]
        self.bootstrap = BOOTSTRAP.format(digest=stub_digest())

    def _compiled_harness(self) -> str:
        """The harness compiled to a .pyc by the guest interpreter itself, once per harness version:
        compiling 250 lines costs a WASM run more than most programs do."""
        digest = stub_digest()
        folder = self.runtime.root / f"harness-{digest}"
        pyc = folder / "harness.pyc"
        recorded = self.runtime.root / f"harness-{digest}.sha256"  # outside what the guest sees
        if pyc.is_file() and recorded.is_file():
            if hashlib.sha256(pyc.read_bytes()).hexdigest() == recorded.read_text().strip():
                return str(folder)
            raise SandboxError(f"{pyc} changed since it was made", hint=f"delete {folder} and {recorded}")
        maker = (
            "import marshal, sys\n"
            "from importlib.util import MAGIC_NUMBER\n"
            f"code = compile({self.harness!r}, '<string>', 'exec')\n"
            "sys.stdout.write((MAGIC_NUMBER + bytes(12) + marshal.dumps(code)).hex())\n"
        )
        raw = self.run(Session(b""), Limits(timeout_s=60, output_bytes=8 << 20), source=maker)
        if raw.exit_code != 0 or not raw.stdout:
            raise SandboxError(f"compiling the harness in the guest failed: {raw.stderr[-500:]!r}")
        folder.mkdir(mode=0o700, exist_ok=True)
        data = bytes.fromhex(raw.stdout.decode("ascii"))
        # Workers may race to make it: each writes its own temporary file and renames it (the
        # compiled bytes are the same), and the digest is recorded after the file is in place.
        fd, tmp = tempfile.mkstemp(dir=self.runtime.root, prefix=".harness-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o444)
        os.replace(tmp, pyc)
        fd, tmp = tempfile.mkstemp(dir=self.runtime.root, prefix=".harness-sha-")
        with os.fdopen(fd, "w") as f:
            f.write(hashlib.sha256(data).hexdigest())
        os.replace(tmp, recorded)
        return str(folder)

    def run(
        self,
        session: Session,
        limits: Limits,
        *,
        deadline: float | None = None,
        source: str | None = None,
        clock_seed: bytes | None = None,
        real_clocks: bool = False,
    ) -> RawRun:
        """Run one guest to its end, answering its messages with ``session``. ``deadline`` (a
        ``perf_counter`` time) defaults to now + the time limit; ``source`` (our own code) replaces
        the bootstrap that runs the stub; ``clock_seed`` draws the guest's clocks (a job's:
        ``clocks.clock_seed``; without one they are drawn at random); ``real_clocks``: the realtime
        clock is the host's and never jumps (``clocks.machine_clocks``)."""
        wt = self._wt
        spans = self.spans
        if spans is not None:
            spans.append((session.role, "run", time.perf_counter()))
        flooded: list[bool] = []
        store_ref: list[Any] = []

        def stop_flood() -> None:
            flooded.append(True)
            if store_ref:
                from wasmtime import _ffi

                _ffi.wasmtime_context_set_epoch_deadline(store_ref[0]._context(), 0)

        out, err = _Capped(limits.output_bytes), _Capped(limits.output_bytes)
        wasi = wt.WasiConfig()
        wasi.argv = ["python"]
        wasi.env = list(GUEST_ENV)
        # counted per call by the host as it is written (the guest's stream, not its word): a call
        # flooding past FLOOD_FACTOR times the cap is stopped (Session.output)
        flood = FLOOD_FACTOR * limits.output_bytes
        wasi.stdout_custom = _counted(out, session, flood, stop_flood)
        wasi.stderr_custom = _counted(err, session, flood, stop_flood)
        # The stdlib folder is read-only for the guest (wasmtime's default would let it write there).
        wasi.preopen_dir(str(self.runtime.stdlib_dir), STDLIB_GUEST_DIR, False)
        if source is None:
            session.stub_code = self.harness_code
        store = wt.Store(self.engine)
        store.set_wasi(wasi)
        store_ref.append(store)
        store.set_limits(memory_size=limits.memory_mb << 20)
        t0 = time.perf_counter()
        if deadline is None:
            deadline = t0 + limits.timeout_s
        ticks = max(1, math.ceil((deadline - t0) / TICK_S)) + 1
        seed = clock_seed if clock_seed is not None else os.urandom(32)
        clocks = (machine_clocks if real_clocks else GuestClocks)(seed, time.perf_counter_ns())
        call = _Call(deadline=deadline, session=session, clocks=clocks, run_deadline=deadline, spans=spans)
        store.set_epoch_deadline(ticks)
        outcome: dict[str, Any] = {}
        # (the reactor's turn echoes a last expression's value, as the interactive interpreter does)
        program = (self.bootstrap if source is None else source + "\npass\n").encode("utf-8")
        if spans is not None:
            spans.append((session.role, "store", time.perf_counter()))
        # The guest runs on a thread whose native stack is larger than the wasm stack wasmtime allows
        # it, so a deep recursion is a trap, never a crash of this process.
        self.threads.run(self._drive, store, call, program, outcome)
        duration = time.perf_counter() - t0
        if spans is not None:
            spans.append((session.role, "joined", time.perf_counter()))
        exit_code: int | None = outcome.get("exit_code")
        trap: str | None = outcome.get("trap")
        # an interrupt we caused (a flood, a deviation) is not the deadline's
        stopped = bool(flooded) or session.facts.deviation is not None
        timed_out = (bool(outcome.get("timed_out")) and not stopped) or call.deadline_hit
        if "error" in outcome:
            raise SandboxError(f"the WASM runtime failed: {outcome['error']}")
        labels: list[str] = []
        if out.dropped or err.dropped or session.over_budget:
            labels.append("output_limit")
        if call.walls:
            labels.append("filesystem")  # the host's WASI refused a path: a probe of the walls
        if flooded:
            trap = None  # we stopped it: the label says why
        if session.facts.deviation is not None and not timed_out:
            trap = None  # we stopped it: the deviation says why
        if trap is not None and not timed_out:
            if "stack" in trap.lower():
                labels.append("stack_overflow")
            elif time.perf_counter() >= deadline:
                timed_out = True
        _memory_of_stopped_call(session, call, outcome, limits, timed_out=timed_out)
        return RawRun(
            backend=self.name,
            exit_code=None if timed_out else exit_code,
            stdout=bytes(out.data),
            stderr=bytes(err.data),
            duration_s=duration,
            timed_out=timed_out,
            limit_labels=labels,
            trap=None if timed_out else trap,
            memory_exceeded=outcome.get("grow_refused", 0) > 0,
            open_files_refused=call.open_refused,
            wall_refusals=[("filesystem", f"{name} {path}") for name, path in call.walls],
        )

    def _drive(self, store: Any, call: _Call, program: bytes, outcome: dict[str, Any]) -> None:
        wt = self._wt
        _current.call = call
        _current.backend = self
        refused: Any = None
        memory: Any = None
        spans, role = call.spans, call.session.role
        if spans is not None:
            spans.append((role, "thread", time.perf_counter()))
        try:
            instance = self.pre.instantiate(store)
            exports = instance.exports(store)
            if spans is not None:
                spans.append((role, "instance", time.perf_counter()))
            refused = exports[REFUSED_EXPORT]
            memory = call.memory = exports["memory"]
            call.alloc = exports["host_alloc"]
            turn = exports["turn"]
            assert isinstance(turn, wt.Func)
            call.session.start()
            # the program's text goes into the guest's own memory, as the reactor's turn expects it
            at = _call_i32(store, call.alloc, len(program)) & MASK32
            if at and at + len(program) <= memory.data_len(store):
                memory.write(store, program, at)
            else:
                at = 0  # the reactor raises MemoryError in the guest
            if spans is not None:
                spans.append((role, "turn", time.perf_counter()))
            outcome["exit_code"] = _call_i32(store, turn, at, len(program))
        except wt.ExitTrap as exc:
            outcome["exit_code"] = exc.code
        except wt.Trap as exc:
            code = getattr(exc, "trap_code", None)
            outcome["trap"] = getattr(code, "name", None) or str(exc).splitlines()[0]
            outcome["timed_out"] = code == wt.TrapCode.INTERRUPT or "interrupt" in str(exc)
        except wt.WasmtimeError as exc:
            first = str(exc).strip().splitlines()
            outcome["trap"] = first[0] if first else "error"
            outcome["timed_out"] = "interrupt" in str(exc)
        except Exception as exc:
            outcome["error"] = repr(exc)
        finally:
            if spans is not None:
                spans.append((role, "exit", time.perf_counter()))
            if refused is not None:
                # what the store's limit refused, counted by the module's rewritten memory.grow: the
                # guest's memory size is the program's to choose (grow, free, exit), this count is not
                with contextlib.suppress(Exception):
                    outcome["grow_refused"] = int(refused.value(store))
            if memory is not None:
                # the linear memory's size where the guest stopped (it never shrinks): its height
                with contextlib.suppress(Exception):
                    outcome["memory_size"] = int(memory.data_len(store))
            _current.call = None
            store.close()
            if spans is not None:
                spans.append((role, "closed", time.perf_counter()))

    def policy(self) -> Policy:
        return Policy(block=GUEST_BLOCK, read_roots=GUEST_READ_ROOTS, route=GUEST_ROUTE)
