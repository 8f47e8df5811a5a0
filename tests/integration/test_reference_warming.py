"""The filter warms the reference's runs of a group's probe plan when the group's first probe run arrives
(before its reward): on the real sandbox, the verdicts are those of a filter that runs them when the
verdict needs them, each plan's runs are made once, on the warming thread, and nothing warmed stays
behind (the runs under way go when done; done, they are bounded as runs made on demand are)."""

from __future__ import annotations

import threading

from schemas.base import Event
from schemas.reference import ReferenceExecuted
from schemas.rollout import CodeGenerated, NoiseVerdict
from schemas.task import TaskPublished, TestCase
from streams.noise.agent import KINDS, SEEDED_REF, FilterAgent
from streams.noise.config import NoiseConfig
from streams.probe.plan import probe_due, probe_run_index
from streams.reward.evaluate import Evaluator, run_probe, run_program
from streams.reward.function import get_reward_function
from streams.sandbox.config import SandboxConfig
from streams.sandbox.pool import SandboxPool
from streams.sandbox.service import Sandbox
from tests.unit.test_reward_agent import Tasks, _reward, incoming

TASK = TaskPublished(
    task_id="warm/add2",
    prompt='def add2(x: int) -> int:\n    """Return x + 2."""\n',
    entry_point="add2",
    tests=(TestCase(input="(1,)", output="3"),),
    hidden_tests=(TestCase(input="(10,)", output="12"), TestCase(input="(-3,)", output="-1")),
    reference="def add2(x):\n    return x + 2\n",
)
PROGRAMS = (
    "def add2(x):\n    return x + 2\n",
    "def add2(x):\n    return x\n",
    # answers served in the order the cases are asked: passes its run, not the probe's other order
    "_N = [0]\n\ndef add2(x):\n    _N[0] += 1\n    return [3, 12, -1][(_N[0] - 1) % 3]\n",
)
#: three groups, each with a probe seed of its own (as the sandbox processor draws one per group)
SEEDS = ("1" * 32, "2" * 32, "3" * 32)


class Counted(Evaluator):
    """An evaluator that records the thread each plan's reference runs were made on."""

    #: (seed, thread name) of each plan whose reference runs were made, in order
    made_on: list[tuple[str | None, str]]

    def _run_reference_probe(
        self, task: TaskPublished, backend: str, seed: str | None
    ) -> ReferenceExecuted | None:
        self.made_on.append((seed, threading.current_thread().name))
        return super()._run_reference_probe(task, backend, seed)


def _group(sandbox: Sandbox, g: int, seed: str) -> list[tuple[list[Event], Event]]:
    """Per sample of group ``g``: what arrives first (its code, its run, its probe run when due), then its
    reward: the events the sandbox and reward processors would publish for it."""
    out: list[tuple[list[Event], Event]] = []
    for n, code in enumerate(PROGRAMS):
        sid, group = f"g{g}/{n}", f"g{g}"
        gen = CodeGenerated(
            sample_id=sid,
            group_id=group,
            task_id=TASK.task_id,
            sample_index=n,
            policy_version=0,
            model="hand-written",
            prompt_text=TASK.prompt,
            completion_text=code,
            code=code,
        )
        first = run_program(sandbox, TASK, code, sample_id=sid, group_id=group, backend="wasm")
        events: list[Event] = [gen, first]
        if probe_due(TASK, first):
            probe = run_probe(
                sandbox,
                TASK,
                code,
                sample_id=sid,
                group_id=group,
                backend="wasm",
                run_index=probe_run_index(0),
                first_run_s=first.duration_s,
                seed=seed,
            )
            assert probe is not None
            events.append(probe)
        out.append((events, _reward(TASK, code, first)))
    return out


def _judge(agent: FilterAgent, samples: list[tuple[list[Event], Event]]) -> list[Event]:
    from infra.runtime.state import State

    state = State(KINDS)
    state.own(0)
    out: list[Event] = []
    for before, reward in samples:
        out += [e.event for e in agent.handle([incoming(e) for e in before], state)]
        out += [e.event for e in agent.handle([incoming(reward)], state)]
    assert len(state.keys(0, SEEDED_REF)) == 2  # the partition keeps its plans' runs as before
    return out


def test_warmed_reference_runs_judge_as_runs_made_on_demand_and_nothing_warmed_stays() -> None:
    config = SandboxConfig(backend="wasm")
    sandbox = Sandbox(config)
    samples = [s for g, seed in enumerate(SEEDS) for s in _group(sandbox, g, seed)]
    noise = NoiseConfig(probe=True)
    options = get_reward_function("code-v1").compare_options()
    agents: dict[str, tuple[Counted, FilterAgent]] = {}
    with SandboxPool(config.model_copy(update={"result_cache_entries": 0}), workers=2) as pool:
        for name in ("cold", "warm"):
            on = Counted(
                Sandbox(config),
                get_reward_function("code-v1"),
                noise,
                cache_entries=2,
                pool=pool if name == "warm" else None,
            )
            on.made_on = []
            agent = FilterAgent(
                noise,
                options,
                Tasks(TASK),
                lambda task, backend, on=on: on.reference(task, backend),  # type: ignore[misc]
                probe_reference=on.reference_probe,
                references_kept=2,
                warm_reference=on.warm_probe if name == "warm" else None,
            )
            agents[name] = (on, agent)
        judged = {name: _judge(agent, samples) for name, (_, agent) in agents.items()}

        # the same verdicts, for the same reasons, with and without warming
        def verdicts(events: list[Event]) -> list[tuple[str, str, list[str]]]:
            return [
                (e.sample_id, e.verdict, sorted(r.code for r in e.reasons))
                for e in events
                if isinstance(e, NoiseVerdict)
            ]

        assert verdicts(judged["warm"]) == verdicts(judged["cold"])
        got = {sid: v for sid, v, _ in verdicts(judged["warm"])}
        assert [got[f"g{g}/{n}"] for g in range(3) for n in range(3)] == ["accept", "accept", "reject"] * 3
        # each plan's runs published once, with the first verdict judged with them, named by every one
        for events in judged.values():
            refs = [e for e in events if isinstance(e, ReferenceExecuted)]
            assert len(refs) == len(SEEDS)
            named = {e.probe_reference_event_id for e in events if isinstance(e, NoiseVerdict)} - {None}
            assert named == {r.event_id() for r in refs}

        # warm: each plan's runs made once, on the warming thread, when its first probe run arrived
        warm, _ = agents["warm"]
        assert [seed for seed, _ in warm.made_on] == list(SEEDS)
        assert {thread for _, thread in warm.made_on} == {"reference-warm_0"}
        cold, _ = agents["cold"]
        assert [seed for seed, _ in cold.made_on] == list(SEEDS)
        assert {thread for _, thread in cold.made_on} == {threading.current_thread().name}

        # nothing warmed stays: none under way, and the runs kept are bounded as runs made on demand are
        assert warm.warming() == 0
        assert len(warm._probe_references) == len(cold._probe_references) == 2
        # a plan warmed whose sample is never judged (its reward never came) goes the same way
        warm.warm_probe(TASK, "wasm", "4" * 32)
        warm.close()
        assert warm.warming() == 0 and len(warm._probe_references) == 2
