"""Session fixtures shared by every test folder: one real Apache Kafka broker per test session.

The broker is the project's own local launcher on free ports in a temporary data directory, so it never
collides with a developer's `rlstream broker up`. With RLSTREAM_KAFKA__BOOTSTRAP_SERVERS set, that
cluster is used instead. A missing Java or missing jars FAIL the tests that need Kafka (with the set-up
command); they are never skipped.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from harness import recovery as recovery_figures
from infra.kafka.admin import admin_client, ensure_topics
from infra.kafka.config import BrokerConfig, KafkaConfig
from infra.kafka.jars import SETUP_HINT, jars_present, lib_dir
from infra.kafka.local import LocalCluster, check_java, find_free_base_port
from rlstream.settings import get_settings
from schemas.errors import DependencyError
from schemas.topics import CATALOG
from streams.sandbox import Sandbox, SandboxConfig
from tests.reliability import recovery

# one OpenMP/torch thread: the test machines are small and shared
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--recovery-json",
        type=Path,
        default=Path(tempfile.gettempdir()) / "rlstream-recovery.json",
        help="where the fault suite writes its recovery table as JSON",
    )


#: test files that take many minutes, longest first: they start first, so the two pytest workers
#: (``--dist loadfile``: a file stays on one worker) fill the rest of the session with the short files
#: instead of one of them starting a long file near the end while the other sits idle (scripts/test.sh
#: passes ``--no-loadscope-reorder``, without which the scheduler reorders files by their test count)
LONG_FILES = (
    "tests/hacks/test_redteam.py",
    "tests/integration/test_episode_learning.py",
    "tests/reliability/test_faults.py",
    "tests/e2e/test_learning.py",
    "tests/e2e/test_report.py",
    "tests/e2e/test_secure_cluster.py",
    "tests/e2e/test_smollm2_steps.py",
    "tests/reliability/test_episode_faults.py",
    "tests/e2e/test_pipeline.py",
    # minutes each, by their marks or their runs; guessed order until a run's durations say otherwise
    "tests/integration/test_score_humaneval.py",
    "tests/contract/test_runtimes.py",
    "tests/reliability/test_bad_input.py",
    "tests/e2e/test_traces.py",
    "tests/e2e/test_review.py",
    "tests/e2e/test_audit.py",
    "tests/e2e/test_autoscale.py",
    "tests/reliability/test_load.py",
    "tests/integration/test_broker.py",
    "tests/integration/test_sandbox_humaneval.py",
)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[Any]) -> None:
    """Long files first (see LONG_FILES), every other file in collection order; a file's tests keep their
    order. The same on every worker, as pytest-xdist requires."""
    rank = {path: i for i, path in enumerate(LONG_FILES)}
    root = config.rootpath

    def key(item: Any) -> int:
        try:
            path = item.path.relative_to(root).as_posix()
        except ValueError:
            return len(rank)
        return rank.get(path, len(rank))

    items.sort(key=key)  # stable: the order within a rank is the collection order


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The fault suite's recovery per fault, one table for the session (every pytest worker's tests)."""
    entries = recovery.gathered(r for reports in terminalreporter.stats.values() for r in reports)
    if not entries:
        return
    path: Path = config.getoption("--recovery-json")
    recovery_figures.write(entries, path)
    terminalreporter.write_sep("=", f"recovery per fault, seconds from the fault (JSON: {path})")
    for line in recovery_figures.table(entries):
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def kafka_lib() -> Path:
    """The cached Kafka jars; fails (never skips) with the set-up command when they are missing."""
    return _lib_or_fail()


@pytest.fixture(scope="session")
def test_broker_config() -> BrokerConfig:
    """Broker settings for clusters that tests start themselves (free ports chosen per cluster)."""
    return get_settings().broker.model_copy(update={"heap_mb": 512, "start_timeout_s": 180.0})


