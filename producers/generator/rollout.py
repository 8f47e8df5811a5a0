"""The generator's domain core: one ``RolloutRequested`` group in, its ``CodeGenerated`` samples out.

No Kafka here. Everything a sample's identity depends on comes from the request: ``sample_id`` is
``f"{group_id}/{index}"`` (so a re-delivered request yields the same event ids) and each sample's seed is
derived from the request's seed (or the generator's configured seed), the group id and the index (so
the same weights regenerate the same tokens).
"""

from __future__ import annotations

from collections.abc import Sequence

from producers.generator.interface import GenerationBackend
from producers.generator.prompting import PromptTemplate, build_prompt, extract_code, template_for
from producers.generator.sampling import derive_seed
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
    ) -> None:
        self.backend = backend
        self.seed = seed
        self.template = template or template_for(backend.tokenizer)

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
            [prompt] * len(indices), request.sampling, seeds=self.seeds_for(request, indices)
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
                )
            )
        return events
