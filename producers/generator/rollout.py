"""The generator's domain core: one ``RolloutRequested`` group in, its ``CodeGenerated`` samples out;
one ``TurnEnded`` that continues an episode in, that episode's next turn out.

No Kafka here. Everything a sample's identity depends on comes from the request: ``sample_id`` is
``f"{group_id}/{index}"`` (so a re-delivered request yields the same event ids) and each sample's seed is
derived from the request's seed (or the generator's configured seed), the group id and the index (so
the same weights regenerate the same tokens). A later turn's seed adds the turn, and its prompt is the
conversation so far as token ids: the previous turn's prompt and generated tokens exactly as they were,
then the feedback segment in the model's template (``prompting.feedback_segment``), the feedback itself
encoded with special tokens split so no output of the program can become a template token.
"""

from __future__ import annotations

from collections.abc import Sequence

from producers.generator.interface import Completion, GenerationBackend, TokenPrompt
from producers.generator.prompting import (
    PromptTemplate,
    Segment,
    build_prompt,
    code_end,
    extract_code,
    feedback_segment,
    template_for,
)
from producers.generator.sampling import derive_seed
from schemas.episode import TurnEnded
from schemas.rollout import CodeGenerated, RolloutRequested


def sample_id(group_id: str, index: int) -> str:
    return f"{group_id}/{index}"


