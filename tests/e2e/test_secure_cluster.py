"""rlstream against a secured cluster: ``rlstream broker up --auth scram`` (SASL_SSL with a throwaway CA,
a SCRAM user per processor kind, the standard authorizer allowing nothing no ACL allows, the ACLs of
``rlstream acls plan``), a whole run on it with every worker as its own principal, the refusals a
principal gets outside its grants, and no secret in anything the run wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from confluent_kafka import KafkaException

from infra.kafka import security
from infra.kafka.admin import admin_client, metadata
from infra.kafka.config import BrokerConfig
from infra.kafka.local import LocalCluster, find_free_base_port
from infra.kafka.producer import EventProducer
from infra.kafka.replay import replay_windows
from infra.kafka.security import KafkaSecurity
from schemas.errors import BrokerError
from schemas.policy import PolicyPublished
from schemas.rollout import ReviewRecorded
from schemas.topics import EXECUTIONS, POLICY, REVIEWS, REWARDS
from tests.conftest import private_dir
from tests.e2e.conftest import CACHE, run_env


class Secured:
    def __init__(self, bootstrap: str, data_dir: Path, client: dict[str, str]) -> None:
        self.bootstrap = bootstrap
        self.data_dir = data_dir
        self.client = client

    def as_principal(self, processor: str) -> security.Credentials:
        cfg = KafkaSecurity.model_validate(
            {k.removeprefix("RLSTREAM_KAFKA__SECURITY__").lower(): v for k, v in self.client.items()}
        )
        return cfg.resolve(processor)

    def admin(self) -> security.Credentials:
        return LocalCluster(BrokerConfig(), data_dir=self.data_dir, lib_dir=self.data_dir).admin_credentials()

    def secrets(self) -> list[str]:
        return [p.read_text().strip() for p in (self.data_dir / "credentials").glob("*.password")]


@pytest.fixture(scope="module")
def secured(kafka_lib: Path) -> Iterator[Secured]:
    with private_dir("rlstream-test-secure-") as data_dir:
        base = find_free_base_port("127.0.0.1", 2)
        env = {
            **os.environ,
            "RLSTREAM_BROKER__BASE_PORT": str(base),
            "RLSTREAM_BROKER__JAR_DIR": str(CACHE / "kafka"),
            "RLSTREAM_BROKER__START_TIMEOUT_S": "180",
        }
        env.pop("RLSTREAM_KAFKA__BOOTSTRAP_SERVERS", None)
        cmd = [sys.executable, "-m", "rlstream.cli", "broker"]
        up = subprocess.run(
            [*cmd, "up", "--auth", "scram", "--data-dir", str(data_dir)],
            env=env,
            capture_output=True,
            text=True,
            timeout=400,
        )
        try:
            assert up.returncode == 0, up.stderr
            client = dict(
                line.strip().removeprefix("export ").replace("'", "").split("=", 1)
                for line in up.stderr.splitlines()
                if line.strip().startswith("export RLSTREAM_KAFKA__SECURITY__")
            )
            assert client["RLSTREAM_KAFKA__SECURITY__PROTOCOL"] == "SASL_SSL", up.stderr
            bootstrap = up.stdout.strip().splitlines()[-1]
            # the operator's principal creates the catalog
            topics = subprocess.run(
                [sys.executable, "-m", "rlstream.cli", "topics", "create"],
                env={**env, **client, "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": bootstrap},
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert topics.returncode == 0, topics.stdout + topics.stderr
            yield Secured(bootstrap, data_dir, client)
        finally:
            subprocess.run([*cmd, "down", "--data-dir", str(data_dir)], env=env, capture_output=True)


def test_a_client_without_credentials_is_refused(secured: Secured) -> None:
    with security.using(security.Credentials()), pytest.raises(BrokerError, match="plaintext"):
        metadata(secured.bootstrap, timeout_s=5)


def test_each_principal_is_held_to_its_grants(secured: Secured) -> None:
    policy = PolicyPublished(
        run_id="r", policy_version=1, step=1, checkpoint_uri="file:///x", sha256="0" * 64
    )
    with security.using(secured.as_principal("sandbox")):
        for topic, event in ((REWARDS.name, policy), (POLICY.name, policy)):
            producer = EventProducer(secured.bootstrap, source="test/sandbox", delivery_timeout_s=20)
            producer.publish(event, topic=topic)
            with pytest.raises(BrokerError, match=f"rlstream-sandbox may not write {topic}"):
                producer.flush(30)
        # what it is granted works (a record of another class is the reader's to dead-letter)
        with EventProducer(secured.bootstrap, source="test/sandbox") as producer:
            producer.publish(policy, topic=EXECUTIONS.name)
    review = ReviewRecorded(
        group_id="r/t/0",
        sample_id="r/t/0/0",
        task_id="t",
        verdict="mask",
        reviewer="ops",
        note="n",
        reviewed_at=datetime.now(UTC),
    )
    with (
        security.using(secured.as_principal("cli")),
        EventProducer(secured.bootstrap, source="t") as producer,
    ):
        producer.publish(review)
    with (
        security.using(secured.as_principal("generator")),
        pytest.raises(BrokerError, match=f"rlstream-generator may not describe {REVIEWS.name}"),
    ):
        replay_windows(secured.bootstrap, REVIEWS.name)
    with security.using(secured.as_principal("experience")):  # experience reads the reviews
        windows = replay_windows(secured.bootstrap, REVIEWS.name)
    assert sum(w.end - w.start for w in windows) == 1


def test_on_faust_a_processor_joins_as_its_own_principal(secured: Secured, tmp_path: Path) -> None:
    """aiokafka under Faust takes the same credentials: the sandbox worker on the Faust runtime joins
    its app's group on the secured cluster (as rlstream-sandbox, within its grants)."""
    env = run_env(secured.bootstrap, tmp_path / "home", **secured.client)
    log = tmp_path / "worker.log"
    worker = subprocess.Popen(
        [sys.executable, "-m", "rlstream.cli", "worker", "sandbox", "--runtime", "faust"],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 240
        state = None
        while time.monotonic() < deadline and worker.poll() is None:
            time.sleep(2)
            with security.using(secured.admin()):
                admin = admin_client(secured.bootstrap)
                (future,) = admin.describe_consumer_groups(["rlstream.faust.sandbox"]).values()
                try:
                    group = future.result()
                except KafkaException:  # the group's coordinator is still being placed
                    continue
            state = (group.state.name, len(group.members))
            if state == ("STABLE", 1):
                break
        assert worker.poll() is None, log.read_text()[-3000:]
        assert state == ("STABLE", 1), (state, log.read_text()[-3000:])
    finally:
        worker.terminate()
        worker.wait(60)


def test_a_whole_run_with_a_principal_per_processor_leaves_no_secret_behind(
    secured: Secured, tmp_path: Path
) -> None:
    """Nothing is allowed that no ACL allows, so every worker doing its part proves it connected as its
    own principal with exactly the grants `rlstream acls plan` derives (a sandbox worker cannot write
    generations, a generator cannot write executions, ...)."""
    home = tmp_path / "home"
    run_id = f"secure-{uuid.uuid4().hex[:8]}"
    env = run_env(secured.bootstrap, home, **secured.client)
    report = tmp_path / "report"
    run = ["run", "--tasks", "synthetic", "--model", "tiny", "--limit", "4", "--group-size", "4"]
    run += ["--steps", "2", "--run-id", run_id, "--json", "--report", str(report)]
    proc = subprocess.run(
        [sys.executable, "-m", "rlstream.cli", *run],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["interrupted"] is False and summary["learner_step"] >= 2, summary
    written = [proc.stdout, proc.stderr]
    for root in (home, report):
        written += [p.read_text(errors="replace") for p in root.rglob("*") if p.is_file() and _texty(p)]
    secrets = secured.secrets()
    assert len(secrets) >= 10 and written
    leaked = [s for s in secrets if any(s in text for text in written)]
    assert not leaked, "a password appears in what the run wrote"


def _texty(path: Path) -> bool:
    return path.suffix in {".log", ".json", ".jsonl", ".html", ".txt", ".csv", ".out", ""} and (
        path.stat().st_size < 50 * 1024 * 1024
    )
