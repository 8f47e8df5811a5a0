"""How this process authenticates to Kafka: TLS and SASL settings (part of ``KafkaConfig``), resolved
once per process into the credentials of one principal, and the client options every Kafka client of
the project is built with (confluent-kafka directly; aiokafka under the Faust runtime).

One principal per processor kind: ``username`` and ``password_file`` may contain ``{processor}``, which
becomes the kind of worker the process runs (``sandbox``, ``learner``, ...; ``cli`` for the other
commands), so one shared configuration gives every worker its own identity and each worker reads only
its own secret. Secrets are read from files or the environment, never from the command line, and are
held as :class:`~pydantic.SecretStr` so a settings dump, a repr or an error message shows ``**********``.
"""

from __future__ import annotations

import contextlib
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, SecretStr, model_validator

from schemas.errors import UsageError

Protocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
Mechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]

#: the principal of commands that are not a worker (publishing tasks, replay, reports, ...)
CLI_PROCESSOR = "cli"


class KafkaSecurity(BaseModel):
    """``RLSTREAM_KAFKA__SECURITY__*``: how clients authenticate and encrypt (default: neither)."""

    model_config = {"frozen": True}

    protocol: Protocol = "PLAINTEXT"
    sasl_mechanism: Mechanism = "SCRAM-SHA-512"
    #: the SASL user; ``{processor}`` becomes this process's worker kind (``cli`` outside a worker)
    username: str | None = None
    #: the SASL password from the environment (``RLSTREAM_KAFKA__SECURITY__PASSWORD``) ...
    password: SecretStr | None = None
    #: ... or from a file (its first line; ``{processor}`` allowed): a mounted secret
    password_file: str | None = None
    #: OAUTHBEARER: the OIDC token endpoint, client id, and the client secret's file
    oauth_token_endpoint: str | None = None
    oauth_client_id: str | None = None
    oauth_client_secret_file: str | None = None
    oauth_scope: str | None = None
    #: TLS: the CA bundle that signed the brokers' certificates (default: the system's)
    ca_file: Path | None = None
    #: TLS client authentication (mutual TLS): certificate and key in PEM, the key's password in a file
    certificate_file: Path | None = None
    key_file: Path | None = None
    key_password_file: Path | None = None
    #: whether a broker's certificate must name the host the client connected to
    check_hostname: bool = True

    @model_validator(mode="after")
    def _consistent(self) -> KafkaSecurity:
        if self.password is not None and self.password_file:
            raise ValueError("set password or password_file, not both")
        if (self.certificate_file is None) != (self.key_file is None):
            raise ValueError("certificate_file and key_file go together (TLS client authentication)")
        if self.uses_sasl and self.sasl_mechanism == "OAUTHBEARER":
            missing = [
                n
                for n in ("oauth_token_endpoint", "oauth_client_id", "oauth_client_secret_file")
                if not getattr(self, n)
            ]
            if missing:
                raise ValueError(f"OAUTHBEARER needs {', '.join(missing)}")
        elif self.uses_sasl and not self.username:
            raise ValueError(f"{self.protocol} with {self.sasl_mechanism} needs username")
        elif self.uses_sasl and self.password is None and not self.password_file:
            raise ValueError(f"{self.protocol} with {self.sasl_mechanism} needs password or password_file")
        return self

    @property
    def uses_sasl(self) -> bool:
        return self.protocol.startswith("SASL_")

    @property
    def uses_tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    def resolve(self, processor: str = CLI_PROCESSOR) -> Credentials:
        """The credentials of ``processor``'s principal, secrets read from their files now."""
        if not self.uses_sasl and not self.uses_tls:
            return Credentials()
        username = password = secret = None
        if self.uses_sasl and self.sasl_mechanism != "OAUTHBEARER":
            username = (self.username or "").replace("{processor}", processor)
            if self.password is not None:
                password = self.password
            else:
                password = _read_secret(
                    (self.password_file or "").replace("{processor}", processor), "password_file"
                )
        if self.uses_sasl and self.sasl_mechanism == "OAUTHBEARER":
            secret = _read_secret(str(self.oauth_client_secret_file), "oauth_client_secret_file")
        key_password = (
            _read_secret(str(self.key_password_file), "key_password_file") if self.key_password_file else None
        )
        for name in ("ca_file", "certificate_file", "key_file"):
            path = getattr(self, name)
            if path is not None and not Path(path).is_file():
                raise UsageError(
                    f"setting RLSTREAM_KAFKA__SECURITY__{name.upper()}: no such file {path}",
                    hint="mount the file or correct the path",
                )
        return Credentials(
            protocol=self.protocol,
            mechanism=self.sasl_mechanism if self.uses_sasl else None,
            username=username,
            password=password,
            oauth_token_endpoint=self.oauth_token_endpoint,
            oauth_client_id=self.oauth_client_id,
            oauth_client_secret=secret,
            oauth_scope=self.oauth_scope,
            ca_file=self.ca_file,
            certificate_file=self.certificate_file,
            key_file=self.key_file,
            key_password=key_password,
            check_hostname=self.check_hostname,
        )


