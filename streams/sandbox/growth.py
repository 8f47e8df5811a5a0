"""Refused memory, counted where the guest cannot reach: a WebAssembly global.

``memory_exceeded`` on WASM must mean that the store's limit refused the guest memory, not that the
guest's memory happened to be large when it ended (a program can grow its memory, free it and exit with
an error: the size is the program's to choose). wasmtime's C API has no limiter callback, so the module
is rewritten once, when the warm module is made: every ``memory.grow`` becomes a call of one added
function that performs the same ``memory.grow`` and, when it returns -1 (the store's limit or the
memory's maximum refused it), adds one to an added mutable global, exported as :data:`REFUSED_EXPORT`.

A request can be refused before it reaches ``memory.grow``: CPython itself refuses a size past its
address space (``[0] * 10**9`` on a 32-bit interpreter) and raises ``MemoryError`` without calling the
allocator, where a 64-bit interpreter would have asked for the memory and been killed by its limit. So
the functions that raise the interpreter's out-of-memory error (``refusals``, found by name in the
module's name section) add one to the same global on entry: a request the guest's memory could not
serve, whether the allocator or the interpreter refused it, is counted. A ``MemoryError`` the program
raises itself is an instance of a class, not such a call, and counts nothing.

The guest cannot write that global: Python code in the guest runs no WebAssembly of its own choosing
(no ctypes, no JIT), the global is not in linear memory, and the only instruction that writes it is the
one in the added function, right after a refused growth. The host reads it when the run has ended.

Only function bodies that hold the two bytes of ``memory.grow 0`` (``0x40 0x00``, as LLVM encodes it)
are decoded; a body that holds them must decode with the instructions below, or the module is refused.
Pure functions, bytes in and bytes out.
"""

from __future__ import annotations

from schemas.errors import SandboxError
from streams.sandbox.snapshot import MAGIC, _section, _sleb, _uleb, import_kinds, sections, uleb

REFUSED_EXPORT = "rls_grow_refused"
SEC_CUSTOM, SEC_TYPE, SEC_FUNCTION, SEC_GLOBAL, SEC_EXPORT, SEC_CODE = 0, 1, 3, 6, 7, 10
MEMORY_GROW, CALL, END = 0x40, 0x10, 0x0B
I32 = 0x7F
_SIMPLE_TYPES = frozenset({0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F})
#: one-byte reference types (funcref, externref, exnref, anyref, ... and their bottom types)
_SHORT_REFS = frozenset(range(0x69, 0x75))
_NO_IMMEDIATE = frozenset({0x00, 0x01, 0x05, 0x0A, 0x0B, 0x0F, 0x19, 0x1A, 0x1B, 0xD1, 0xD3, 0xD4})
_BLOCKS = frozenset({0x02, 0x03, 0x04, 0x06})
_ONE_INDEX = frozenset(
    {0x07, 0x08, 0x09, 0x0C, 0x0D, 0x10, 0x12, 0x14, 0x15, 0x18, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26}
    | {0xD2, 0xD5, 0xD6}
)
_TWO_INDICES = frozenset({0x11, 0x13})
#: 0xFC sub-opcodes -> how many index immediates follow (saturating truncations: none)
_FC_INDICES = {8: 2, 9: 1, 10: 2, 11: 1, 12: 2, 13: 1, 14: 2, 15: 1, 16: 1, 17: 1}


def _valtype(data: bytes, i: int) -> int:
    """The index after the value type at ``data[i]``."""
    if data[i] in _SIMPLE_TYPES or data[i] in _SHORT_REFS:
        return i + 1
    if data[i] in (0x63, 0x64):  # (ref null? heaptype)
        return i + 2 if data[i + 1] in _SHORT_REFS else _sleb(data, i + 1)[1]
    raise SandboxError(f"a value type {data[i]:#x} this rewriter does not know")


def _blocktype(body: bytes, i: int) -> int:
    if body[i] == 0x40:
        return i + 1
    if body[i] in _SIMPLE_TYPES or body[i] in _SHORT_REFS or body[i] in (0x63, 0x64):
        return _valtype(body, i)
    return _sleb(body, i)[1]


