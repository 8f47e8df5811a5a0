"""The local Apache Kafka cluster: KRaft nodes (broker and controller in one JVM) on loopback.

Layout of the data directory::

    cluster.json              cluster id, node count, host, ports and Kafka version (fixed at creation)
    node-<id>/server.properties, log4j2.properties
    node-<id>/data/           the node's log.dirs: topics, metadata log (survives down/up)
    node-<id>/server.log      the broker's log
    node-<id>/jvm.out         the JVM's own stdout/stderr
    node-<id>/broker.pid
    tls/, credentials/        a cluster made with ``auth="scram"``: its throwaway CA and broker keystore,
                              and one password file per SCRAM user (mode 0600)

Nodes run as background JVMs that outlive the command that started them; ``down`` stops them with
SIGTERM (a clean shutdown flushes and closes the logs), then SIGKILL after the stop timeout.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import time
import uuid
from base64 import urlsafe_b64encode
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from pydantic import SecretStr

from infra.kafka import security
from infra.kafka.admin import first_reachable, metadata, wait_until_answering
from infra.kafka.config import BrokerConfig, KafkaConfig
from infra.kafka.security import Credentials, Mechanism
from schemas.errors import BrokerError, DependencyError, UsageError

MIN_JAVA = 17
_STATE = "cluster.json"
_TLS = "tls"
_CREDENTIALS = "credentials"
#: the local cluster's administrator (a super user; the brokers use it among themselves)
ADMIN_USER = "admin"
SCRAM: Mechanism = "SCRAM-SHA-512"
#: the PKCS12 stores' password: the keys' protection is the files' mode (0600 in a 0700 folder)
_TLS_STORE_PASSWORD = "rlstream-local"
Auth = Literal["none", "scram"]


@dataclass(frozen=True)
class ClusterLayout:
    """What is fixed when a cluster is first formatted."""

    cluster_id: str
    brokers: int
    host: str
    base_port: int
    kafka_version: str
    #: "none": a plaintext listener anyone may use; "scram": SASL_SSL with SCRAM users and ACLs enforced
    auth: str = "none"

    def client_port(self, node: int) -> int:
        return self.base_port + 2 * (node - 1)

    def controller_port(self, node: int) -> int:
        return self.base_port + 2 * (node - 1) + 1

    @property
    def nodes(self) -> range:
        return range(1, self.brokers + 1)

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{self.host}:{self.client_port(n)}" for n in self.nodes)


@dataclass(frozen=True)
class NodeStatus:
    node_id: int
    pid: int | None
    running: bool
    client_port: int
    controller_port: int
    log_file: Path


@dataclass(frozen=True)
class ClusterStatus:
    data_dir: Path
    layout: ClusterLayout | None
    nodes: tuple[NodeStatus, ...]
    answering: bool

    @property
    def running(self) -> bool:
        return bool(self.nodes) and all(n.running for n in self.nodes)

    @property
    def bootstrap(self) -> str | None:
        return self.layout.bootstrap if self.layout else None

    def as_dict(self) -> dict[str, object]:
        return {
            "data_dir": str(self.data_dir),
            "bootstrap_servers": self.bootstrap,
            "running": self.running,
            "answering": self.answering,
            "cluster": asdict(self.layout) if self.layout else None,
            "nodes": [{**asdict(n), "log_file": str(n.log_file)} for n in self.nodes],
        }


class LocalCluster:
    """A KRaft cluster of ``brokers`` combined nodes whose state lives in ``data_dir``."""

    def __init__(self, config: BrokerConfig, *, data_dir: Path, lib_dir: Path) -> None:
        self.config = config
        self.data_dir = data_dir
        self.lib_dir = lib_dir
        #: the JVMs this object started: their exit is known for sure (no pid-file guessing)
        self._procs: dict[int, subprocess.Popen[bytes]] = {}

    # ---- queries -------------------------------------------------------------------------------

    def layout(self) -> ClusterLayout | None:
        path = self.data_dir / _STATE
        if not path.is_file():
            return None
        try:
            return ClusterLayout(**json.loads(path.read_text()))
        except (ValueError, TypeError) as exc:
            raise BrokerError(
                f"{path} is unreadable ({exc})",
                hint=f"stop any broker using it and delete {self.data_dir} to start a fresh cluster",
            ) from None

    def status(self, *, probe: bool = True) -> ClusterStatus:
        layout = self.layout()
        nodes: list[NodeStatus] = []
        if layout is not None:
            for n in layout.nodes:
                pid = self._pid(n)
                nodes.append(
                    NodeStatus(
                        node_id=n,
                        pid=pid,
                        running=pid is not None,
                        client_port=layout.client_port(n),
                        controller_port=layout.controller_port(n),
                        log_file=self._node_dir(n) / "server.log",
                    )
                )
        answering = False
        if (
            probe
            and layout is not None
            and any(n.running for n in nodes)
            and first_reachable(layout.bootstrap)
        ):
            try:
                with security.using(self.admin_credentials()):
                    metadata(layout.bootstrap, timeout_s=3.0)
                answering = True
            except (BrokerError, UsageError):
                answering = False
        return ClusterStatus(self.data_dir, layout, tuple(nodes), answering)

    def running_bootstrap(self) -> str | None:
        """Bootstrap servers of this cluster when at least one node process is alive."""
        layout = self.layout()
        if layout is None or not any(self._pid(n) is not None for n in layout.nodes):
            return None
        return layout.bootstrap

    # ---- up / down -----------------------------------------------------------------------------

    def up(
        self, brokers: int | None = None, *, auth: Auth | None = None, users: Sequence[str] = ()
    ) -> ClusterStatus:
        """Start every node that is not running and wait until the cluster answers.

        A new cluster with ``auth="scram"`` gets a SASL_SSL listener (a throwaway CA and broker
        certificate), a SCRAM-SHA-512 user for ``users`` and for its administrator, and the standard
        authorizer with nothing allowed that no ACL allows."""
        java = check_java(self.config.java)
        layout = self._layout_for(brokers, auth)
        lib_ok = any(self.lib_dir.glob("kafka_*.jar"))
        if not lib_ok:
            raise DependencyError(
                f"no Apache Kafka jars in {self.lib_dir}",
                hint="run scripts/setup.sh (or: .venv/bin/rlstream broker fetch)",
            )
        to_start = [n for n in layout.nodes if self._pid(n) is None]
        for n in to_start:
            for port in (layout.client_port(n), layout.controller_port(n)):
                ensure_port_free(layout.host, port)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if layout.auth == "scram":
            self._make_secrets(java, layout, users)
        (self.data_dir / _STATE).write_text(json.dumps(asdict(layout), indent=2) + "\n")
        for n in layout.nodes:
            self._write_node_files(layout, n)
        for n in to_start:
            if not (self._node_dir(n) / "data" / "meta.properties").is_file():
                self._format(java, layout, n)
        for n in to_start:
            self._start_node(java, n)
        with security.using(self.admin_credentials()):
            self._wait_ready(layout)
        return self.status()

    def down(self) -> list[int]:
        """Stop every node (SIGTERM, then SIGKILL after the stop timeout); returns the stopped node ids."""
        layout = self.layout()
        if layout is None:
            return []
        pids = {n: pid for n in layout.nodes if (pid := self._pid(n)) is not None}
        pids.update({n: p.pid for n, p in self._procs.items() if p.poll() is None})
        for pid in pids.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + self.config.stop_timeout_s
        while time.monotonic() < deadline and any(_alive(p) for p in pids.values()):
            time.sleep(0.2)
        for pid in pids.values():
            if _alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        for pid in pids.values():
            _wait_gone(pid, 10.0)
        for proc in self._procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(1.0)  # reap
        self._procs.clear()
        for n in layout.nodes:
            (self._node_dir(n) / "broker.pid").unlink(missing_ok=True)
        return sorted(pids)

    # ---- internals -----------------------------------------------------------------------------

    def _layout_for(self, brokers: int | None, auth: Auth | None = None) -> ClusterLayout:
        existing = self.layout()
        if existing is not None:
            if auth is not None and auth != existing.auth:
                raise UsageError(
                    f"{self.data_dir} holds a cluster with auth {existing.auth!r}, not {auth!r}",
                    hint=f"use another --data-dir, or run `rlstream broker down` and delete {self.data_dir} "
                    "to replace it (its topics are lost)",
                )
            if brokers is not None and brokers != existing.brokers:
                raise UsageError(
                    f"{self.data_dir} holds a {existing.brokers}-broker cluster, not {brokers}",
                    hint=f"use another --data-dir for a {brokers}-broker cluster, or run `rlstream broker "
                    f"down` and delete {self.data_dir} to replace it (its topics are lost)",
                )
            if existing.kafka_version != self.config.kafka_version:
                # the jars given to us are for the configured version; the data was formatted by another
                raise UsageError(
                    f"{self.data_dir} was created by Kafka {existing.kafka_version}, the configured "
                    f"version is {self.config.kafka_version}",
                    hint=f"set RLSTREAM_BROKER__KAFKA_VERSION={existing.kafka_version}, or use another "
                    "--data-dir",
                )
            return existing
        return ClusterLayout(
            cluster_id=new_cluster_id(),
            brokers=brokers or self.config.brokers,
            host=self.config.host,
            base_port=self.config.base_port,
            kafka_version=self.config.kafka_version,
            auth=auth or "none",
        )

    def _node_dir(self, node: int) -> Path:
        return self.data_dir / f"node-{node}"

    def _write_node_files(self, layout: ClusterLayout, node: int) -> None:
        d = self._node_dir(node)
        (d / "data").mkdir(parents=True, exist_ok=True)
        text = server_properties(layout, node, d / "data")
        if layout.auth == "scram":
            text += secure_properties(layout, node, self.data_dir)
        (d / "server.properties").write_text(text)
        if layout.auth == "scram":
            (d / "server.properties").chmod(0o600)  # it holds the administrator's password
        (d / "log4j2.properties").write_text(LOG4J2.format(log=d / "server.log"))

    def _format(self, java: str, layout: ClusterLayout, node: int) -> None:
        d = self._node_dir(node)
        cmd = [
            java,
            "-Xmx256m",
            f"-Dlog4j2.configurationFile={d / 'log4j2.properties'}",
            "-cp",
            f"{self.lib_dir}/*",
            "kafka.tools.StorageTool",
            "format",
            "--ignore-formatted",
            "-t",
            layout.cluster_id,
            "-c",
            str(d / "server.properties"),
        ]
        if layout.auth == "scram":
            for user in sorted(p.stem for p in (self.data_dir / _CREDENTIALS).glob("*.password")):
                secret = _password(self.data_dir, user)
                cmd += ["--add-scram", f"{SCRAM}=[name={user},password={secret}]"]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-10:])
            for secret in _secrets_in(self.data_dir):
                tail = tail.replace(secret, "**********")
            raise BrokerError(
                f"formatting the storage of node {node} in {d / 'data'} failed:\n{tail}",
                hint=f"check that the jars in {self.lib_dir} are Apache Kafka {layout.kafka_version} "
                f"(delete that folder to fetch them again) and that {d} is writable",
            )

    def _start_node(self, java: str, node: int) -> None:
        d = self._node_dir(node)
        heap = f"{self.config.heap_mb}m"
        cmd = [
            java,
            f"-Xms{heap}",
            f"-Xmx{heap}",
            "-XX:+UseG1GC",
            "-XX:MaxGCPauseMillis=20",
            *(["-XX:TieredStopAtLevel=1"] if self.config.quick_jit else []),
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={d / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={d}",
            "-cp",
            f"{self.lib_dir}/*",
            "kafka.Kafka",
            str(d / "server.properties"),
        ]
        with open(d / "jvm.out", "ab") as out:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=d,
                start_new_session=True,  # the broker outlives the command (and its Ctrl-C)
            )
        self._procs[node] = proc
        (d / "broker.pid").write_text(f"{proc.pid}\n")

    def _wait_ready(self, layout: ClusterLayout) -> None:
        deadline = time.monotonic() + self.config.start_timeout_s
        while True:
            dead = [
                n
                for n in layout.nodes
                if (self._procs[n].poll() is not None if n in self._procs else self._pid(n) is None)
            ]
            if dead:
                n = dead[0]
                raise BrokerError(
                    f"broker node {n} exited during start-up:\n{_tail(self._node_dir(n) / 'server.log')}",
                    hint=f"read {self._node_dir(n) / 'server.log'} and {self._node_dir(n) / 'jvm.out'}",
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                logs = ", ".join(str(self._node_dir(n) / "server.log") for n in layout.nodes)
                raise BrokerError(
                    f"Kafka at {layout.bootstrap} did not answer within {self.config.start_timeout_s:.0f}s",
                    hint=f"read {logs}; on a slow or busy machine raise RLSTREAM_BROKER__START_TIMEOUT_S; "
                    "`rlstream broker down` stops what did start",
                )
            try:
                wait_until_answering(layout.bootstrap, brokers=layout.brokers, timeout_s=min(2.0, remaining))
                return
            except BrokerError:
                continue

    # ---- a secured cluster ---------------------------------------------------------------------

    def admin_credentials(self) -> Credentials:
        """How the cluster's administrator connects (plaintext credentials for a cluster without auth)."""
        layout = self.layout()
        if layout is None or layout.auth != "scram":
            return Credentials()
        return Credentials(
            protocol="SASL_SSL",
            mechanism=SCRAM,
            username=ADMIN_USER,
            password=SecretStr(_password(self.data_dir, ADMIN_USER)),
            ca_file=self.data_dir / _TLS / "ca.pem",
        )

    def client_settings(self) -> dict[str, str]:
        """The settings a client of this cluster sets: one principal per processor kind, each reading
        its own password file (nothing secret in them)."""
        layout = self.layout()
        if layout is None or layout.auth != "scram":
            return {}
        return {
            "RLSTREAM_KAFKA__SECURITY__PROTOCOL": "SASL_SSL",
            "RLSTREAM_KAFKA__SECURITY__SASL_MECHANISM": SCRAM,
            "RLSTREAM_KAFKA__SECURITY__USERNAME": "rlstream-{processor}",
            "RLSTREAM_KAFKA__SECURITY__PASSWORD_FILE": str(
                self.data_dir / _CREDENTIALS / "rlstream-{processor}.password"
            ),
            "RLSTREAM_KAFKA__SECURITY__CA_FILE": str(self.data_dir / _TLS / "ca.pem"),
        }

    def _make_secrets(self, java: str, layout: ClusterLayout, users: Sequence[str]) -> None:
        """Passwords for users that have none yet, and the CA and broker keystore once."""
        creds = self.data_dir / _CREDENTIALS
        creds.mkdir(mode=0o700, exist_ok=True)
        for user in (ADMIN_USER, *users):
            path = creds / f"{user}.password"
            if not path.exists():
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as fh:
                    fh.write(secrets.token_urlsafe(24) + "\n")
        tls = self.data_dir / _TLS
        if not (tls / "broker.p12").is_file():
            make_tls(keytool_of(java), tls, layout.host)

    def _pid(self, node: int) -> int | None:
        """The pid of the node's JVM if it is alive and really is that node (pid files can go stale)."""
        path = self._node_dir(node) / "broker.pid"
        try:
            pid = int(path.read_text().strip())
        except (OSError, ValueError):
            return None
        if not _alive(pid):
            return None
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return pid  # no /proc: trust the pid file
        if cmdline == [b""]:
            return pid  # unreadable for a moment (e.g. while the process execs): trust the pid file
        props = str(self._node_dir(node) / "server.properties").encode()
        return pid if b"kafka.Kafka" in cmdline and props in cmdline else None


