"""Hidden cases never reach the model: on a task whose hidden outputs (and inputs) are distinctive
strings, first turns written to pry them out - printing every argument and result, raising them, being
right on hidden cases and wrong on visible ones, running out of time on a hidden case - go through the
real sandbox, the episode step and the generator (the tiny model writing the next turn from the
feedback); no TurnEnded, feedback, prompt text or prompt token of any later turn carries a hidden input
or a hidden expected value, while the visible case's expected value is told."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from learner.config import LearnerConfig
from rlstream.inprocess import InProcessRun
from rlstream.settings import Settings
from schemas.episode import TurnEnded
from schemas.rollout import CodeGenerated, SamplingParams
from schemas.task import TaskPublished, TestCase
from schemas.topics import GENERATIONS, TURNS

torch.set_num_threads(1)

CACHE = Path.home() / ".rlstream"
HIDDEN_INPUT = 734_921
HIDDEN_OUTPUT = "zq-hidden-answer-5581"
TASK = TaskPublished(
    task_id="leak/tag",
    prompt='def tag(x: int) -> str:\n    """Tag x."""\n',
    entry_point="tag",
    tests=(TestCase(input="(1,)", output="'visible-one'"),),
    hidden_tests=(
        TestCase(input=f"({HIDDEN_INPUT},)", output=repr(HIDDEN_OUTPUT)),
        TestCase(input="(2,)", output="'zq-second-hidden-9034'"),
    ),
    limits={"timeout_s": 3.0, "memory_mb": 128},  # type: ignore[arg-type]
)
#: programs that try every way of getting hidden cases into what the next turn is shown
PRYING = {
    "prints": (
        "def tag(x):\n"
        "    import sys\n"
        "    r = 'zq-hidden-answer-5581' if x == 734921 else 'zq-second-hidden-9034' if x == 2 else 'no'\n"
        "    print('args', x, 'result', r)\n"
        "    print('stderr', x, r, file=sys.stderr)\n"
        "    return r\n"
    ),
    "raises": (
        "def tag(x):\n    if x != 1:\n        raise ValueError(f'hidden input {x}')\n    return 'wrong'\n"
    ),
    "remembers": ("seen = []\ndef tag(x):\n    seen.append(x)\n    return repr(seen)\n"),
    "stalls": (
        "def tag(x):\n"
        "    print('about to stall on', x)\n"
        "    while x != 1:\n"
        "        pass\n"
        "    return 'wrong'\n"
    ),
}
FORBIDDEN = (str(HIDDEN_INPUT), HIDDEN_OUTPUT, "zq-second-hidden-9034", "734,921", "734_921")


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessRun]:
    home = tmp_path_factory.mktemp("leak")
    settings = Settings(
        run_id="leak",
        home=home,
        generator={"model": "tiny", "seed": 0, "models_dir": CACHE / "models"},
        sandbox={"cache_dir": CACHE / "cache" / "sandbox", "backend": "wasm", "workers": 1},
    )
    pipe = InProcessRun(
        settings,
        LearnerConfig(backend="torch", accelerator="cpu", checkpoint_dir=home / "ckpt"),
        ("generator", "sandbox", "episode", "reward", "filter", "experience"),
        tasks=[TASK],
    )
    sampling = SamplingParams(temperature=1.0, max_tokens=8)
    for i, (name, code) in enumerate(sorted(PRYING.items())):
        pipe.publish(
            CodeGenerated(
                sample_id=f"leak/leak/tag/0/{i}",
                group_id="leak/leak/tag/0",
                task_id=TASK.task_id,
                sample_index=i,
                policy_version=0,
                model="tiny",
                prompt_text=TASK.prompt,
                completion_text=code,
                code=code,
                extraction=name,
                prompt_token_ids=(5, 6),
                completion_token_ids=(7,),
                behaviour_logprobs=(-1.0,),
                sampling=sampling,
                max_turns=3,
            ),
            GENERATIONS.name,
        )
    try:
        pipe.drain()
        yield pipe
    finally:
        pipe.close()


def test_no_hidden_case_reaches_any_feedback_or_prompt(pipeline: InProcessRun) -> None:
    turns = [e for e in pipeline.events(TURNS.name) if isinstance(e, TurnEnded)]
    firsts = {t.sample_id: t for t in turns if t.turn == 0}
    assert len(firsts) == len(PRYING)
    assert all(t.outcome == "continue" and t.feedback is not None for t in firsts.values())
    for t in turns:
        body = t.model_dump_json()
        for secret in FORBIDDEN:
            assert secret not in body, f"{t.sample_id} turn {t.turn} carries {secret!r}"
    # what a hidden case printed is withheld; the visible case is told in full
    assert all(t.feedback.stdout is None for t in firsts.values() if t.feedback)  # type: ignore[union-attr]
    assert all("expected: 'visible-one'" in t.feedback.text for t in firsts.values() if t.feedback)  # type: ignore[union-attr]
    later = [e for e in pipeline.events(GENERATIONS.name) if isinstance(e, CodeGenerated) and e.turn > 0]
    assert len(later) >= len(PRYING)  # every episode got a second turn from the generator
    tokenizer = pipeline.policy.tokenizer
    for g in later:
        shown = g.prompt_text + tokenizer.decode(list(g.prompt_token_ids))
        for secret in FORBIDDEN:
            assert secret not in shown, f"{g.sample_id} turn {g.turn}'s prompt carries {secret!r}"