def grow_sites(body: bytes) -> list[int]:
    """The offsets of every ``memory.grow`` in one function body (locals included); raises
    SandboxError on an instruction this decoder does not know."""
    count, i = _uleb(body, 0)
    for _ in range(count):
        _, i = _uleb(body, i)
        i = _valtype(body, i)
    sites: list[int] = []
    while i < len(body):
        op = body[i]
        at, i = i, i + 1
        if op in _NO_IMMEDIATE or 0x45 <= op <= 0xC4:
            continue
        if op in _BLOCKS:
            i = _blocktype(body, i)
        elif op in _ONE_INDEX:
            i = _uleb(body, i)[1]
        elif op in _TWO_INDICES:
            i = _uleb(body, _uleb(body, i)[1])[1]
        elif op == 0x0E:  # br_table: a vector of labels and the default
            n, i = _uleb(body, i)
            for _ in range(n + 1):
                i = _uleb(body, i)[1]
        elif op == 0x1C:  # select with types
            n, i = _uleb(body, i)
            for _ in range(n):
                i = _valtype(body, i)
        elif 0x28 <= op <= 0x3E:  # a load or store: alignment (bit 6: a memory index follows), offset
            align, i = _uleb(body, i)
            if align & 0x40:
                i = _uleb(body, i)[1]
            i = _uleb(body, i)[1]
        elif op in (0x3F, MEMORY_GROW):
            memory, i = _uleb(body, i)
            if op == MEMORY_GROW:
                if memory != 0:
                    raise SandboxError("memory.grow of a second memory")
                sites.append(at)
        elif op in (0x41, 0x42):
            i = _sleb(body, i)[1]
        elif op == 0x43:
            i += 4
        elif op == 0x44:
            i += 8
        elif op == 0xD0:  # ref.null heaptype
            i = i + 1 if body[i] in _SHORT_REFS else _sleb(body, i)[1]
        elif op == 0xFC:
            sub, i = _uleb(body, i)
            if sub > 17:
                raise SandboxError(f"instruction 0xfc {sub} in a function that grows memory")
            for _ in range(_FC_INDICES.get(sub, 0)):
                i = _uleb(body, i)[1]
        else:
            raise SandboxError(f"instruction {op:#x} in a function that grows memory (not decoded)")
    if i != len(body) or body[-1] != END:
        raise SandboxError("a function body that grows memory does not end where its size says")
    return sites


def _plain_types(wasm: bytes, start: int, end: int) -> int:
    """The number of types, all of which must be function types (no recursion groups)."""
    count, i = _uleb(wasm, start)
    for _ in range(count):
        if wasm[i] != 0x60:
            raise SandboxError(f"a type of form {wasm[i]:#x} (only plain function types are rewritten)")
        i += 1
        for _vec in range(2):
            n, i = _uleb(wasm, i)
            for _ in range(n):
                i = _valtype(wasm, i)
    if i != end:
        raise SandboxError("the type section does not end where its size says")
    return count


def function_names(wasm: bytes) -> dict[str, int]:
    """Function name -> index (imports included), from the ``name`` custom section (empty without one)."""
    out: dict[str, int] = {}
    for sec in sections(wasm):
        if sec.id != SEC_CUSTOM:
            continue
        length, i = _uleb(wasm, sec.body)
        if wasm[i : i + length] != b"name":
            continue
        i += length
        while i < sec.end:
            sub = wasm[i]
            size, i = _uleb(wasm, i + 1)
            end = i + size
            if sub == 1:  # function names: a vector of (index, name)
                count, j = _uleb(wasm, i)
                for _ in range(count):
                    index, j = _uleb(wasm, j)
                    n, j = _uleb(wasm, j)
                    out.setdefault(wasm[j : j + n].decode("utf-8", "replace"), index)
                    j += n
            i = end
    return out


def _prepend(body: bytes, code: bytes) -> bytes:
    """``body`` (a function body without its size) with ``code`` run first, after its locals."""
    count, i = _uleb(body, 0)
    for _ in range(count):
        _, i = _uleb(body, i)
        i = _valtype(body, i)
    return body[:i] + code + body[i:]