def new_cluster_id() -> str:
    """A Kafka cluster id: 16 random bytes, URL-safe base64 without padding.

    Like Kafka's own generator it never starts with '-', which the storage tool would read as an option.
    """
    while True:
        cluster_id = urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def server_properties(layout: ClusterLayout, node: int, log_dir: Path) -> str:
    host = layout.host
    voters = ",".join(f"{n}@{host}:{layout.controller_port(n)}" for n in layout.nodes)
    replicas = min(3, layout.brokers)
    min_isr = 2 if replicas >= 3 else 1
    lines = {
        "process.roles": "broker,controller",
        "node.id": str(node),
        "controller.quorum.voters": voters,
        "listeners": f"PLAINTEXT://{host}:{layout.client_port(node)},CONTROLLER://{host}:{layout.controller_port(node)}",
        "advertised.listeners": f"PLAINTEXT://{host}:{layout.client_port(node)}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(log_dir),
        "num.partitions": "1",
        "default.replication.factor": str(replicas),
        "min.insync.replicas": str(min_isr),
        "offsets.topic.replication.factor": str(replicas),
        "transaction.state.log.replication.factor": str(replicas),
        "transaction.state.log.min.isr": str(min_isr),
        "share.coordinator.state.topic.replication.factor": str(replicas),
        "share.coordinator.state.topic.min.isr": str(min_isr),
        # a local cluster serves one developer: no reason to make the first consumer group wait 3s
        "group.initial.rebalance.delay.ms": "0",
        # a node restarted after a kill is refused re-registration (DUPLICATE_BROKER_REGISTRATION) until
        # its previous incarnation's session has expired, counted from the controller's own start: the
        # session is the restarted cluster's wait, retried at the heartbeat interval (defaults: 9 s, 2 s)
        "broker.session.timeout.ms": "4000",
        "broker.heartbeat.interval.ms": "1000",
        # the group and transaction coordinators' logs: 50 partitions each by default, every one of them
        # loaded, recovered and moved (fenced, unclean, unfenced) when a node restarts; a handful serves
        # a local cluster's groups and transactional ids. Only a new cluster's topics get this count (an
        # existing topic keeps its own, which the coordinators read from the metadata)
        "offsets.topic.num.partitions": "5",
        "transaction.state.log.num.partitions": "5",
        # topics come from the catalog (`rlstream topics create`); a typo must not create a new topic
        "auto.create.topics.enable": "false",
        "log.retention.hours": "-1",
    }
    return "".join(f"{k}={v}\n" for k, v in lines.items())