def start_test_cluster(config: BrokerConfig, lib: Path, data_dir: Path, brokers: int = 1) -> LocalCluster:
    base = find_free_base_port(config.host, 2 * brokers)
    cluster = LocalCluster(
        config.model_copy(update={"base_port": base, "brokers": brokers}), data_dir=data_dir, lib_dir=lib
    )
    try:
        cluster.up(brokers)
    except BaseException:
        cluster.down()
        raise
    return cluster


@contextmanager
def private_dir(prefix: str) -> Iterator[Path]:
    """A temporary directory outside pytest's numbered ones.

    pytest prunes old numbered temp dirs when a new session starts; with several sessions on one
    machine that could delete a broker's data under the running JVM.
    """
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def broker_dir() -> Iterator[Path]:
    """A private directory for a cluster a test starts itself."""
    with private_dir("rlstream-test-broker-") as path:
        yield path


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """Bootstrap servers of the session's broker (started once, stopped at the end of the session)."""
    settings = get_settings()
    if settings.kafka.bootstrap_servers:
        yield settings.kafka.bootstrap_servers
        return
    lib = _lib_or_fail()
    config = settings.broker.model_copy(update={"heap_mb": 768, "start_timeout_s": 180.0})
    with private_dir("rlstream-test-kafka-") as data_dir:
        cluster = start_test_cluster(config, lib, data_dir)
        try:
            assert cluster.running_bootstrap() is not None
            yield cluster.running_bootstrap() or ""
        finally:
            cluster.down()


@pytest.fixture(scope="session")
def kafka_config(kafka_bootstrap: str) -> KafkaConfig:
    """The session's KafkaConfig, pointing at the session broker."""
    return get_settings().kafka.model_copy(update={"bootstrap_servers": kafka_bootstrap})


@pytest.fixture(scope="session")
def kafka_catalog(kafka_bootstrap: str, kafka_config: KafkaConfig) -> str:
    """The session broker with every catalog topic created; returns its bootstrap servers."""
    ensure_topics(kafka_bootstrap, kafka_config, CATALOG)
    return kafka_bootstrap


@pytest.fixture
def new_topic(kafka_bootstrap: str) -> Callable[..., str]:
    """Create a uniquely named topic: ``new_topic(partitions=3, prefix="t")`` returns its name."""

    def make(partitions: int = 3, prefix: str = "test") -> str:
        from confluent_kafka.cimpl import NewTopic

        name = f"{prefix}.{uuid.uuid4().hex[:12]}"
        admin = admin_client(kafka_bootstrap)  # keep the client alive until the futures resolve
        futures = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=-1)])
        for future in futures.values():
            future.result(30)
        return name

    return make


def _lib_or_fail() -> Path:
    s = get_settings()
    try:
        check_java(s.broker.java)
    except DependencyError as exc:
        pytest.fail(f"Kafka tests need Java: {exc}", pytrace=False)
    root = s.broker.jar_dir or s.home / "kafka"
    version = s.broker.kafka_version
    if not jars_present(root, version):
        pytest.fail(
            f"Kafka tests need the Apache Kafka {version} jars in {lib_dir(root, version)}: {SETUP_HINT}",
            pytrace=False,
        )
    return lib_dir(root, version)


#: the sandbox backends the tests that compare them run on
SANDBOX_BACKENDS = ("wasm", "container")


@pytest.fixture(scope="session")
def ready_sandbox() -> Callable[[SandboxConfig], Sandbox]:
    """A sandbox with both backends set up, or the test fails (never skips) naming the backend that is
    not: a test that compares backends must never pass on one alone."""

    def make(config: SandboxConfig) -> Sandbox:
        box = Sandbox(config)
        for backend in SANDBOX_BACKENDS:
            try:
                box.ensure(backend)
            except DependencyError as exc:
                pytest.fail(f"sandbox backend {backend} is not set up: {exc}", pytrace=False)
        return box

    return make
