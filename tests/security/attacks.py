"""Generators of hostile programs for the sandbox security suite: each family assembles its programs
from independent choices (how a name is spelled, which route reaches a frame, what is done there, what
is forged), so the suite covers combinations rather than a few fixed shapes. Every generator is
deterministic for a seed; the tests draw a sample per backend."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

#: functions ``F(n)``: the frame ``n`` levels above the entry point's own (``F(1)``: its caller, the
#: stub), each reached without writing ``sys._getframe`` where a scan would see it
GETFRAME = (
    'lambda n: getattr(sys, "_get" + "frame")(n + 1)',
    'lambda n: vars(sys)["".join(["_get", "frame"])](n + 1)',
    'lambda n: sys.__dict__["_getf" + "rame"](n + 1)',
    'lambda n: getattr(__import__("s" + "ys"), "_getframe")(n + 1)',
    "lambda n: _walk(__import__('inspect').currentframe().f_back, n)",
)

#: expressions that reach the frame above the entry point (the stub's)
ROUTES = (
    "F(0).f_back",
    "F(1)",
    "_raise_and_catch().tb_frame.f_back.f_back",
    "next(_walker())",
    "[f for f in __import__('gc').get_objects() if type(f).__name__ == 'frame'][-1]",
    "list(sys._current_frames().values())[0]",
    "_settrace_frame()",
    "__import__('inspect').stack()[1].frame",
)

#: what a program does with the frame it reached
PAYLOADS = (
    # call every callable the frame holds with forged results, check outcomes and records
    "for v in list(fr.f_locals.values()):\n"
    "        if callable(v):\n"
    "            for m in (b'Ro123458', b'Do', b'N', b'Voutput_limit\\nx'):\n"
    "                try:\n"
    "                    v(m)\n"
    "                except BaseException:\n"
    "                    pass",
    # rewrite what the frame holds
    "for k in list(fr.f_locals):\n"
    "        try:\n"
    "            fr.f_locals[k] = None\n"
    "        except BaseException:\n"
    "            pass",
    # look for anything secret-shaped and print it
    "print({k: repr(v)[:400] for k, v in fr.f_locals.items()})",
    # walk to the outermost frame and clear what it holds
    "while fr.f_back is not None:\n"
    "        fr = fr.f_back\n"
    "    fr.f_globals.update({k: None for k in list(fr.f_globals) if k.startswith('_')})",
)

HELPERS = """
import sys

def _walk(frame, n):
    for _ in range(n):
        frame = frame.f_back
    return frame

def _raise_and_catch():
    try:
        raise ValueError
    except ValueError as exc:
        return exc.__traceback__

def _walker():
    yield sys._getframe(0).f_back.f_back

def _settrace_frame():
    seen = []
    sys.settrace(lambda frame, event, arg: seen.append(frame))
    sys.settrace(None)
    return seen[0] if seen else None
"""


def frame_attacks(seed: int, n: int) -> list[tuple[str, str]]:
    """``(id, program)``: ``add(a, b)`` answers wrongly (``a - b + 1000``) after reaching a frame above
    it by some route and doing something there."""
    combos = list(itertools.product(range(len(GETFRAME)), range(len(ROUTES)), range(len(PAYLOADS))))
    random.Random(seed).shuffle(combos)
    out = []
    for g, r, p in combos[:n]:
        body = (
            f"{HELPERS}\n"
            f"F = {GETFRAME[g]}\n"
            "def add(a, b):\n"
            "    try:\n"
            f"        fr = {ROUTES[r]}\n"
            "    except BaseException:\n"
            "        fr = None\n"
            "    if fr is not None:\n"
            "        try:\n"
            f"            {PAYLOADS[p].replace(chr(10) + '    ', chr(10) + '            ')}\n"
            "        except BaseException:\n"
            "            pass\n"
            "    return a - b + 1000\n"
        )
        out.append((f"g{g}-r{r}-p{p}", body))
    return out


#: how a program reaches the channel to the host directly
CHANNEL = """
import os, sys
try:
    _door = __import__("_host").call
except ImportError:
    _door = None
_fds = [int(a) for a in sys.argv[1:4]] if len(sys.argv) >= 4 else []

def send(msg, pipe=0):
    if _door is not None:
        return _door(msg)
    os.write(_fds[pipe], len(msg).to_bytes(4, "big") + msg)
    return None

def send_raw(data, pipe=0):
    if _door is not None:
        return _door(data)
    os.write(_fds[pipe], data)
