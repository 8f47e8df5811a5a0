"""A pre-initialised WebAssembly module: the same module whose linear memory starts as a given image.

The WASM backend runs an initialisation once (the interpreter imports the modules programs commonly
use), reads the guest's memory when that call has returned, and makes the module again with that
memory as its data: every later instance starts where the initialisation ended, at the cost of an
instantiation. Only the memory and data sections change; code, tables, exports and every other
section are copied byte for byte, so the compiled code is the same.

That is sound only for modules whose whole state lives in their memory, which
:func:`check_snapshottable` verifies: one memory of their own, no start function, no passive data with
content (nothing can copy the old data back), and no mutable global but the shadow-stack pointer,
which is back at its initial value once the initialising export has returned. Pure functions, bytes
in and bytes out.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.errors import SandboxError

MAGIC = b"\x00asm\x01\x00\x00\x00"
WASM_PAGE = 65536
#: granularity of the data segments made from an image: runs of non-zero host pages
HOST_PAGE = 4096
SEC_IMPORT, SEC_MEMORY, SEC_GLOBAL, SEC_START, SEC_CODE, SEC_DATA = 2, 5, 6, 8, 10, 11
I32_CONST, END = 0x41, 0x0B


@dataclass(frozen=True)
class Section:
    """One section: its id, where it starts (its id byte) and where its body starts and ends."""

    id: int
    start: int
    body: int
    end: int


def _leb(data: bytes, i: int, signed: bool) -> tuple[int, int]:
    """The LEB128 number at ``data[i]`` and the index after it."""
    value = shift = 0
    while True:
        if i >= len(data):
            raise SandboxError("the module ends inside a number")
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            if signed and byte & 0x40:
                value -= 1 << shift
            return value, i
        if shift > 63:
            raise SandboxError("a number in the module is too long")


def _uleb(data: bytes, i: int) -> tuple[int, int]:
    return _leb(data, i, signed=False)


def _sleb(data: bytes, i: int) -> tuple[int, int]:
    return _leb(data, i, signed=True)


def uleb(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def sleb(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        if (n == 0 and not byte & 0x40) or (n == -1 and byte & 0x40):
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def sections(wasm: bytes) -> list[Section]:
    if wasm[:8] != MAGIC:
        raise SandboxError("not a WebAssembly 1.0 module")
    out: list[Section] = []
    i = 8
    while i < len(wasm):
        size, body = _uleb(wasm, i + 1)
        if body + size > len(wasm):
            raise SandboxError(f"section {wasm[i]} runs past the end of the module")
        out.append(Section(wasm[i], i, body, body + size))
        i = body + size
    return out


def _one(found: list[Section], sid: int) -> Section | None:
    matches = [s for s in found if s.id == sid]
    if len(matches) > 1:
        raise SandboxError(f"the module has {len(matches)} sections of id {sid}")
    return matches[0] if matches else None


@dataclass(frozen=True)
class Memory:
    min_pages: int
    max_pages: int | None


def _memory(wasm: bytes, found: list[Section]) -> Memory:
    sec = _one(found, SEC_MEMORY)
    if sec is None:
        raise SandboxError("the module defines no memory")
    count, i = _uleb(wasm, sec.body)
    if count != 1:
        raise SandboxError(f"the module defines {count} memories (a snapshot needs exactly one)")
    flags = wasm[i]
    if flags not in (0, 1):
        raise SandboxError(f"the memory has flags {flags} (shared or 64-bit memories are not snapshotted)")
    low, i = _uleb(wasm, i + 1)
    high = None
    if flags & 1:
        high, i = _uleb(wasm, i)
    return Memory(low, high)


def import_kinds(wasm: bytes, found: list[Section]) -> list[int]:
    """The kind of every import, in order (0 function, 1 table, 2 memory, 3 global, 4 tag)."""
    sec = _one(found, SEC_IMPORT)
    if sec is None:
        return []
    count, i = _uleb(wasm, sec.body)
    kinds: list[int] = []
    for _ in range(count):
        for _name in range(2):
            n, i = _uleb(wasm, i)
            i += n
        kind = wasm[i]
        i += 1
        if kind == 0:  # function: a type index
            _, i = _uleb(wasm, i)
        elif kind in (1, 2):  # table: reftype + limits; memory: limits
            i += kind == 1
            flags = wasm[i]
            _, i = _uleb(wasm, i + 1)
            if flags & 1:
                _, i = _uleb(wasm, i)
        elif kind == 3:  # global: valtype + mutability
            i += 2
        elif kind == 4:  # tag: attribute + type index
            _, i = _uleb(wasm, i + 1)
        else:
            raise SandboxError(f"an import of unknown kind {kind}")
        kinds.append(kind)
    return kinds


def _imports_memory(wasm: bytes, found: list[Section]) -> bool:
    return 2 in import_kinds(wasm, found)


def _mutable_globals(wasm: bytes, found: list[Section]) -> int:
    sec = _one(found, SEC_GLOBAL)
    if sec is None:
        return 0
    count, i = _uleb(wasm, sec.body)
    mutable = 0
    for _ in range(count):
        mutable += wasm[i + 1] == 1
        i += 2
        while wasm[i] != END:  # a constant expression: skip to its end (one instruction here)
            op = wasm[i]
            if op in (0x41, 0x42):
                _, i = _sleb(wasm, i + 1)
            elif op == 0x23:
                _, i = _uleb(wasm, i + 1)
            else:
                raise SandboxError(f"a global's initialiser uses opcode {op:#x}")
        i += 1
    return mutable


@dataclass(frozen=True)
class DataSegment:
    #: None: a passive segment
    offset: int | None
    data: bytes


def data_segments(wasm: bytes) -> list[DataSegment]:
    """The module's data segments (active ones at an ``i32.const`` offset of memory 0, or passive)."""
    sec = _one(sections(wasm), SEC_DATA)
    if sec is None:
        return []
    count, i = _uleb(wasm, sec.body)
    out: list[DataSegment] = []
    for _ in range(count):
        flags, i = _uleb(wasm, i)
        offset: int | None = None
        if flags in (0, 2):
            if flags == 2:
                memory, i = _uleb(wasm, i)
                if memory != 0:
                    raise SandboxError("a data segment for another memory")
            if wasm[i] != I32_CONST:
                raise SandboxError("a data segment whose offset is not a constant")
            offset, i = _sleb(wasm, i + 1)
            if wasm[i] != END:
                raise SandboxError("a data segment whose offset is not a single constant")
            i += 1
        elif flags != 1:
            raise SandboxError(f"a data segment with flags {flags}")
        n, i = _uleb(wasm, i)
        out.append(DataSegment(offset, wasm[i : i + n]))
        i += n
    return out


