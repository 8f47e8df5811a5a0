"""The refused-growth counter (streams/sandbox/growth.py) on small real modules run by wasmtime: a growth
the store's limit refuses is counted where the guest cannot write; growing within the limit, or being
large when the run ends, is not; the rewritten module behaves as the original did."""

from __future__ import annotations

import pytest
import wasmtime as wt

from schemas.errors import SandboxError
from streams.sandbox.growth import REFUSED_EXPORT, count_refused_growth, grow_sites

#: a module shaped like the interpreter's: a memory of its own, a mutable stack pointer, an allocator
#: that grows memory (as wasi-libc's sbrk does) and code that never grows it
MODULE = """
(module
  (memory (export "memory") 1 100)
  (global $sp (mut i32) (i32.const 1024))
  (func $sbrk (export "sbrk") (param $pages i32) (result i32)
    (local $old i32)
    (block
      (local.set $old (memory.grow (local.get $pages)))
      (br_if 0 (i32.eq (local.get $old) (i32.const -1)))
      (return (i32.mul (local.get $old) (i32.const 65536))))
    (i32.const -1))
  (func (export "size") (result i32) (memory.size))
  (func (export "poke") (param i32) (i32.store8 offset=4 (local.get 0) (i32.const 64)))
  (func (export "sum") (param i32 i32) (result i32)
    (block (result i32) (i32.add (local.get 0) (local.get 1))))
)
"""


def _instance(limit_pages: int) -> tuple[wt.Store, dict[str, object]]:
    engine = wt.Engine()
    module = wt.Module(engine, count_refused_growth(bytes(wt.wat2wasm(MODULE))))
    store = wt.Store(engine)
    store.set_limits(memory_size=limit_pages * 65536)
    exports = wt.Instance(store, module, []).exports(store)
    return store, {name: exports[name] for name in ("sbrk", "size", "sum", REFUSED_EXPORT)}


def _refused(store: wt.Store, exports: dict[str, object]) -> int:
    counter = exports[REFUSED_EXPORT]
    assert isinstance(counter, wt.Global)
    return int(counter.value(store))


def test_growth_within_the_limit_is_not_counted_however_large_the_memory_ends() -> None:
    store, ex = _instance(limit_pages=10)
    sbrk, size = ex["sbrk"], ex["size"]
    assert sbrk(store, 8) == 65536  # type: ignore[operator]
    assert size(store) == 9  # type: ignore[operator]
    assert sbrk(store, 1) == 9 * 65536  # type: ignore[operator]  # exactly at the limit
    assert _refused(store, ex) == 0
    assert ex["sum"](store, 2, 3) == 5  # type: ignore[operator]  # the rest of the code is untouched


def test_a_growth_the_limit_refuses_is_counted_whatever_the_guest_does_next() -> None:
    store, ex = _instance(limit_pages=4)
    sbrk = ex["sbrk"]
    assert sbrk(store, 10) == -1  # type: ignore[operator]  # refused: the guest sees the usual -1
    assert _refused(store, ex) == 1
    assert sbrk(store, 1) == 65536  # type: ignore[operator]  # a smaller request still fits
    assert sbrk(store, 100) == -1  # type: ignore[operator]  # the memory's own maximum refuses too
    assert _refused(store, ex) == 2


def test_the_counter_is_not_in_linear_memory_and_only_the_rewritten_grow_writes_it() -> None:
    wasm = count_refused_growth(bytes(wt.wat2wasm(MODULE)))
    engine = wt.Engine()
    store = wt.Store(engine)
    exports = wt.Instance(store, wt.Module(engine, wasm), []).exports(store)
    memory = exports["memory"]
    assert isinstance(memory, wt.Memory)
    memory.write(store, b"\xff" * 4096, 0)  # what a guest can write: its own memory
    counter = exports[REFUSED_EXPORT]
    assert isinstance(counter, wt.Global) and counter.value(store) == 0


def test_every_grow_site_is_found_and_an_unknown_instruction_refuses_the_module() -> None:
    body_with_grow = bytes([0x00, 0x20, 0x00, 0x40, 0x00, 0x0B])  # local.get 0; memory.grow 0; end
    assert grow_sites(body_with_grow) == [3]
    # block with an empty type, then unreachable: the bytes 40 00 that are no memory.grow
    assert grow_sites(bytes([0x00, 0x02, 0x40, 0x00, 0x0B, 0x0B])) == []
    with pytest.raises(SandboxError, match="not decoded"):
        grow_sites(bytes([0x00, 0xFD, 0x0C, 0x40, 0x00, 0x0B]))
    with pytest.raises(SandboxError, match="no memory.grow"):
        count_refused_growth(
            bytes(wt.wat2wasm('(module (memory 1) (global (mut i32) (i32.const 0)) (func (export "f")))'))
        )


#: a module whose allocator refuses a size before it grows anything, and reports it through a named
#: out-of-memory function (as CPython's list repetition calls PyErr_NoMemory without calling malloc)
REFUSING = """
(module
  (memory (export "memory") 1 100)
  (global $sp (mut i32) (i32.const 1024))
  (func $sbrk (param $pages i32) (result i32) (memory.grow (local.get $pages)))
  (func $no_memory (result i32) (local $unused i32) (i32.const 0))
  (func (export "alloc") (param $bytes i32) (result i32)
    (if (result i32) (i32.gt_u (local.get $bytes) (i32.const 1000000))
      (then (call $no_memory))
      (else (call $sbrk (i32.const 1)))))
  (func (export "error") (result i32) (i32.const 0))
)
"""


def test_a_request_refused_before_any_growth_is_counted_through_the_named_function() -> None:
    engine = wt.Engine()
    module = wt.Module(engine, count_refused_growth(bytes(wt.wat2wasm(REFUSING)), ("no_memory",)))
    store = wt.Store(engine)
    ex = wt.Instance(store, module, []).exports(store)
    counter = ex[REFUSED_EXPORT]
    assert isinstance(counter, wt.Global)
    assert ex["alloc"](store, 100) >= 1  # type: ignore[operator]  # served: nothing counted
    assert ex["error"](store) == 0  # type: ignore[operator]  # an error of another kind: nothing counted
    assert counter.value(store) == 0
    assert ex["alloc"](store, 10**8) == 0  # type: ignore[operator]  # refused by the size check
    assert counter.value(store) == 1
    with pytest.raises(SandboxError, match="no function named"):
        count_refused_growth(bytes(wt.wat2wasm(REFUSING)), ("PyErr_NoMemory",))