def count_refused_growth(wasm: bytes, refusals: tuple[str, ...] = ()) -> bytes:
    """``wasm`` with every ``memory.grow`` counted: a refused one adds 1 to the exported mutable i32
    global :data:`REFUSED_EXPORT`, and so does every call of a function named in ``refusals`` (each must
    be a function the module defines and names; see the module's docstring)."""
    if wasm[:8] != MAGIC:
        raise SandboxError("not a WebAssembly 1.0 module")
    found = {s.id: s for s in sections(wasm) if s.id}
    for sid in (SEC_TYPE, SEC_FUNCTION, SEC_GLOBAL, SEC_EXPORT, SEC_CODE):
        if sid not in found:
            raise SandboxError(f"the module has no section {sid} (nothing to rewrite)")
    kinds = import_kinds(wasm, sections(wasm))
    imp_funcs, imp_globals = kinds.count(0), kinds.count(3)
    types = found[SEC_TYPE]
    type_count = _plain_types(wasm, types.body, types.end)
    type_at = _uleb(wasm, types.body)[1]
    funcs = found[SEC_FUNCTION]
    func_count, func_at = _uleb(wasm, funcs.body)
    globals_ = found[SEC_GLOBAL]
    global_count, global_at = _uleb(wasm, globals_.body)
    exports = found[SEC_EXPORT]
    export_count, export_at = _uleb(wasm, exports.body)
    counter = imp_globals + global_count
    grow = imp_funcs + func_count  # the added function's index
    call = bytes([CALL]) + uleb(grow)

    names = function_names(wasm) if refusals else {}
    counted: set[int] = set()
    for wanted in refusals:
        index = names.get(wanted)
        if index is None or index < imp_funcs or index >= grow:
            raise SandboxError(f"the module defines no function named {wanted}: refusals not countable")
        counted.add(index - imp_funcs)
    g = uleb(counter)
    bump = b"\x23" + g + b"\x41\x01\x6a\x24" + g  # counter += 1

    code = found[SEC_CODE]
    body_count, i = _uleb(wasm, code.body)
    if body_count != func_count:
        raise SandboxError(f"{func_count} functions but {body_count} bodies")
    out_code = bytearray(uleb(body_count + 1))
    rewritten = 0
    for position in range(body_count):
        size, start = _uleb(wasm, i)
        end = start + size
        body = wasm[start:end]
        if position in counted:
            body = _prepend(body, bump)
        if b"\x40\x00" in body and (sites := grow_sites(body)):
            parts, last = [], 0
            for at in sites:
                parts += [body[last:at], call]
                last = at + 2  # memory.grow 0 is two bytes (grow_sites refused any other memory)
                if body[at + 1] != 0:
                    raise SandboxError("a memory.grow whose memory index is not one byte")
            body = b"".join([*parts, body[last:]])
            rewritten += len(sites)
        out_code += uleb(len(body)) + body
        i = end
    if rewritten == 0:
        raise SandboxError("the module has no memory.grow: refused growth could not be counted")
    wrapper = (
        b"\x01\x01\x7f"  # one local: the previous size
        + b"\x20\x00\x40\x00\x22\x01"  # local.get 0; memory.grow 0; local.tee 1
        + b"\x41\x7f\x46\x04\x40"  # i32.const -1; i32.eq; if
        + bump
        + b"\x0b\x20\x01\x0b"  # end; local.get 1; end
    )  # fmt: skip
    out_code += uleb(len(wrapper)) + wrapper

    name = REFUSED_EXPORT.encode()
    export = uleb(len(name)) + name + b"\x03" + g
    replaced = {
        SEC_TYPE: uleb(type_count + 1) + wasm[type_at : types.end] + b"\x60\x01\x7f\x01\x7f",
        SEC_FUNCTION: uleb(func_count + 1) + wasm[func_at : funcs.end] + uleb(type_count),
        SEC_GLOBAL: uleb(global_count + 1) + wasm[global_at : globals_.end] + b"\x7f\x01\x41\x00\x0b",
        SEC_EXPORT: uleb(export_count + 1) + wasm[export_at : exports.end] + export,
        SEC_CODE: bytes(out_code),
    }  # fmt: skip
    out = bytearray(wasm[:8])
    for sec in sections(wasm):
        out += _section(sec.id, replaced[sec.id]) if sec.id in replaced else wasm[sec.start : sec.end]
    return bytes(out)
