"""The local Apache Kafka launcher and `rlstream broker` / `rlstream topics`, against real brokers."""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from confluent_kafka.admin._config import ConfigResource

from infra.kafka.admin import admin_client, ensure_topics
from infra.kafka.config import BrokerConfig, KafkaConfig
from infra.kafka.jars import fetch_jars
from infra.kafka.local import LocalCluster, check_java, find_free_base_port, new_cluster_id, resolve_bootstrap
from infra.kafka.producer import EventProducer
from infra.kafka.replay import replay
from schemas.errors import BrokerError, DependencyError
from schemas.task import TaskPublished, TestCase
from schemas.topics import CATALOG, EXECUTION_MESSAGE_BYTES, TASKS, Topic
from tests.conftest import start_test_cluster

pytestmark = pytest.mark.kafka

RLSTREAM = str(Path(sys.executable).parent / "rlstream")


def task(i: int) -> TaskPublished:
    return TaskPublished(
        task_id=f"t{i}", prompt="def f(x): ...", entry_point="f", tests=(TestCase(input="(1,)", output="1"),)
    )


def cli(args: list[str], env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RLSTREAM, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def cli_env(home: Path, kafka_lib: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RLSTREAM_")}
    env.update(
        RLSTREAM_HOME=str(home),
        RLSTREAM_BROKER__JAR_DIR=str(kafka_lib.parent.parent),
        RLSTREAM_BROKER__BASE_PORT=str(find_free_base_port("127.0.0.1", 2)),
        RLSTREAM_BROKER__START_TIMEOUT_S="180",
        **extra,
    )
    return env


def test_broker_cli_restarts_with_its_data(broker_dir: Path, kafka_lib: Path):
    env = cli_env(broker_dir / "home", kafka_lib)
    data_dir = broker_dir / "home" / "broker"
    try:
        up = cli(["broker", "up"], env)
        assert up.returncode == 0, up.stderr
        bootstrap = up.stdout.strip().splitlines()[-1]
        assert bootstrap == f"127.0.0.1:{env['RLSTREAM_BROKER__BASE_PORT']}"
        status = cli(["broker", "status", "--json"], env)
        assert status.returncode == 0 and '"answering": true' in status.stdout

        created = cli(["topics", "create"], env)
        assert created.returncode == 0, created.stderr
        assert f"+ {TASKS.name}: created with 3 partition(s)" in created.stdout
        with EventProducer(bootstrap, source="test/restart") as producer:
            ids = [producer.publish(task(i)) for i in range(10)]

        down = cli(["broker", "down"], env)
        assert down.returncode == 0 and "data kept" in down.stdout
        assert not LocalCluster(BrokerConfig(), data_dir=data_dir, lib_dir=kafka_lib).status().running
        with pytest.raises(BrokerError, match="rlstream broker up"):
            resolve_bootstrap(KafkaConfig(), data_dir)

        again = cli(["broker", "up"], env)
        assert again.returncode == 0, again.stderr
        assert again.stdout.strip().splitlines()[-1] == bootstrap
        assert resolve_bootstrap(KafkaConfig(), data_dir) == bootstrap
        assert sorted(e.envelope.id for e in replay(bootstrap, TASKS.name)) == sorted(ids)
    finally:
        cli(["broker", "down"], env)


def test_broker_up_uses_a_configured_cluster_instead(tmp_path: Path, kafka_lib: Path, kafka_bootstrap: str):
    env = cli_env(tmp_path / "home", kafka_lib, RLSTREAM_KAFKA__BOOTSTRAP_SERVERS=kafka_bootstrap)
    up = cli(["broker", "up"], env, timeout=60)
    assert up.returncode == 0, up.stderr
    assert up.stdout.strip() == kafka_bootstrap
    assert "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS is set" in up.stderr and "no local broker" in up.stderr
    assert not (tmp_path / "home" / "broker").exists()
    assert resolve_bootstrap(KafkaConfig(bootstrap_servers="h:1"), tmp_path) == "h:1"


@pytest.mark.slow
def test_three_broker_cluster_replicates_and_survives_losing_a_node(
    broker_dir: Path, kafka_lib: Path, test_broker_config: BrokerConfig
):
    cluster = start_test_cluster(
        test_broker_config.model_copy(update={"heap_mb": 384}), kafka_lib, broker_dir, 3
    )
    try:
        layout = cluster.layout()
        assert layout is not None and layout.brokers == 3
        bootstrap = layout.bootstrap
        topic = Topic(f"test.replicated.{uuid.uuid4().hex[:8]}", "task_id", "TaskPublished", "test")
        [result] = ensure_topics(bootstrap, KafkaConfig(), [topic])
        assert result.status == "created"
        admin = admin_client(bootstrap)
        md = admin.list_topics(topic.name, timeout=30)
        assert all(len(p.replicas) == 3 for p in md.topics[topic.name].partitions.values())
        [configs] = admin.describe_configs([ConfigResource("topic", topic.name)]).values()
        entries = configs.result(30)
        assert entries["min.insync.replicas"].value == "2"
        assert entries["retention.ms"].value == "-1"

        with EventProducer(bootstrap, source="test/cluster") as producer:
            first = [producer.publish(task(i), topic=topic.name) for i in range(20)]
        status = cluster.status(probe=False)
        victim = status.nodes[2]
        assert victim.pid is not None
        os.kill(victim.pid, signal.SIGKILL)  # a crash, not a clean shutdown
        # acks=all still succeeds with 2 of 3 replicas in sync (min.insync.replicas=2)
        with EventProducer(bootstrap, source="test/cluster") as producer:
            second = [producer.publish(task(100 + i), topic=topic.name) for i in range(20)]
        got = sorted(e.envelope.id for e in replay(bootstrap, topic.name, timeout_s=60))
        assert got == sorted(first + second)
        assert not cluster.status(probe=False).running
    finally:
        cluster.down()
    assert cluster.running_bootstrap() is None


def test_a_taken_port_is_named_with_its_process(
    broker_dir: Path, kafka_lib: Path, test_broker_config: BrokerConfig
):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        config = test_broker_config.model_copy(update={"base_port": port})
        cluster = LocalCluster(config, data_dir=broker_dir, lib_dir=kafka_lib)
        with pytest.raises(
            BrokerError, match=rf"port {port} on 127.0.0.1 is taken by pid {os.getpid()}"
        ) as err:
            cluster.up()
        assert "RLSTREAM_BROKER__BASE_PORT" in str(err.value)


def test_a_broker_that_does_not_answer_in_time_points_at_its_log(
    broker_dir: Path, kafka_lib: Path, test_broker_config: BrokerConfig
):
    base = find_free_base_port("127.0.0.1", 2)
    config = test_broker_config.model_copy(update={"base_port": base, "start_timeout_s": 0.5})
    cluster = LocalCluster(config, data_dir=broker_dir, lib_dir=kafka_lib)
    try:
        with pytest.raises(BrokerError, match="did not answer within") as err:
            cluster.up()
        assert str(broker_dir / "node-1" / "server.log") in str(err.value)
        assert "RLSTREAM_BROKER__START_TIMEOUT_S" in str(err.value)
    finally:
        cluster.down()


def test_missing_java_and_maven_failures_name_the_fix(tmp_path: Path):
    with pytest.raises(DependencyError, match="Java") as err:
        check_java("no-such-java-binary")
    assert "scripts/setup.sh" in str(err.value)
    with pytest.raises(DependencyError, match="Maven") as err:
        fetch_jars(tmp_path, "4.4.0", maven="no-such-mvn-binary")
    assert "scripts/setup.sh" in str(err.value)
    with pytest.raises(
        DependencyError, match=r"Maven could not fetch org\.apache\.kafka:kafka_2\.13:0\.0\.1-nope"
    ):
        fetch_jars(tmp_path, "0.0.1-nope")
    assert not (tmp_path / "0.0.1-nope" / "lib").exists()


def test_topics_create_is_idempotent_and_reports_too_few_partitions(kafka_bootstrap: str):
    suffix = uuid.uuid4().hex[:8]
    wide = Topic(f"test.wide.{suffix}", "k", "TaskPublished", "test")
    narrow = Topic(f"test.narrow.{suffix}", "k", "TaskPublished", "test", partitions=1)
    config = KafkaConfig(partitions=4)
    first = {r.name: r for r in ensure_topics(kafka_bootstrap, config, [wide, narrow])}
    assert first[wide.name].status == "created" and first[wide.name].partitions == 4
    assert first[narrow.name].status == "created" and first[narrow.name].partitions == 1
    again = {r.name: r for r in ensure_topics(kafka_bootstrap, config, [wide, narrow])}
    assert again[wide.name].status == "exists" and again[narrow.name].status == "exists"
    more = {r.name: r for r in ensure_topics(kafka_bootstrap, KafkaConfig(partitions=8), [wide])}
    assert more[wide.name].status == "fewer_partitions" and not more[wide.name].ok
    assert "4 partition(s), fewer than the 8 configured" in more[wide.name].message
    assert len(CATALOG) == len({t.name for t in CATALOG})


def test_topics_create_raises_a_message_limit_below_the_catalogs(kafka_bootstrap: str):
    # a cluster made before the catalog asked for larger records: the limit is raised in place
    plain = Topic(f"test.limit.{uuid.uuid4().hex[:8]}", "k", "SandboxExecuted", "test")
    limit = str(EXECUTION_MESSAGE_BYTES)
    large = dataclasses.replace(plain, configs={**plain.configs, "max.message.bytes": limit})
    ensure_topics(kafka_bootstrap, KafkaConfig(), [plain])
    [result] = ensure_topics(kafka_bootstrap, KafkaConfig(), [large])
    assert result.status == "exists" and f"max.message.bytes raised to {limit}" in result.message
    admin = admin_client(kafka_bootstrap)
    [configs] = admin.describe_configs([ConfigResource("topic", plain.name)]).values()
    assert configs.result(30)["max.message.bytes"].value == limit
    [again] = ensure_topics(kafka_bootstrap, KafkaConfig(), [large])
    assert "raised" not in again.message  # already large enough: left alone


def test_cluster_ids_never_look_like_an_option_to_the_storage_tool():
    # one random id in 64 starts with '-' in URL-safe base64; formatting then failed
    ids = [new_cluster_id() for _ in range(3000)]
    assert not any(i.startswith("-") for i in ids)
    assert all(len(i) == 22 for i in ids) and len(set(ids)) == len(ids)