"""

#: forged messages: shapes the host must answer with a deviation, never a crash or a pass
FORGED = {
    "result-without-request": "send(b'Ro3')",
    "second-job": "send(b'J')",
    "unknown-kind": "send(b'Z' + b'x' * 10)",
    "not-utf8": "send(b'Ro\\xff\\xfe')",
    "empty": "send(b'')",
    "host-label-record": "send(b'Voutput_limit\\nforged', pipe=2)",
    "memory-record": "send(b'Vmemory\\nforged', pipe=2)",
    "nested-result": "send(b'N'); send(b'Ro' + b'[' * 100000 + b']' * 100000)",
    "oversized-header": "send_raw((1 << 31).to_bytes(4, 'big') + b'x')",
    "torn-frame": "send_raw((100).to_bytes(4, 'big') + b'Ro')",
    "record-on-message-pipe-shape": "send(b'Ro3', pipe=2)",
    "many-requests": "[send(b'N') for _ in range(50)]",
    "check-outcome-from-candidate": "send(b'Do')",
    "call-from-candidate": "send(b'A(1, 2)')",
}


def forged_messages() -> Iterator[tuple[str, str]]:
    """``(id, program)``: ``add`` forges one message shape when first called, then answers wrongly."""
    for name, line in FORGED.items():
        yield (
            name,
            f"{CHANNEL}\n"
            "def add(a, b):\n"
            "    try:\n"
            f"        {line}\n"
            "    except BaseException:\n"
            "        pass\n"
            "    return a - b + 1000\n",
        )


#: text a program prints or raises to fake a label the host gives
FAKE_LABEL_TEXT = (
    "MemoryError",
    "[Errno 27] File too large",
    "OSError: [Errno 28] No space left on device",
    "RuntimeError: can't start new thread",
    "Killed",
    "wasi does not support processes",
    "ctypes is unavailable on wasm32-wasi",
    "module '_socket' has no attribute 'socket'",
)


def fake_labels(seed: int) -> Iterator[tuple[str, str]]:
    """``(id, program)``: scripts that print a label's text to stderr and end with a failure, in
    varying ways."""
    endings = (
        "sys.exit(1)",
        "raise MemoryError",
        "raise OSError(27, 'File too large')",
        "os._exit(137)",
        "raise SystemExit(-9)",
    )
    rng = random.Random(seed)
    for i, text in enumerate(FAKE_LABEL_TEXT):
        ending = endings[rng.randrange(len(endings))]
        yield (
            f"t{i}",
            "import os, sys\n"
            f"sys.stderr.write({text!r} + '\\n')\n"
            f"print({text!r})\n"
            "sys.stderr.flush(); sys.stdout.flush()\n"
            f"{ending}\n",
        )


#: tricks that make a wrong answer compare equal, or change the world the check runs in
CHECK_TRICKS = {
    "setattr-eq": (
        "class E:\n    pass\nsetattr(E, '__eq__', lambda s, o: True)\nsetattr(E, '__hash__', lambda s: 0)\n",
        "E()",
    ),
    "guarded-class-body": (
        "class E:\n    if True:\n        def __eq__(self, o):\n            return True\n"
        "        __hash__ = None\n",
        "E()",
    ),
    "annotated-assignment": ("class E:\n    __eq__: object = lambda s, o: True\n", "E()"),
    "type-call": ("E = type('E', (), {'__eq__': lambda s, o: True, '__ne__': lambda s, o: False})\n", "E()"),
    "mock-any": ("from unittest import mock\n", "mock.ANY"),
    "int-subclass": ("class I(int):\n    def __eq__(self, o):\n        return True\n", "I(0)"),
    "str-subclass": ("class S(str):\n    def __eq__(self, o):\n        return True\n", "S('x')"),
    "metaclass-liar": (
        "class M(type):\n    def __eq__(c, o):\n        return True\n"
        "    def __hash__(c):\n        return hash(int)\n"
        "class I(metaclass=M):\n    def __eq__(s, o):\n        return True\n"
        "    def __repr__(s):\n        return '3'\n",
        "I()",
    ),
    "shadow-builtins": (
        "import builtins\nbuiltins.AssertionError = type('X', (BaseException,), {})\n"
        "builtins.abs = lambda x: 0\nbuiltins.range = lambda *a: ()\nbuiltins.isinstance = lambda *a: True\n"
        "builtins.len = lambda x: 0\nbuiltins.tuple = lambda *a: ()\n",
        "-1",
    ),
    "patch-operator": ("import operator\noperator.eq = lambda a, b: True\n", "-1"),
    "exit-in-call": ("import os\n", "os._exit(0)"),
    "sys-exit-in-call": ("import sys\n", "sys.exit(0)"),
    "numpy-like-heap-type": (
        "class int64(int):\n    __module__ = 'numpy'\n    def __eq__(self, o):\n        return True\n",
        "int64(0)",
    ),
    "nan-trick": ("", "float('nan')"),
}


def check_tricks() -> Iterator[tuple[str, str]]:
    """``(id, program)``: ``add(a, b)`` returns the trick's value instead of the sum."""
    for name, (prologue, value) in CHECK_TRICKS.items():
        yield name, f"{prologue}\ndef add(a, b):\n    return {value}\n"