class RolloutGenerator:
    """Turns requests into samples with one backend and one prompt template."""

    def __init__(
        self,
        backend: GenerationBackend,
        *,
        seed: int = 0,
        template: PromptTemplate | None = None,
        stop_at_function_end: bool = True,
    ) -> None:
        self.backend = backend
        self.seed = seed
        self.template = template or template_for(backend.tokenizer)
        #: end each sample where its program ends (code_end) instead of generating what extraction drops
        self.until = code_end if stop_at_function_end else None

    def prompt_for(self, request: RolloutRequested) -> str:
        return build_prompt(self.backend.tokenizer, request.prompt, self.template)

    def seeds_for(self, request: RolloutRequested, indices: Sequence[int]) -> list[int]:
        base = request.sampling.seed if request.sampling.seed is not None else self.seed
        if request.split == "eval" and request.sampling.seed is not None:
            # the round's seed is fixed per (task, version) whatever the run: the same version draws
            # the same samples in any run that evaluates it
            return [derive_seed(base, "eval", index) for index in indices]
        return [derive_seed(base, request.group_id, index) for index in indices]

    def generate(
        self, request: RolloutRequested, indices: Sequence[int] | None = None
    ) -> list[CodeGenerated]:
        """The samples ``indices`` (default: all ``group_size``) of one group, in index order."""
        indices = list(range(request.group_size)) if indices is None else list(indices)
        prompt = self.prompt_for(request)
        completions = self.backend.generate(
            [prompt] * len(indices),
            request.sampling,
            seeds=self.seeds_for(request, indices),
            until=self.until,
        )
        events = []
        for index, completion in zip(indices, completions, strict=True):
            extraction = extract_code(completion.text, request.prompt, request.entry_point)
            events.append(
                CodeGenerated(
                    sample_id=sample_id(request.group_id, index),
                    group_id=request.group_id,
                    task_id=request.task_id,
                    sample_index=index,
                    policy_version=completion.policy_version,
                    model=self.backend.model_name,
                    prompt_text=completion.prompt_text,
                    completion_text=completion.text,
                    code=extraction.code,
                    extraction=extraction.method,
                    prompt_token_ids=completion.prompt_token_ids,
                    completion_token_ids=completion.token_ids,
                    behaviour_logprobs=completion.logprobs,
                    finish_reason=completion.finish_reason,
                    sampling=request.sampling,
                    duration_s=completion.duration_s,
                    split=request.split,
                    max_turns=request.max_turns,
                )
            )
        return events

    def turn_seed(self, turn: TurnEnded) -> int:
        """The seed of the turn after ``turn``: its episode's first seed, and the turn."""
        base = turn.sampling.seed if turn.sampling.seed is not None else self.seed
        if turn.split == "eval" and turn.sampling.seed is not None:
            return derive_seed(base, "eval", turn.sample_index, "turn", turn.turn + 1)
        return derive_seed(base, turn.group_id, turn.sample_index, "turn", turn.turn + 1)

    def segment_ids(self, turn: TurnEnded) -> list[int]:
        """The tokens between ``turn``'s generated tokens and the next turn's: the feedback in the
        model's template. The feedback is encoded with special tokens split: whatever the program
        printed, it never becomes a template token."""
        assert turn.feedback is not None
        tokenizer = self.backend.tokenizer
        segment: Segment = feedback_segment(tokenizer, turn.prompt, turn.feedback.text, self.template)
        before = segment.before
        last = turn.context_token_ids[-1:] if turn.context_token_ids else ()
        if last and last[0] in self.backend.eos_token_ids:
            # the model closed its turn itself: the template must not close it a second time
            closing = tokenizer.decode(list(last), skip_special_tokens=False)
            if before.startswith(closing):
                before = before[len(closing) :]
        ids = list(tokenizer.encode(before, add_special_tokens=False)) if before else []
        ids += tokenizer.encode(segment.content, add_special_tokens=False, split_special_tokens=True)
        ids += tokenizer.encode(segment.after, add_special_tokens=False) if segment.after else []
        return ids

    def continue_episode(self, turn: TurnEnded, *, feedback_event_id: str) -> CodeGenerated:
        """The next turn of the episode ``turn`` ended with feedback (``feedback_event_id`` is its id)."""
        return self.continue_episodes([(turn, feedback_event_id)])[0]

    def continue_episodes(self, turns: Sequence[tuple[TurnEnded, str]]) -> list[CodeGenerated]:
        """The next turn of each episode (its TurnEnded and that event's id), in one batch; each turn's
        tokens depend only on its own prompt and seed, not on what shares the batch."""
        prompts: list[TokenPrompt] = []
        for turn, _ in turns:
            if turn.outcome != "continue" or turn.feedback is None:
                raise ValueError(f"turn {turn.turn} of {turn.sample_id} ended the episode: no next turn")
            ids = (*turn.context_token_ids, *self.segment_ids(turn))
            text = str(self.backend.tokenizer.decode(list(ids), skip_special_tokens=False))
            prompts.append(TokenPrompt(text=text, token_ids=ids))
        out: list[CodeGenerated] = []
        # one call per sampling configuration (a batch shares its sampling parameters)
        by_sampling: dict[str, list[int]] = {}
        for i, (turn, _) in enumerate(turns):
            by_sampling.setdefault(turn.sampling.model_dump_json(), []).append(i)
        completions: dict[int, Completion] = {}
        for indices in by_sampling.values():
            sampling = turns[indices[0]][0].sampling
            done = self.backend.generate(
                [prompts[i] for i in indices],
                sampling,
                seeds=[self.turn_seed(turns[i][0]) for i in indices],
                until=self.until,
            )
            completions.update(zip(indices, done, strict=True))
        for i, (turn, feedback_event_id) in enumerate(turns):
            completion = completions[i]
            extraction = extract_code(completion.text, turn.prompt, turn.entry_point)
            out.append(
                CodeGenerated(
                    sample_id=turn.sample_id,
                    group_id=turn.group_id,
                    task_id=turn.task_id,
                    sample_index=turn.sample_index,
                    policy_version=completion.policy_version,
                    model=self.backend.model_name,
                    prompt_text=prompts[i].text,
                    completion_text=completion.text,
                    code=extraction.code,
                    extraction=extraction.method,
                    prompt_token_ids=completion.prompt_token_ids,
                    completion_token_ids=completion.token_ids,
                    behaviour_logprobs=completion.logprobs,
                    finish_reason=completion.finish_reason,
                    sampling=turn.sampling,
                    duration_s=completion.duration_s,
                    split=turn.split,
                    turn=turn.turn + 1,
                    max_turns=turn.max_turns,
                    feedback_event_id=feedback_event_id,
                )
            )
        return out
