"""Group assembly: collect every sample's verdict of one GRPO group, then compute group-relative
advantages from the samples that feed the gradient: accepted ones with their reward, rejected ones as
the failures they are (the verdict's ``failure_reward``). Masked samples stay out, and so does a reject
whose verdict carries no failure reward (a v1 verdict: v1 rejects stayed out).

A sample of an episode of several turns is complete when its verdict (which names the final turn) and
the generation of every turn up to it are in; it is assembled as one trajectory (``ExperienceSample``
with ``turns``): the first turn's prompt, then each turn's feedback tokens (what its prompt added to the
previous turn's prompt and generated tokens) and its own generated tokens and behaviour log-probs.

Pure: the Faust agent keeps a ``GroupState`` per group in a changelog-backed table and asks it
whether the group is complete or past its deadline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from infra.runtime.state import event_from_state
from schemas.advantages import group_advantages
from schemas.rollout import CodeGenerated, ExperienceReady, ExperienceSample, ExperienceTurn, NoiseVerdict

Verdict = Literal["accept", "mask", "reject"]


class BrokenEpisode(ValueError):
    """A later turn's prompt does not continue the turn before it: it cannot be trained as one trajectory."""


def episode_turns(generations: list[CodeGenerated]) -> tuple[ExperienceTurn, ...]:
    """The turns of one episode (its generations in turn order) as the learner trains them."""
    turns = []
    for before, gen in zip([None, *generations[:-1]], generations, strict=True):
        feedback: tuple[int, ...] = ()
        if before is not None:
            context = before.prompt_token_ids + before.completion_token_ids
            if gen.prompt_token_ids[: len(context)] != context:
                raise BrokenEpisode(
                    f"{gen.sample_id}: turn {gen.turn}'s prompt does not continue turn {before.turn}"
                )
            feedback = gen.prompt_token_ids[len(context) :]
        turns.append(
            ExperienceTurn(
                turn=gen.turn,
                policy_version=gen.policy_version,
                feedback_token_ids=feedback,
                completion_token_ids=gen.completion_token_ids,
                behaviour_logprobs=gen.behaviour_logprobs,
            )
        )
    return tuple(turns)


@dataclass
class SampleSlot:
    #: the first turn's generation (a one-turn sample's only one)
    generation: CodeGenerated | None = None
    verdict: Verdict | None = None
    reward: float = 0.0
    #: what the sample trains with when rejected (None: it stays out, as v1 rejects did)
    failure_reward: float | None = None
    verdict_event_id: str | None = None
    #: traceparent of where the sample's verdict was read: the sample's own trace, which the
    #: experience and the learner's step link to
    trace: str | None = None
    #: an episode's later turns' generations, by turn
    later: dict[int, CodeGenerated] = field(default_factory=dict)
    #: the final turn, as the verdict names it
    final_turn: int = 0

    def turn(self, t: int) -> CodeGenerated | None:
        return self.generation if t == 0 else self.later.get(t)

    @property
    def ready(self) -> bool:
        """The verdict and every turn up to the final one are in."""
        return self.verdict is not None and all(self.turn(t) is not None for t in range(self.final_turn + 1))

    def generations(self) -> list[CodeGenerated]:
        found = [self.turn(t) for t in range(self.final_turn + 1)]
        return [g for g in found if g is not None]

    def trained_reward(self) -> float | None:
        """The reward this sample feeds the gradient with, None when it stays out: an accepted sample
        its reward, a rejected one its failure reward (a hack is trained as the failure it is, never
        spared it), a masked one nothing."""
        if self.verdict == "accept":
            return self.reward
        if self.verdict == "reject" and self.failure_reward is not None:
            return min(self.reward, self.failure_reward)
        return None


