"""The one settings object of rlstream.

Every value comes from here: defaults, then environment variables with the ``RLSTREAM_`` prefix (nested
fields use ``__``, e.g. ``RLSTREAM_KAFKA__BOOTSTRAP_SERVERS``), then a ``.env`` file in the working
directory. Components never read the environment themselves: the composition root hands each the part
of this object it needs.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from consumers.projections.config import ProjectionConfig
from consumers.review import ReviewConfig
from infra.faust.config import FaustConfig
from infra.kafka.config import BrokerConfig, KafkaConfig
from infra.telemetry.config import MetricsConfig, TelemetryConfig
from learner.config import LearnerConfig
from producers.generator.config import GeneratorConfig
from rlstream.layout import RunConfig
from rlstream.scaling import ScalingConfig
from schemas.errors import UsageError
from streams.config import PipelineConfig
from streams.episode.config import EpisodeConfig
from streams.monitor.config import MonitorConfig
from streams.noise.config import NoiseConfig
from streams.reward.config import RewardConfig
from streams.sandbox.config import SandboxConfig


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RLSTREAM_",
        env_nested_delimiter="__",
        env_file=".env",
        extra="ignore",
        frozen=True,
    )

    #: root of everything rlstream keeps on disk (jar cache, broker data, models, sandbox cache)
    home: Path = Field(default_factory=lambda: Path.home() / ".rlstream")
    run_id: str = "local"
    #: what hosts the stream processors: Kafka transactions (exactly-once, the default) or Faust agents
    #: (at-least-once, effectively-once results); see bench/runtimes.py for the two side by side
    runtime: Literal["transactional", "faust"] = "transactional"
    faust: FaustConfig = FaustConfig()
    kafka: KafkaConfig = KafkaConfig()
    broker: BrokerConfig = BrokerConfig()
    telemetry: TelemetryConfig = TelemetryConfig()
    #: each worker's /metrics (``RLSTREAM_METRICS__PORT``, ``__HOST``, ``__ENABLED``)
    metrics: MetricsConfig = MetricsConfig()
    #: the monitor's alert rules (``RLSTREAM_MONITOR__RULES``: a rule file of your own)
    monitor: MonitorConfig = MonitorConfig()
    sandbox: SandboxConfig = SandboxConfig()
    generator: GeneratorConfig = GeneratorConfig()
    pipeline: PipelineConfig = PipelineConfig()
    #: the registered reward function (name-version) the pipeline scores one-turn samples with (code-v7:
    #: code-v5 with its efficiency read on the guest's own time, which the machine's load does not move)
    reward_function: str = "code-v7"
    reward: RewardConfig = RewardConfig()
    noise: NoiseConfig = NoiseConfig()
    #: multi-turn episodes: turns per episode (``RLSTREAM_EPISODES__MAX_TURNS``), their reward, feedback caps
    episodes: EpisodeConfig = EpisodeConfig()
    learner: LearnerConfig = LearnerConfig()
    review: ReviewConfig = ReviewConfig()
    projections: ProjectionConfig = ProjectionConfig()
    #: what ``rlstream run --autoscale`` scales and how eagerly (``RLSTREAM_SCALING__*``)
    scaling: ScalingConfig = ScalingConfig()
    #: how ``rlstream run`` places its workers in processes (``RLSTREAM_RUN__LAYOUT``: auto, split, shared)
    run: RunConfig = RunConfig()

    @property
    def broker_data_dir(self) -> Path:
        return self.broker.data_dir or self.home / "broker"

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    @property
    def projections_url(self) -> str:
        """The projection database: the configured URL, else a SQLite file under the home."""
        url = self.projections.database_url or f"sqlite:///{self.home / 'projections.sqlite'}"
        secret = self.projections.database_password_file
        if secret is None:
            return url
        from sqlalchemy.engine import make_url

        try:
            password = secret.read_text().splitlines()[0].strip()
        except (OSError, IndexError) as exc:
            raise UsageError(
                f"setting RLSTREAM_PROJECTIONS__DATABASE_PASSWORD_FILE: cannot read a password from {secret} "
                f"({getattr(exc, 'strerror', None) or 'empty file'})",
                hint="mount the secret at that path, or correct the setting",
            ) from None
        # rendered with the password for the driver; every message shows the URL with it hidden
        return make_url(url).set(password=password).render_as_string(hide_password=False)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = "__".join(str(p) for p in first["loc"]).upper()
        raise UsageError(
            f"setting RLSTREAM_{field}: {first['msg']}",
            hint="correct or unset that environment variable (or its line in .env)",
        ) from exc