def secure_properties(layout: ClusterLayout, node: int, data_dir: Path) -> str:
    """What a node of an ``auth="scram"`` cluster adds: the client listener becomes SASL_SSL (the
    brokers speak to each other on it as the administrator), the controller listener stays plaintext on
    loopback (its principal, ANONYMOUS, is a super user: KRaft's own traffic), and the standard
    authorizer allows nothing no ACL allows."""
    host, port = layout.host, layout.client_port(node)
    tls = data_dir / _TLS
    admin_password = _password(data_dir, ADMIN_USER)
    jaas = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{ADMIN_USER}" password="{admin_password}";'
    )
    lines = {
        "listeners": f"SASL_SSL://{host}:{port},CONTROLLER://{host}:{layout.controller_port(node)}",
        "advertised.listeners": f"SASL_SSL://{host}:{port}",
        "inter.broker.listener.name": "SASL_SSL",
        "listener.security.protocol.map": "SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT",
        "sasl.enabled.mechanisms": SCRAM,
        "sasl.mechanism.inter.broker.protocol": SCRAM,
        f"listener.name.sasl_ssl.{SCRAM.lower()}.sasl.jaas.config": jaas,
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(tls / "broker.p12"),
        "ssl.keystore.password": _TLS_STORE_PASSWORD,
        # the brokers connect to each other over TLS too: they trust the same CA as clients
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(tls / "ca.pem"),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "allow.everyone.if.no.acl.found": "false",
        "super.users": f"User:{ADMIN_USER};User:ANONYMOUS",
    }
    # later keys override the plaintext listener lines written before them
    return "".join(f"{k}={v}\n" for k, v in lines.items())


