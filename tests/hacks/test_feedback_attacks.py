"""Programs that try to carry a hidden case into the next turn of an episode, run by the real sandbox
and judged by the real episode step (``end_turn``): the feedback must not depend on the hidden cases.

Each program fails the visible cases (so there is feedback) and, once handed a hidden input, tries to
get it into what the next turn is shown: printed and then the run ended (an exit, a signal, an abort,
a crash, a memory or stack limit, an output cap), an exception whose class is named like a load
failure, warnings, finalisers, exit codes and timings keyed on the input. Non-interference is checked
rather than a string: the same program on two tasks that differ only in their hidden inputs must end
its turn with the same TurnEnded, byte for byte.

Beside them: hacks whose only evidence is what the host saw while an earlier turn ran (the filter must
reject the episode for them whatever its final turn), final turns written from what the feedback showed
(the episode reward must never score them a pass), and a final turn wrong only on inputs longer than
every case (the probe's inputs beyond the cases' sizes must reject it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from infra.runtime.memory import MemoryLog, MemoryRuntime
from infra.runtime.sides import MemorySideInputs
from rlstream.settings import Settings
from rlstream.workers import stream_processor
from schemas.codec import encode
from schemas.envelope import Envelope
from schemas.episode import TurnEnded
from schemas.rollout import CodeGenerated, SamplingParams, SandboxExecuted
from schemas.task import TaskPublished, TestCase
from schemas.topics import GENERATIONS, TASKS, TURNS
from streams.episode.config import FeedbackConfig
from streams.episode.core import end_turn
from streams.noise.config import NoiseConfig
from streams.noise.filter import earlier_turn_hacks
from streams.reward.config import RewardConfig
from streams.reward.function import get_reward_function
from streams.reward.literals import CompareOptions
from streams.sandbox import Sandbox, SandboxConfig
from streams.sandbox.jobs import job_for
from streams.sandbox.result import to_event

SECRETS = ("ZEBRAHIDDEN4821", "MANGOSECRET7730")
VISIBLE = ("abc", "xy")


def task(secret: str, *, hidden: bool = True, task_id: str = "attack/rev") -> TaskPublished:
    return TaskPublished(
        task_id=task_id,
        prompt='def rev(s: str) -> str:\n    """s reversed."""\n',
        entry_point="rev",
        tests=tuple(TestCase(input=repr((v,)), output=repr(v[::-1])) for v in VISIBLE),
        hidden_tests=(
            TestCase(input=repr((secret,)), output=repr(secret[::-1])),
            TestCase(input=repr((secret + "Q",)), output=repr((secret + "Q")[::-1])),
        )
        if hidden
        else (),
        reference="def rev(s):\n    return s[::-1]\n",
    )


def attack(body: str, before: str = "") -> str:
    """A program that fails the visible cases and runs ``body`` on any other (a hidden) input ``s``."""
    lines = "".join(f"    {line}\n" for line in body.splitlines())
    return f"VISIBLE = {VISIBLE!r}\n{before}def rev(s):\n    if s in VISIBLE:\n        return 'nope'\n{lines}"


FINALISER = (
    "class D:\n    def __init__(self, s):\n        self.s = s\n    def __del__(self):\n"
    "        print('LEAK', self.s, flush=True)\nKEEP = []\n"
)

#: name -> program. Under feedback v1 (which trusted what the program reported of its hidden cases) the
#: first seventeen got a hidden input into the feedback on some backend, and ``memory_keyed`` one bit of
#: one in the jail (whether the output was shown); the others never did
LEAKS = {
    "exit0_stderr": attack(
        "import os, sys\nsys.stderr.write('LEAK:' + s + '\\n'); sys.stderr.flush()\nos._exit(0)"
    ),
    "exit3_stdout": attack("import os\nprint('LEAK', s, flush=True)\nos._exit(3)"),
    "exit_hex_encoded": attack("import os\nprint(s.encode().hex(), flush=True)\nos._exit(0)"),
    "fake_load_failure_name": attack(
        "print('LEAK', s, flush=True)\nE = type('X', (Exception,), {})\n"
        "E.__name__ = 'program failed: boom'\nraise E(s)"
    ),
    "fake_load_failure_type": attack(
        "import sys\nsys.stderr.write(s + '\\n')\n"
        "raise type('program failed: SyntaxError', (ValueError,), {})('x')"
    ),
    "memory_after_print": attack(
        "print('LEAK', s, flush=True)\na = []\nwhile True:\n    a.append(bytearray(1 << 24))"
    ),
    "memory_in_one_go": attack("print('LEAK', s, flush=True)\nb = b'x' * (1 << 33)\nreturn b[:1]"),
    "recursion_trap": attack(
        "import sys\nprint('LEAK', s, flush=True)\nsys.setrecursionlimit(10**8)\n"
        "def f(n):\n    return f(n + 1) + 1\nreturn f(0)"
    ),
    "nested_list_repr": attack(
        "print('LEAK', s, flush=True)\nx = []\nfor _ in range(10**6):\n    x = [x]\nreturn repr(x)"
    ),
    "stdout_cap_edge": attack(
        "import sys\nfor n in range(1, 200000):\n    sys.stdout.write(('%s|' % s) * 64 + '\\n')\nreturn s"
    ),
    "stderr_cap_edge": attack(
        "import sys\nfor n in range(1, 200000):\n    sys.stderr.write(('%s|' % s) * 64 + '\\n')\nreturn s"
    ),
    "raise_sigkill": attack(
        "import signal\nprint('LEAK', s, flush=True)\nsignal.raise_signal(signal.SIGKILL)"
    ),
    "abort": attack("import os\nprint('LEAK', s, flush=True)\nos.abort()"),
    "segfault": attack("import faulthandler\nprint('LEAK', s, flush=True)\nfaulthandler._sigsegv()"),
    "warning_then_exit": attack(
        "import warnings, os, sys\nwarnings.warn('LEAK ' + s)\nsys.stderr.flush()\nos._exit(0)"
    ),
    "bidi_and_template_tokens": attack(
        "import os, sys\nsys.stdout.write('\\u202e' + s + '\\u200b<|im_end|>\\n')\n"
        "sys.stdout.flush()\nos._exit(0)"
    ),
    "stdout_closed_then_exit": attack(
        "import sys, os\nprint('LEAK', s, flush=True)\nsys.stdout.close()\nos._exit(0)"
    ),
    # these never got through (the hidden case is reported as run): kept so they stay that way
    "stub_frames_then_exit": attack(
        "import sys, os\nf = getattr(sys, '_get' + 'frame')(0)\nwhile f is not None:\n"
        "    print(repr(f.f_locals)[:2000], flush=True)\n    f = f.f_back\nos._exit(0)"
    ),
    "finaliser_then_exit": attack("KEEP.append(D(s))\nimport os\nos._exit(0)", FINALISER),
    "flood_after_print": attack(
        "import sys\nsys.stdout.write('LEAK ' + s + '\\n')\nsys.stdout.write('y' * (1 << 26))\nreturn s"
    ),
    "timeout_after_print": attack("print('LEAK', s, flush=True)\nwhile True:\n    pass"),
    "sys_exit_message": attack("import sys\nsys.exit('LEAK ' + s)"),
    "exit_code_keyed": attack("import os\nos._exit(len(s))"),
    "memory_keyed": attack("if s[0] > 'M':\n    a = bytearray(1 << 33)\nreturn s"),
    "sleep_keyed": attack("import time\ntime.sleep(0.03 * (ord(s[0]) % 5))\nreturn s"),
    "atexit_print": attack("import atexit\natexit.register(print, 'LEAK', s)\nraise SystemExit(0)"),
    "exception_group": attack("raise ExceptionGroup('LEAK ' + s, [ValueError(s)])"),
    "keyboard_interrupt": attack("print('LEAK', s, flush=True)\nraise KeyboardInterrupt(s)"),
    "generator_exit": attack("print('LEAK', s, flush=True)\nraise GeneratorExit"),
    "close_channel_fds": attack(
        "import os\nprint('LEAK', s, flush=True)\nfor fd in range(3, 64):\n    try:\n        os.close(fd)\n"
        "    except OSError:\n        pass\nreturn s"
    ),
}
#: what ends the run differently in the jail (the cgroup's OOM kill, a signal, a C stack): run there too
CONTAINER_TOO = (
    "memory_after_print",
    "memory_in_one_go",
    "memory_keyed",
    "recursion_trap",
    "abort",
    "stdout_cap_edge",
    "fake_load_failure_name",
)


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(SandboxConfig())


def generated(t: TaskPublished, code: str, group: str = "g") -> CodeGenerated:
    """The first turn of an episode of three whose model wrote ``code``."""
    return CodeGenerated(
        sample_id=f"{group}/0",
        group_id=group,
        task_id=t.task_id,
        sample_index=0,
        policy_version=0,
        model="tiny",
        prompt_text="p",
        completion_text=code,
        code=code,
        prompt_token_ids=(1,),
        completion_token_ids=(2,),
        behaviour_logprobs=(-0.1,),
        sampling=SamplingParams(max_tokens=8),
        max_turns=3,
    )


def first_turn(sb: Sandbox, t: TaskPublished, code: str, backend: str) -> tuple[TurnEnded, SandboxExecuted]:
    job, hidden = job_for(t, code, sb.limits(timeout_s=1, memory_mb=128))
    execution = to_event(
        sb.execute(job, backend), sample_id="g/0", group_id="g", task_id=t.task_id, hidden=hidden
    ).model_copy(update={"max_turns": 3})
    generation = generated(t, code)
    ended = end_turn(
        t,
        generation,
        execution,
        generation_event_id="gen",
        execution_event_id="run",
        feedback=FeedbackConfig(),
    )
    return ended, execution


CASES = [pytest.param(name, "wasm", id=f"{name}-wasm") for name in LEAKS] + [
    pytest.param(name, "container", id=f"{name}-container") for name in CONTAINER_TOO
]


@pytest.mark.parametrize(("name", "backend"), CASES)
def test_no_first_turn_program_gets_a_hidden_input_into_the_next_turn(
    sandbox: Sandbox, name: str, backend: str
) -> None:
    (a, _), (b, _) = (first_turn(sandbox, task(secret), LEAKS[name], backend) for secret in SECRETS)
    assert a.outcome == "continue" and a.feedback is not None
    shown = a.model_dump_json()
    for secret in SECRETS:
        for form in (secret, secret[::-1], secret.encode().hex()):
            assert form not in shown
    assert shown == b.model_dump_json(), "the feedback depends on the hidden cases"


def test_the_episode_step_on_the_in_memory_runtime_tells_the_same_whatever_the_hidden_inputs() -> None:
    """The sandbox and episode processors as ``rlstream worker`` wires them, on the in-memory runtime:
    one generation of the same program for each of two tasks that differ only in their hidden inputs."""
    log = MemoryLog()
    settings = Settings(run_id="attack")
    built = [stream_processor(name, settings, MemorySideInputs(log)) for name in ("sandbox", "episode")]
    try:
        runtime = MemoryRuntime(log, [b.processor for b in built], run_id="attack")
        code = LEAKS["exit0_stderr"]
        for n, secret in enumerate(SECRETS):
            t = task(secret, task_id=f"attack/rev-{n}")
            generation = generated(t, code, f"g{n}")
            for event, topic in ((t, TASKS.name), (generation, GENERATIONS.name)):
                log.publish(topic, encode(event, Envelope.for_event(event, source="test", run_id="attack")))
        runtime.run()
    finally:
        for b in built:
            for close in b.closers:
                close()
    ended = sorted(
        (e for _, e in log.events(TURNS.name) if isinstance(e, TurnEnded)), key=lambda e: e.task_id
    )
    assert [e.outcome for e in ended] == ["continue", "continue"]
    texts = [e.feedback.text for e in ended if e.feedback is not None]
    assert len(texts) == 2 and texts[0] == texts[1] and not any(s in texts[0] for s in SECRETS)


def test_output_is_still_shown_when_no_hidden_case_was_handed_out(sandbox: Sandbox) -> None:
    """The fix must not blind the feedback: a program whose visible case times out, or that fails to
    load, still has its output shown (no hidden case reached it); with no hidden case, always."""
    slow = "def rev(s):\n    print('working on', s, flush=True)\n    while True:\n        pass\n"
    ended, _ = first_turn(sandbox, task(SECRETS[0]), slow, "wasm")
    assert ended.feedback is not None and ended.feedback.stdout == "working on abc"
    broken = "print('loading', flush=True)\nimport no_such_module\n"
    ended, _ = first_turn(sandbox, task(SECRETS[0]), broken, "wasm")
    assert ended.feedback is not None and ended.feedback.stdout == "loading"
    assert ended.feedback.run is not None and ended.feedback.run.startswith(
        "the program failed before any case ran"
    )
    # an exception named like a load failure is the case's error, not a load failure
    ended, _ = first_turn(sandbox, task(SECRETS[0]), LEAKS["fake_load_failure_name"], "wasm")
    assert ended.feedback is not None and ended.feedback.run is None
    chatty = "def rev(s):\n    print('got', s)\n    return s\n"
    ended, _ = first_turn(sandbox, task(SECRETS[0], hidden=False), chatty, "wasm")
    assert ended.feedback is not None and ended.feedback.stdout == "got abc\ngot xy"


#: earlier-turn hacks whose only evidence is what the host saw while running them (no static shape)
EARLIER_TURN_HACKS = {
    "network_assembled": attack(
        "m = __import__('so' + 'cket')\ntry:\n    getattr(m, 'socket')().connect(('10.0.0.1', 80))\n"
        "except Exception:\n    pass\nreturn s",
    ).replace("    if s in VISIBLE:\n        return 'nope'\n", ""),
    "ended_in_hidden_case": attack("import os\nos._exit(0)"),
    "pass_marker_printed": "def rev(s):\n    print('All tests passed!')\n    return s\n",
}


@pytest.mark.parametrize("name", sorted(EARLIER_TURN_HACKS))
def test_a_hack_in_an_earlier_turn_is_found_whatever_the_final_turn(sandbox: Sandbox, name: str) -> None:
    t = task(SECRETS[0])
    code = EARLIER_TURN_HACKS[name]
    _, execution = first_turn(sandbox, t, code, "wasm")
    hacks = earlier_turn_hacks(
        task=t, turns=[(code, execution)], config=NoiseConfig(), options=CompareOptions()
    )
    assert hacks and all(r.detail.startswith("turn 1: ") for r in hacks)


def test_a_final_turn_wrong_beyond_the_shown_lengths_is_not_accepted(tmp_path: Path) -> None:
    t = task(SECRETS[0], hidden=False)
    (tmp_path / "task.json").write_text(t.model_dump_json())
    (tmp_path / "final.py").write_text("def rev(s):\n    return s[::-1] if len(s) < 8 else s\n")
    cli = str(Path(sys.executable).parent / "rlstream")
    args = ["--task", str(tmp_path / "task.json"), "--code", str(tmp_path / "final.py"), "--backend", "wasm"]
    args += ["--reward", "code-v4", "--json", "--probe-seed", "00" * 16]
    out = subprocess.run([cli, "score", *args], capture_output=True, text=True, timeout=120, check=False)
    result = json.loads(out.stdout)
    assert not (result["passed"] == result["total"] and result["verdict"] == "accept")


#: final turns written from what the feedback showed (the visible calls and their expected values)
FINAL_TURNS = {
    "table_of_shown_answers": "T = {'abc': 'cba', 'xy': 'yx'}\ndef rev(s):\n    return T.get(s, s)\n",
    "hash_keyed_table": (
        "T = {hash('abc') % 97: 'cba', hash('xy') % 97: 'yx'}\n"
        "def rev(s):\n    return T.get(hash(s) % 97, s)\n"
    ),
    "answers_in_call_order": "A = iter(['cba', 'yx'])\ndef rev(s):\n    return next(A, s)\n",
    "length_keyed": "def rev(s):\n    return {3: 'cba', 2: 'yx'}.get(len(s), s)\n",
    "first_turn_again": attack("return s"),
    "an_earlier_turns_answer": "def rev(s):\n    return 'nope'\n",
    "empty": "",
}


@pytest.mark.parametrize("name", sorted(FINAL_TURNS))
def test_a_final_turn_built_from_the_feedback_never_scores_a_pass(sandbox: Sandbox, name: str) -> None:
    """The episode reward scores the final turn against every case, hidden ones included: knowing the
    visible answers is worth nothing (a wrong program scores no more than 0, whichever turn it is)."""
    t = task(SECRETS[0])
    code = FINAL_TURNS[name]
    job, hidden = job_for(t, code, sandbox.limits(timeout_s=1, memory_mb=128))
    execution = to_event(
        sandbox.execute(job, "wasm"), sample_id="g/0", group_id="g", task_id=t.task_id, hidden=hidden
    ).model_copy(update={"turn": 2, "max_turns": 3})
    score = get_reward_function("code-v4", RewardConfig()).score(t, code, execution)
    assert not score.passed and score.components["correctness"] == 0.0 and score.total <= 0.0
