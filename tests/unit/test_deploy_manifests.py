"""The deployment files in infra/deploy: they parse, the Kubernetes manifests validate against the API
schemas of a recent Kubernetes release (offline), every service runs a real worker with real settings,
and each processor runs as many replicas as its input topic has partitions."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # ships no type hints
import kubernetes_validate  # type: ignore[import-untyped]  # ships no type hints
import pytest
import yaml
from pydantic import BaseModel

import schemas.topics as topics
from rlstream.settings import Settings
from rlstream.workers import PIPELINE_WORKERS

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "infra" / "deploy"
K8S = DEPLOY / "k8s"
#: the Kubernetes release whose API schemas the manifests must satisfy (shipped with kubernetes-validate)
K8S_VERSION = "1.35.0"

#: where each processor's input topics are declared (read from the source, no heavy imports)
AGENTS = {
    "scheduler": "streams/scheduler/agent.py",
    "generator": "producers/generator/agent.py",
    "evaluator": "producers/generator/agent.py",
    "sandbox": "streams/sandbox/agent.py",
    "episode": "streams/episode/agent.py",
    "reward": "streams/reward/agent.py",
    "filter": "streams/noise/agent.py",
    "experience": "streams/experience/agent.py",
    "monitor": "streams/monitor/agent.py",
}
#: the name of the input topics' tuple where it is not INPUT_TOPICS
INPUTS_NAME = {"evaluator": "EVAL_INPUT_TOPICS"}
#: processors that must run as one instance whatever the partition count
SINGLETONS = {
    "scheduler": "decides across tenants globally; its state is one changelog partition",
    "projector": "one replica by default; more share the partitions, one consumer group per database",
    "monitor": "evaluates the alert rules across every run; which alerts fire is one changelog partition",
}
WORKER_CMD = re.compile(r"\brlstream worker ([a-z_-]+)")


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def _k8s_files() -> list[Path]:
    return sorted(K8S.rglob("*.yaml"))


def _k8s_docs() -> list[tuple[Path, dict[str, Any]]]:
    return [(p, d) for p in _k8s_files() for d in _docs(p)]


def _compose() -> dict[str, Any]:
    doc = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert isinstance(doc, dict)
    return doc


def _known_workers() -> set[str]:
    """Worker names ``rlstream worker NAME`` accepts."""
    return set(PIPELINE_WORKERS)


def _setting_path_ok(key: str) -> bool:
    """Whether ``RLSTREAM_A__B`` names a field of the settings object (nested models walked)."""
    parts = key.removeprefix("RLSTREAM_").lower().split("__")
    model: type[BaseModel] = Settings
    for i, part in enumerate(parts):
        field = model.model_fields.get(part)
        if field is None:
            return False
        annotation = field.annotation
        if i < len(parts) - 1:
            if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
                return False
            model = annotation
    return True


def _check_settings(env: dict[str, str], where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = [k for k in env if k.startswith("RLSTREAM_")]
    bad = [k for k in keys if not _setting_path_ok(k)]
    assert not bad, f"{where}: not rlstream settings: {bad}"
    with monkeypatch.context() as m:  # and every value parses as that setting
        for k in keys:
            m.setenv(k, env[k])
        Settings(_env_file=None)  # type: ignore[call-arg]


def _interpolate(value: Any) -> str:
    """Compose's ``${VAR:-default}`` with VAR unset."""
    return re.sub(r"\$\{[A-Z0-9_]+:-([^}]*)\}", r"\1", str(value))


def _partitions(topic_name: str, default: int) -> int:
    return topics.by_name(topic_name).partitions or default


def _input_topics(worker: str) -> tuple[str, ...]:
    tree = ast.parse((ROOT / AGENTS[worker]).read_text())
    wanted = INPUTS_NAME.get(worker, "INPUT_TOPICS")
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == wanted for t in node.targets
        ):
            assert isinstance(node.value, ast.Tuple)
            names = []
            for elt in node.value.elts:  # ``CATALOG_NAME.name`` of the topic catalog
                if isinstance(elt, ast.Attribute) and isinstance(elt.value, ast.Name):
                    catalogued = getattr(topics, elt.value.id, None)
                    if isinstance(catalogued, topics.Topic):
                        names.append(catalogued.name)
            return tuple(names)
    raise AssertionError(f"{AGENTS[worker]} declares no INPUT_TOPICS")