@dataclass
class GroupState:
    group_id: str
    task_id: str
    group_size: int
    deadline: float
    samples: dict[str, SampleSlot] = field(default_factory=dict)
    emitted: bool = False
    #: traceparent of where the group's request was read: the experience continues the group's trace
    trace: str | None = None

    def add_generation(self, event: CodeGenerated) -> bool:
        """Returns False for a duplicate (idempotent by sample id and turn)."""
        slot = self.samples.setdefault(event.sample_id, SampleSlot())
        if slot.turn(event.turn) is not None:
            return False
        if event.turn == 0:
            slot.generation = event
        else:
            slot.later[event.turn] = event
        return True

    def add_verdict(self, event: NoiseVerdict, event_id: str, trace: str | None = None) -> bool:
        slot = self.samples.setdefault(event.sample_id, SampleSlot())
        if slot.verdict_event_id == event_id or slot.verdict is not None:
            return False
        slot.verdict, slot.reward, slot.verdict_event_id = event.verdict, event.reward, event_id
        slot.failure_reward = event.failure_reward
        slot.trace = trace
        slot.final_turn = event.turn
        return True

    def sample_traces(self) -> tuple[str, ...]:
        """The traces of every sample judged so far (accepted or not), in sample order."""
        return tuple(s.trace for _, s in sorted(self.samples.items()) if s.trace)

    @property
    def complete(self) -> bool:
        return sum(1 for s in self.samples.values() if s.ready) >= self.group_size

    def to_json(self) -> dict[str, Any]:
        return {
            "group_id": self.group_id,
            "task_id": self.task_id,
            "group_size": self.group_size,
            "deadline": self.deadline,
            "emitted": self.emitted,
            "trace": self.trace,
            "samples": {
                sid: {
                    "generation": slot.generation.model_dump(mode="json") if slot.generation else None,
                    "verdict": slot.verdict,
                    "reward": slot.reward,
                    "failure_reward": slot.failure_reward,
                    "verdict_event_id": slot.verdict_event_id,
                    "trace": slot.trace,
                    # an episode's only (a one-turn sample's state is what it always was)
                    **_episode_json(slot),
                }
                for sid, slot in self.samples.items()
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GroupState:
        group = cls(data["group_id"], data["task_id"], data["group_size"], data["deadline"])
        group.emitted = data["emitted"]
        group.trace = data.get("trace")  # state written before traces were kept has none
        for sid, slot in data["samples"].items():
            gen = slot["generation"]
            group.samples[sid] = SampleSlot(
                # (written before an upgrade, it may be an older version of the event: lifted)
                generation=event_from_state(CodeGenerated, gen) if gen else None,
                verdict=slot["verdict"],
                reward=slot["reward"],
                failure_reward=slot.get("failure_reward"),  # state written before verdicts carried one
                verdict_event_id=slot["verdict_event_id"],
                trace=slot.get("trace"),
                later={int(t): event_from_state(CodeGenerated, g) for t, g in slot.get("later", {}).items()},
                final_turn=slot.get("final_turn", 0),
            )
        return group

    def due(self, now: float) -> bool:
        return not self.emitted and (self.complete or now >= self.deadline)

    def assemble(self, *, now: float, normalise_std: bool = True) -> ExperienceReady:
        ready = [(sid, s) for sid, s in sorted(self.samples.items()) if s.ready]
        trained: list[tuple[str, SampleSlot, float, tuple[ExperienceTurn, ...]]] = []
        broken = 0
        for sid, slot in ready:
            reward = slot.trained_reward()
            if reward is None:
                continue
            gens = slot.generations()
            try:
                turns = episode_turns(gens) if gens[0].max_turns > 1 else ()
            except BrokenEpisode:
                broken += 1  # never trained on: counted with the masked ones
                continue
            trained.append((sid, slot, reward, turns))
        rewards = [r for _, _, r, _ in trained]
        advantages = group_advantages(rewards, normalise_std=normalise_std) if rewards else []
        samples = []
        for (sid, slot, reward, turns), adv in zip(trained, advantages, strict=True):
            gen = slot.generation
            assert gen is not None
            samples.append(
                ExperienceSample(
                    sample_id=sid,
                    policy_version=min(t.policy_version for t in turns) if turns else gen.policy_version,
                    reward=reward,
                    advantage=adv,
                    prompt_token_ids=gen.prompt_token_ids,
                    completion_token_ids=() if turns else gen.completion_token_ids,
                    behaviour_logprobs=() if turns else gen.behaviour_logprobs,
                    traceparent=slot.trace,
                    turns=turns,
                )
            )
        self.emitted = True
        return ExperienceReady(
            group_id=self.group_id,
            task_id=self.task_id,
            group_size=self.group_size,
            samples=tuple(samples),
            partial=not self.complete,
            masked=sum(1 for _, s in ready if s.verdict == "mask") + broken,
            rejected=sum(1 for _, s in ready if s.verdict == "reject"),
            std_normalised=normalise_std,
        )


def _episode_json(slot: SampleSlot) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if slot.later:
        out["later"] = {str(t): g.model_dump(mode="json") for t, g in sorted(slot.later.items())}
    if slot.final_turn:
        out["final_turn"] = slot.final_turn
    return out