def keytool_of(java: str) -> str:
    path = Path(shutil.which(java) or java).resolve().parent / "keytool"
    if not path.is_file():
        raise DependencyError(f"no keytool beside {java}", hint="install a full Java runtime (JRE 17+)")
    return str(path)


def make_tls(keytool: str, tls: Path, host: str) -> None:
    """A throwaway CA (ca.pem, for clients) and a broker key and certificate it signed for ``host`` and
    localhost (broker.p12). The CA's key never leaves ca.p12; both stores are readable by the owner
    only. Their password guards nothing the file mode does not: the keys live beside the broker."""
    tls.mkdir(mode=0o700, parents=True, exist_ok=True)
    san = f"SAN=dns:localhost,ip:{host}" if _is_ip(host) else f"SAN=dns:localhost,dns:{host}"
    store = ["-storetype", "PKCS12", "-storepass", _TLS_STORE_PASSWORD]
    steps = [
        ["-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-validity", "3650",
         "-dname", "CN=rlstream local CA", "-ext", "bc:c", "-keystore", str(tls / "ca.p12"), *store],
        ["-exportcert", "-rfc", "-alias", "ca", "-keystore", str(tls / "ca.p12"), *store,
         "-file", str(tls / "ca.pem")],
        ["-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048", "-validity", "3650",
         "-dname", "CN=localhost", "-ext", san, "-keystore", str(tls / "broker.p12"), *store],
        ["-certreq", "-alias", "broker", "-keystore", str(tls / "broker.p12"), *store,
         "-file", str(tls / "broker.csr")],
        ["-gencert", "-alias", "ca", "-keystore", str(tls / "ca.p12"), *store, "-rfc", "-validity", "3650",
         "-ext", san, "-infile", str(tls / "broker.csr"), "-outfile", str(tls / "broker.pem")],
        ["-importcert", "-noprompt", "-alias", "ca", "-file", str(tls / "ca.pem"),
         "-keystore", str(tls / "broker.p12"), *store],
        ["-importcert", "-noprompt", "-alias", "broker", "-file", str(tls / "broker.pem"),
         "-keystore", str(tls / "broker.p12"), *store],
    ]  # fmt: skip
    for args in steps:
        proc = subprocess.run([keytool, *args], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise BrokerError(
                f"making the local CA and broker certificate in {tls} failed at keytool {args[0]}:\n"
                + (proc.stdout + proc.stderr).strip()[-800:],
                hint=f"delete {tls} and try again",
            )
    for path in tls.iterdir():
        path.chmod(0o600)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _password(data_dir: Path, user: str) -> str:
    return (data_dir / _CREDENTIALS / f"{user}.password").read_text().strip()


def _secrets_in(data_dir: Path) -> list[str]:
    return [_password(data_dir, p.stem) for p in (data_dir / _CREDENTIALS).glob("*.password")]


LOG4J2 = """status = warn
appender.file.type = RollingFile
appender.file.name = file
appender.file.fileName = {log}
appender.file.filePattern = {log}.%i
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 50MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 3
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
logger.state.name = state.change.logger
logger.state.level = warn
"""


def check_java(java: str) -> str:
    """The path of a Java >= 17 runtime, or a DependencyError saying how to get one."""
    path = shutil.which(java)
    hint = "run scripts/setup.sh (it installs Java 17) or apt-get install -y openjdk-17-jre-headless"
    if path is None:
        raise DependencyError(
            f"Java ({java}) is not installed; the Kafka broker is a Java program", hint=hint
        )
    proc = subprocess.run([path, "-version"], capture_output=True, text=True, check=False)
    m = re.search(r'version "(\d+)(?:\.(\d+))?', proc.stderr + proc.stdout)
    if m is None:
        raise DependencyError(f"could not tell the version of {path}: {proc.stderr.strip()[:200]}", hint=hint)
    major = int(m.group(2)) if m.group(1) == "1" and m.group(2) else int(m.group(1))
    if major < MIN_JAVA:
        raise DependencyError(f"{path} is Java {major}; Apache Kafka 4 needs Java {MIN_JAVA}+", hint=hint)
    return path


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def ensure_port_free(host: str, port: int, *, exiting_grace_s: float = 30.0) -> None:
    """BrokerError naming the holder unless ``port`` is free. A port no live process owns (a killed
    broker's threads still exiting, its sockets not closed yet) is waited for a while first."""
    deadline = time.monotonic() + exiting_grace_s
    while True:
        if port_free(host, port):
            return
        holder = port_holder(port)
        if (holder or "").startswith("pid ") or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    who = f" by {holder}" if holder else ""
    raise BrokerError(
        f"port {port} on {host} is taken{who}",
        hint="stop that process, or start the broker on other ports with RLSTREAM_BROKER__BASE_PORT=<port> "
        "(node i uses base+2(i-1) and base+2(i-1)+1); for an existing cluster set "
        "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS instead",
    )


def port_holder(port: int) -> str | None:
    """``pid N (command line)`` of the process listening on ``port``, where /proc tells."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(cols[9])
    if not inodes:
        return None
    targets = {f"socket:[{i}]" for i in inodes}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) in targets:
                    args = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
                    cmd = " ".join(a for a in args if a)
                    if len(cmd) > 160:  # keep the program and its last arguments: they tell what it is
                        cmd = f"{args[0]} ... {cmd[-120:]}"
                    return f"pid {proc.name} ({cmd})"
        except OSError:
            continue
    return "another process"


def ephemeral_port_range() -> tuple[int, int]:
    """The ports the kernel hands out to outgoing connections (Linux default where unreadable)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def find_free_base_port(host: str, ports_needed: int, *, start: int = 20000, end: int | None = None) -> int:
    """A base port such that ``ports_needed`` consecutive ports from it are free (for tests).

    Chosen below the kernel's ephemeral range: while a broker on such a port restarts, the clients
    reconnecting to it can be given that very port as their own source port and connect to
    themselves (TCP simultaneous open), and the restarted broker then fails to bind.
    """
    import random

    if end is None:
        low = ephemeral_port_range()[0]
        end = low if low > start + 1000 else 60000  # an unusual range: the old behaviour
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(start, end - ports_needed)
        if all(port_free(host, base + i) for i in range(ports_needed)):
            return base
    raise BrokerError(f"found no {ports_needed} consecutive free ports between {start} and {end} on {host}")


def resolve_bootstrap(kafka: KafkaConfig, data_dir: Path) -> str:
    """Bootstrap servers every client uses: the configured cluster, else the running local one.

    BrokerError (with the command to run) when neither is there.
    """
    if kafka.bootstrap_servers:
        return kafka.bootstrap_servers
    running = LocalCluster(BrokerConfig(), data_dir=data_dir, lib_dir=data_dir).running_bootstrap()
    if running:
        return running
    raise BrokerError(
        f"no Kafka cluster to talk to: RLSTREAM_KAFKA__BOOTSTRAP_SERVERS is unset and no local broker is "
        f"running from {data_dir}",
        hint="run `rlstream broker up` (or set RLSTREAM_KAFKA__BOOTSTRAP_SERVERS to an existing cluster)",
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a child we started and that exited stays a zombie until reaped: reap it, it is not running
    with contextlib.suppress(ChildProcessError, OSError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _wait_gone(pid: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return f"(no log at {path})"
    errors = [ln for ln in text if " ERROR " in ln or "Exception" in ln]
    return "\n".join((errors or text)[-lines:])