def check_snapshottable(wasm: bytes) -> Memory:
    """Raise SandboxError unless a memory image captures this module's whole state; its memory."""
    found = sections(wasm)
    if _imports_memory(wasm, found):
        raise SandboxError("the module imports its memory")
    memory = _memory(wasm, found)
    if _one(found, SEC_START) is not None:
        raise SandboxError("the module has a start function (it would run again in every instance)")
    if any(s.offset is None and s.data for s in data_segments(wasm)):
        raise SandboxError("the module has passive data (memory.init could copy the old data back)")
    if _mutable_globals(wasm, found) > 1:
        raise SandboxError("the module has mutable globals besides its stack pointer")
    return memory


def image_segments(image: bytes, page: int = HOST_PAGE) -> list[DataSegment]:
    """Active segments that make a zeroed memory equal to ``image``: one per run of host pages that
    hold a non-zero byte, trimmed of the zeros at either end."""
    out: list[DataSegment] = []
    start: int | None = None
    zero = bytes(page)
    for at in range(0, len(image) + page, page):
        empty = at >= len(image) or image[at : at + page] == zero[: len(image[at : at + page])]
        if not empty and start is None:
            start = at
        elif empty and start is not None:
            chunk = image[start:at]
            lead = len(chunk) - len(chunk.lstrip(b"\x00"))
            out.append(DataSegment(start + lead, chunk[lead:].rstrip(b"\x00")))
            start = None
    return out


def _section(sid: int, body: bytes) -> bytes:
    return bytes([sid]) + uleb(len(body)) + body


def with_memory(wasm: bytes, image: bytes) -> bytes:
    """``wasm`` whose memory starts as ``image`` (its length, a whole number of wasm pages, becomes
    the memory's minimum). Passive segments (empty, per :func:`check_snapshottable`) are kept in
    their places; the active ones are replaced by the image's."""
    memory = check_snapshottable(wasm)
    if len(image) % WASM_PAGE:
        raise SandboxError(f"a memory image of {len(image)} bytes is not a whole number of pages")
    pages = len(image) // WASM_PAGE
    if pages < memory.min_pages:
        raise SandboxError(f"the image has {pages} pages, fewer than the memory's minimum {memory.min_pages}")
    if memory.max_pages is not None and pages > memory.max_pages:
        raise SandboxError(f"the image has {pages} pages, more than the memory's maximum {memory.max_pages}")
    limits = b"\x00" + uleb(pages)
    if memory.max_pages is not None:
        limits = b"\x01" + uleb(pages) + uleb(memory.max_pages)
    memory_section = _section(SEC_MEMORY, uleb(1) + limits)
    passive = [s for s in data_segments(wasm) if s.offset is None]
    segments = passive + image_segments(image)
    body = bytearray(uleb(len(segments)))
    for seg in segments:
        if seg.offset is None:
            body += b"\x01"
        else:
            body += b"\x00" + bytes([I32_CONST]) + sleb(seg.offset) + bytes([END])
        body += uleb(len(seg.data)) + seg.data
    data_section = _section(SEC_DATA, bytes(body))
    found = sections(wasm)
    has_data = any(s.id == SEC_DATA for s in found)
    out = bytearray(wasm[:8])
    for sec in found:
        if sec.id == SEC_MEMORY:
            out += memory_section
        elif sec.id == SEC_DATA:
            out += data_section
        else:
            out += wasm[sec.start : sec.end]
            if sec.id == SEC_CODE and not has_data:
                out += data_section  # the data section follows the code section
    return bytes(out)