def _settings_map() -> dict[str, str]:
    for _, doc in _k8s_docs():
        if doc.get("kind") == "ConfigMap" and doc["metadata"]["name"] == "rlstream-settings":
            return {k: str(v) for k, v in doc["data"].items()}
    raise AssertionError("no ConfigMap rlstream-settings in infra/deploy/k8s")


def _pod_spec(doc: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = doc["spec"]["template"]["spec"]
    return spec


def _worker_of(doc: dict[str, Any]) -> str | None:
    for c in _pod_spec(doc)["containers"]:
        args = [str(a) for a in c.get("args", [])]
        if args[:1] == ["worker"] and len(args) > 1:
            return args[1]
    return None


# -- tests -------------------------------------------------------------------------------------------
def test_every_deployment_file_parses() -> None:
    files = sorted(DEPLOY.rglob("*.yaml"))
    assert DEPLOY / "compose.yaml" in files and len(_k8s_files()) >= 10
    for path in files:
        assert _docs(path), f"{path} is empty"


@pytest.mark.parametrize("path", _k8s_files(), ids=lambda p: str(p.relative_to(K8S)))
def test_kubernetes_manifest_validates_against_the_api_schema(path: Path) -> None:
    for doc in _docs(path):
        try:
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{path.name} {doc.get('kind')}/{doc.get('metadata', {}).get('name')}: {exc.message}")


def test_compose_runs_every_worker_and_only_real_ones() -> None:
    services = _compose()["services"]
    ran = {}
    for name, svc in services.items():
        cmd = " ".join(str(x) for x in [*(svc.get("entrypoint") or []), *(svc.get("command") or [])])
        found = WORKER_CMD.findall(cmd)
        if found:
            ran[name] = found[0]
    known = _known_workers()
    unknown = {s: w for s, w in ran.items() if w not in known}
    assert not unknown, f"services run workers rlstream does not have: {unknown} (known: {sorted(known)})"
    assert set(PIPELINE_WORKERS) <= set(ran.values()), "a worker without a compose service"
    assert {"kafka", "postgres", "jaeger"} <= set(services)
    kafka = services["kafka"]
    assert kafka["environment"]["KAFKA_PROCESS_ROLES"] == "broker,controller"  # KRaft, no ZooKeeper


def test_compose_and_configmap_set_only_real_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    compose = _compose()
    for name, svc in compose["services"].items():
        env = {k: _interpolate(v) for k, v in (svc.get("environment") or {}).items()}
        _check_settings(env, f"compose service {name}", monkeypatch)
    _check_settings(_settings_map(), "ConfigMap rlstream-settings", monkeypatch)
    for path, doc in _k8s_docs():
        if doc["kind"] not in ("Deployment", "Job", "StatefulSet"):
            continue
        for c in _pod_spec(doc)["containers"]:
            env = {e["name"]: str(e.get("value", "")) for e in c.get("env", []) if "value" in e}
            _check_settings(env, f"{path.name} container {c['name']}", monkeypatch)


def test_processor_replicas_match_the_partitions_of_their_input_topic() -> None:
    config = _settings_map()
    default = int(config["RLSTREAM_KAFKA__PARTITIONS"])
    assert str(default) == str(_compose()["x-settings"]["RLSTREAM_KAFKA__PARTITIONS"])
    processors = [(p, d) for p, d in _k8s_docs() if d["kind"] == "StatefulSet" and _worker_of(d)]
    seen = set()
    for path, doc in processors:
        worker = _worker_of(doc)
        assert worker is not None and worker in _known_workers(), f"{path.name}: unknown worker {worker}"
        seen.add(worker)
        replicas = doc["spec"]["replicas"]
        if worker in SINGLETONS:
            assert replicas == 1, f"{path.name}: {worker} must be a singleton ({SINGLETONS[worker]})"
            continue
        inputs = _input_topics(worker)
        expected = _partitions(inputs[0], default)
        assert doc["metadata"]["annotations"]["rlstream.io/input-topic"] == inputs[0]
        assert replicas == expected, f"{path.name}: {replicas} replicas, {inputs[0]}: {expected} partitions"
    assert seen >= set(AGENTS) | {"projector"}, f"no StatefulSet for {set(AGENTS) - seen}"


def test_processors_keep_their_transactional_identity_across_a_pod_replacement() -> None:
    """A processor's --instance names its transactional id; only a StatefulSet's pod name survives the
    pod being replaced, so the replacement fences its predecessor's open transaction at once instead of
    every read_committed reader waiting for the broker's transaction timeout."""
    docs = _k8s_docs()
    headless = {
        d["metadata"]["name"]
        for _, d in docs
        if d["kind"] == "Service" and d["spec"].get("clusterIP") == "None"
    }
    for path, doc in docs:
        worker = _worker_of(doc) if doc["kind"] in ("Deployment", "StatefulSet", "Job") else None
        if worker is None or worker == "learner":
            continue
        assert doc["kind"] == "StatefulSet", f"{path.name}: {worker} runs as a {doc['kind']}"
        assert doc["spec"]["serviceName"] in headless, f"{path.name}: no headless Service governs it"
        (container,) = _pod_spec(doc)["containers"]
        args = [str(a) for a in container["args"]]
        instance = args[args.index("--instance") + 1]
        assert instance == "$(POD_NAME)", f"{path.name}: --instance {instance}"
        env = {e["name"]: e for e in container["env"]}
        assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"


def test_sandbox_pods_run_under_an_isolating_runtime_class_and_the_learner_is_a_gpu_job() -> None:
    docs = _k8s_docs()
    classes = {d["metadata"]["name"]: d["handler"] for _, d in docs if d["kind"] == "RuntimeClass"}
    assert classes.get("gvisor") == "runsc" and classes.get("kata") == "kata"
    by_worker: dict[str, list[dict[str, Any]]] = {}
    for _, d in docs:
        if d["kind"] in ("StatefulSet", "Job") and _worker_of(d):
            by_worker.setdefault(_worker_of(d) or "", []).append(d)
    for worker in ("sandbox", "reward", "filter"):  # every pod that executes model-written code
        for d in by_worker[worker]:
            assert _pod_spec(d).get("runtimeClassName") in classes, f"{worker} runs without a RuntimeClass"
    (learner,) = by_worker["learner"]
    assert learner["kind"] == "Job"
    limits = _pod_spec(learner)["containers"][0]["resources"]["limits"]
    assert int(limits["nvidia.com/gpu"]) >= 1
    gpu_generators = [
        d
        for d in by_worker["generator"]
        if "nvidia.com/gpu" in _pod_spec(d)["containers"][0]["resources"].get("limits", {})
    ]
    assert gpu_generators, "no GPU variant of the generator"


def test_gpu_pods_run_the_gpu_environment_which_the_image_installs_from_its_lock_alone() -> None:
    gpu_containers = [
        (path, c)
        for path, doc in _k8s_docs()
        if doc["kind"] in ("Deployment", "Job", "StatefulSet")
        for c in _pod_spec(doc)["containers"]
        if "nvidia.com/gpu" in c.get("resources", {}).get("limits", {})
    ]
    assert len(gpu_containers) >= 2, "the learner and the GPU generator"
    image = "rlstream-gpu:latest"
    wrong = [f"{path.name}: {c['image']}" for path, c in gpu_containers if c["image"] != image]
    assert not wrong, f"GPU pods must run the GPU environment's image ({image}): {wrong}"
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    # the GPU build installs infra/gpu/uv.lock as locked, without dev tools; nothing else is pip-installed
    assert "COPY --chown=rlstream infra/gpu/pyproject.toml infra/gpu/uv.lock infra/gpu/" in dockerfile
    assert dockerfile.count("uv sync --frozen --no-dev --project infra/gpu") == 2
    installs = re.findall(r"pip install [^\n]*", dockerfile)
    assert installs and all('"uv==' in line for line in installs), installs


def test_every_pod_that_talks_to_kafka_mounts_its_own_principal_s_secret() -> None:
    """One secret per processor kind, mounted where the (commented) security settings read the password:
    a compromised sandbox pod holds the sandbox's credentials, never the learner's."""
    text = (K8S / "01-settings.yaml").read_text()
    wanted = re.search(r"RLSTREAM_KAFKA__SECURITY__PASSWORD_FILE: (\S+)", text)
    assert wanted is not None, "the ConfigMap does not show the password file setting"
    folder = str(Path(wanted.group(1)).parent)
    for path, doc in _k8s_docs():
        worker = _worker_of(doc) if doc["kind"] in ("StatefulSet", "Job", "Deployment") else None
        if worker is None:
            continue
        spec = _pod_spec(doc)
        secrets = {v["name"]: v["secret"]["secretName"] for v in spec.get("volumes", []) if "secret" in v}
        mounts = {m["mountPath"]: m["name"] for m in spec["containers"][0].get("volumeMounts", [])}
        assert folder in mounts, f"{path.name}: nothing mounted at {folder}"
        assert secrets.get(mounts[folder]) == f"rlstream-kafka-{worker}", f"{path.name}: {secrets}"


KEDA = DEPLOY / "keda"


def _strict(schema: Any) -> Any:
    """The CRD schema with unknown fields refused, as the API server's strict field validation does
    (`kubectl apply --validate=strict`), except where the schema keeps unknown fields."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        keeps_unknown = out.get("x-kubernetes-preserve-unknown-fields")
        if "properties" in out and "additionalProperties" not in out and not keeps_unknown:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def test_keda_scaled_objects_validate_against_kedas_own_crd_and_scale_each_processor_to_its_partitions() -> (
    None
):
    (crd,) = _docs(KEDA / "crd" / "keda.sh_scaledobjects.yaml")
    (served,) = [v for v in crd["spec"]["versions"] if v["served"]]
    schema = served["schema"]["openAPIV3Schema"]
    scaled = _docs(KEDA / "scaledobjects.yaml")
    validator = jsonschema.Draft4Validator(_strict(schema))
    for doc in scaled:
        assert (
            doc["apiVersion"] == f"{crd['spec']['group']}/{served['name']}" and doc["kind"] == "ScaledObject"
        )
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        assert not errors, f"{doc['metadata']['name']}: {errors[0].message} at {list(errors[0].path)}"
    sets = {d["metadata"]["name"]: d for _, d in _k8s_docs() if d["kind"] == "StatefulSet"}
    config = _settings_map()
    default, run = int(config["RLSTREAM_KAFKA__PARTITIONS"]), config["RLSTREAM_RUN_ID"]
    targets = set()
    for doc in scaled:
        spec = doc["spec"]
        target = sets[spec["scaleTargetRef"]["name"]]
        assert spec["scaleTargetRef"]["kind"] == "StatefulSet"
        worker = _worker_of(target)
        assert worker is not None and worker not in SINGLETONS, f"{worker} must not be scaled"
        targets.add(worker)
        partitions = _partitions(_input_topics(worker)[0], default)
        assert spec["maxReplicaCount"] == partitions and spec["minReplicaCount"] >= 1
        (trigger,) = spec["triggers"]
        assert trigger["type"] == "kafka"
        meta = trigger["metadata"]
        # the consumer group the processor commits under (a generator's is per run)
        per_run = worker in ("generator", "evaluator")
        assert meta["consumerGroup"] == f"rlstream.{worker}" + (f".{run}" if per_run else "")
        assert meta["bootstrapServers"] == config["RLSTREAM_KAFKA__BOOTSTRAP_SERVERS"]
        assert int(meta["lagThreshold"]) > 0
    assert targets == set(AGENTS) - set(SINGLETONS), "a processor without a ScaledObject"


def test_pods_that_run_model_written_code_reach_only_the_broker_traces_and_dns() -> None:
    """Egress of the sandbox, reward and filter pods: the broker's client port, the trace backend's
    OTLP port and cluster DNS, nothing else; ingress: a metrics scrape only."""
    (policy,) = [d for _, d in _k8s_docs() if d["kind"] == "NetworkPolicy"]
    (selector,) = policy["spec"]["podSelector"]["matchExpressions"]
    assert set(selector["values"]) == {"sandbox", "reward", "filter"}
    assert set(policy["spec"]["policyTypes"]) == {"Ingress", "Egress"}
    allowed = {
        (peer.get("podSelector", {}).get("matchLabels", {}).get("app.kubernetes.io/name")
         or peer["podSelector"]["matchLabels"].get("k8s-app"), port["protocol"], port["port"])
        for rule in policy["spec"]["egress"]
        for peer in rule["to"]
        for port in rule["ports"]
    }  # fmt: skip
    assert allowed == {
        ("kafka", "TCP", 9092),
        ("jaeger", "TCP", 4318),
        ("kube-dns", "UDP", 53),
        ("kube-dns", "TCP", 53),
    }
    (scrape,) = policy["spec"]["ingress"]
    assert [p["port"] for p in scrape["ports"]] == [9464]
    # the ports named are the ones the backing services listen on
    services = {d["metadata"]["name"]: d for _, d in _k8s_docs() if d["kind"] == "Service"}
    assert 9092 in {p["port"] for p in services["kafka"]["spec"]["ports"]}
    assert 4318 in {p["port"] for p in services["jaeger"]["spec"]["ports"]}