def _read_secret(path: str, setting: str) -> SecretStr:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise UsageError(
            f"setting RLSTREAM_KAFKA__SECURITY__{setting.upper()}: cannot read {path} ({exc.strerror})",
            hint="mount the secret at that path, or correct the setting",
        ) from None
    value = text.splitlines()[0].strip() if text.strip() else ""
    if not value:
        raise UsageError(f"setting RLSTREAM_KAFKA__SECURITY__{setting.upper()}: {path} is empty")
    return SecretStr(value)


@dataclass(frozen=True)
class Credentials:
    """One principal's resolved connection security; secrets stay SecretStr until a client is built."""

    protocol: Protocol = "PLAINTEXT"
    mechanism: Mechanism | None = None
    username: str | None = None
    password: SecretStr | None = field(default=None, repr=False)
    oauth_token_endpoint: str | None = None
    oauth_client_id: str | None = None
    oauth_client_secret: SecretStr | None = field(default=None, repr=False)
    oauth_scope: str | None = None
    ca_file: Path | None = None
    certificate_file: Path | None = None
    key_file: Path | None = None
    key_password: SecretStr | None = field(default=None, repr=False)
    check_hostname: bool = True

    def librdkafka(self) -> dict[str, Any]:
        """Options of a confluent-kafka client (producer, consumer or admin)."""
        if self.protocol == "PLAINTEXT":
            return {}
        out: dict[str, Any] = {"security.protocol": self.protocol.lower()}
        if self.mechanism is not None:
            out["sasl.mechanism"] = self.mechanism
        if self.mechanism == "OAUTHBEARER":
            out["sasl.oauthbearer.method"] = "oidc"
            out["sasl.oauthbearer.token.endpoint.url"] = self.oauth_token_endpoint
            out["sasl.oauthbearer.client.id"] = self.oauth_client_id
            assert self.oauth_client_secret is not None
            out["sasl.oauthbearer.client.secret"] = self.oauth_client_secret.get_secret_value()
            if self.oauth_scope:
                out["sasl.oauthbearer.scope"] = self.oauth_scope
        elif self.mechanism is not None:
            assert self.password is not None
            out["sasl.username"] = self.username
            out["sasl.password"] = self.password.get_secret_value()
        if self.protocol in ("SSL", "SASL_SSL"):
            if self.ca_file is not None:
                out["ssl.ca.location"] = str(self.ca_file)
            if self.certificate_file is not None:
                out["ssl.certificate.location"] = str(self.certificate_file)
                out["ssl.key.location"] = str(self.key_file)
            if self.key_password is not None:
                out["ssl.key.password"] = self.key_password.get_secret_value()
            out["ssl.endpoint.identification.algorithm"] = "https" if self.check_hostname else "none"
        return out

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context of an aiokafka client (Faust), or None without TLS."""
        if self.protocol not in ("SSL", "SASL_SSL"):
            return None
        context = ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)
        context.check_hostname = self.check_hostname
        if self.certificate_file is not None:
            context.load_cert_chain(
                str(self.certificate_file),
                str(self.key_file),
                password=self.key_password.get_secret_value() if self.key_password else None,
            )
        return context

    def secrets(self) -> tuple[str, ...]:
        """The secret values themselves (for checks that nothing written contains them)."""
        return tuple(
            s.get_secret_value()
            for s in (self.password, self.oauth_client_secret, self.key_password)
            if s is not None
        )


#: the credentials every client of this process is built with (set once by the composition root)
_current = Credentials()
#: a thread that hosts a processor of its own in a shared process (:func:`per_thread`) keeps its
#: principal here, apart from the process's and the other processors'
_thread = threading.local()


def use(credentials: Credentials) -> None:
    """Make ``credentials`` what every Kafka client this process builds from now on connects with (only
    this thread's clients, inside :func:`per_thread`)."""
    global _current
    if getattr(_thread, "own", False):
        _thread.credentials = credentials
    else:
        _current = credentials


def current() -> Credentials:
    if getattr(_thread, "own", False):
        return _thread.credentials  # type: ignore[no-any-return]
    return _current


@contextlib.contextmanager
def per_thread() -> Iterator[None]:
    """Inside the block, :func:`use` and :func:`current` concern this thread alone: several processors
    sharing one process each connect as their own principal (their clients are built on their thread)."""
    _thread.own, _thread.credentials = True, _current
    try:
        yield
    finally:
        _thread.own = False
        del _thread.credentials


@contextlib.contextmanager
def using(credentials: Credentials) -> Iterator[None]:
    """``credentials`` for the clients built inside the block (the local broker probing itself as its
    administrator), the process's own afterwards."""
    before = current()
    use(credentials)
    try:
        yield
    finally:
        use(before)
