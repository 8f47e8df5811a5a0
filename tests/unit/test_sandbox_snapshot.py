"""A pre-initialised module: the same module whose memory starts where an initialisation left it, and
the modules it refuses (whose state a memory image would not capture)."""

from __future__ import annotations

import pytest
import wasmtime as wt

from schemas.errors import SandboxError
from streams.sandbox.snapshot import (
    WASM_PAGE,
    check_snapshottable,
    data_segments,
    image_segments,
    sections,
    with_memory,
)

#: a module shaped like the interpreter's: one memory, data, a stack pointer, exports that change memory
MODULE = """
(module
  (memory (export "memory") 1)
  (global $sp (mut i32) (i32.const 4096))
  (global $k i32 (i32.const 7))
  (data (i32.const 16) "hello")
  (func (export "init")
    (global.set $sp (i32.sub (global.get $sp) (i32.const 16)))
    (i32.store8 (i32.const 100) (i32.const 42))
    (drop (memory.grow (i32.const 1)))
    (i32.store8 (i32.const 65600) (i32.const 9))
    (global.set $sp (i32.add (global.get $sp) (i32.const 16))))
  (func (export "load") (param i32) (result i32) (i32.load8_u (local.get 0)))
  (func (export "pages") (result i32) (memory.size))
  (func (export "sp") (result i32) (global.get $sp)))
"""


def _wasm(wat: str) -> bytes:
    return bytes(wt.wat2wasm(wat))


def _instance(engine: wt.Engine, wasm: bytes) -> tuple[wt.Store, dict[str, object]]:
    store = wt.Store(engine)
    instance = wt.Instance(store, wt.Module(engine, wasm), [])
    return store, dict(instance.exports(store).items())


def test_an_instance_of_the_snapshot_starts_where_the_initialisation_ended() -> None:
    engine = wt.Engine()
    wasm = _wasm(MODULE)
    store, exports = _instance(engine, wasm)
    exports["init"](store)  # type: ignore[operator]
    memory = exports["memory"]
    assert isinstance(memory, wt.Memory)
    image = bytes(memory.read(store, 0, memory.data_len(store)))

    snapshot = with_memory(wasm, image)
    fresh, got = _instance(engine, snapshot)
    load = got["load"]
    assert got["pages"](fresh) == 2  # type: ignore[operator]
    assert [load(fresh, 16 + i) for i in range(5)] == list(b"hello")  # type: ignore[operator]
    assert load(fresh, 100) == 42 and load(fresh, 65600) == 9  # type: ignore[operator]
    assert got["sp"](fresh) == 4096  # type: ignore[operator]  # back where the export left it
    # every section but memory and data is the original's, byte for byte
    kept = [(s.id, wasm[s.body : s.end]) for s in sections(wasm) if s.id not in (5, 11)]
    assert kept == [(s.id, snapshot[s.body : s.end]) for s in sections(snapshot) if s.id not in (5, 11)]


def test_image_segments_hold_the_non_zero_pages_only() -> None:
    image = bytearray(3 * WASM_PAGE)
    image[5000:5003] = b"abc"
    image[70000] = 1
    segments = image_segments(bytes(image))
    assert [(s.offset, s.data) for s in segments] == [(5000, b"abc"), (70000, b"\x01")]
    assert image_segments(bytes(WASM_PAGE)) == []


@pytest.mark.parametrize(
    ("wat", "why"),
    [
        ("(module (memory 1) (func $s) (start $s))", "start function"),
        ('(module (import "m" "mem" (memory 1)))', "imports its memory"),
        ("(module (memory 1) (global (mut i32) (i32.const 0)) (global (mut i32) (i32.const 0)))", "mutable"),
        ('(module (memory 1) (data "x"))', "passive data"),
        ("(module (memory 1) (memory 1))", "memories"),
        ("(module)", "no memory"),
    ],
)
def test_modules_whose_state_an_image_would_not_capture_are_refused(wat: str, why: str) -> None:
    with pytest.raises(SandboxError, match=why):
        check_snapshottable(_wasm(wat))


def test_an_image_that_does_not_fit_the_memory_is_refused() -> None:
    wasm = _wasm('(module (memory 2 3) (data (i32.const 0) "x"))')
    with pytest.raises(SandboxError, match="whole number of pages"):
        with_memory(wasm, b"\x00" * 100)
    with pytest.raises(SandboxError, match="fewer than"):
        with_memory(wasm, bytes(WASM_PAGE))
    with pytest.raises(SandboxError, match="more than"):
        with_memory(wasm, bytes(4 * WASM_PAGE))
    grown = with_memory(wasm, b"y" + bytes(3 * WASM_PAGE - 1))
    assert [(s.offset, s.data) for s in data_segments(grown)] == [(0, b"y")]


def test_garbage_is_refused_with_a_sandbox_error() -> None:
    for junk in (b"", b"not wasm", b"\x00asm\x01\x00\x00\x00\x05\xff"):
        with pytest.raises(SandboxError):
            with_memory(junk, bytes(WASM_PAGE))
