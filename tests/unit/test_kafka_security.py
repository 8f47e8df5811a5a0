"""Kafka client security settings: what a user sets, what each client is built with, and that a secret
never shows in a repr, a settings dump or an error."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from infra.faust.config import broker_credentials
from infra.kafka.security import KafkaSecurity
from rlstream.settings import Settings
from schemas.errors import UsageError

SECRET = "s3cr3t-value-never-printed"


def test_plaintext_by_default_adds_nothing_to_a_client() -> None:
    creds = KafkaSecurity().resolve("sandbox")
    assert creds.librdkafka() == {} and broker_credentials(creds) is None


def test_each_processor_reads_its_own_password_file(tmp_path: Path) -> None:
    for who in ("sandbox", "reward"):
        (tmp_path / f"{who}.password").write_text(f"{SECRET}-{who}\n")
    ca = tmp_path / "ca.pem"
    ca.write_text("not parsed here")
    security = KafkaSecurity(
        protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        username="rlstream-{processor}",
        password_file=str(tmp_path / "{processor}.password"),
        ca_file=ca,
    )
    options = security.resolve("sandbox").librdkafka()
    assert options == {
        "security.protocol": "sasl_ssl",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "rlstream-sandbox",
        "sasl.password": f"{SECRET}-sandbox",
        "ssl.ca.location": str(ca),
        "ssl.endpoint.identification.algorithm": "https",
    }
    assert security.resolve("reward").librdkafka()["sasl.password"] == f"{SECRET}-reward"
    creds = security.resolve("sandbox")
    assert SECRET not in repr(creds) and SECRET not in str(security.resolve("reward"))


def test_a_password_from_the_environment_never_shows_in_the_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RLSTREAM_KAFKA__SECURITY__PROTOCOL", "SASL_PLAINTEXT")
    monkeypatch.setenv("RLSTREAM_KAFKA__SECURITY__SASL_MECHANISM", "PLAIN")
    monkeypatch.setenv("RLSTREAM_KAFKA__SECURITY__USERNAME", "alice")
    monkeypatch.setenv("RLSTREAM_KAFKA__SECURITY__PASSWORD", SECRET)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert SECRET not in repr(settings) and SECRET not in settings.model_dump_json()
    assert settings.kafka.security.resolve().librdkafka()["sasl.password"] == SECRET


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"protocol": "SASL_SSL"}, "needs username"),
        ({"protocol": "SASL_SSL", "username": "u"}, "needs password or password_file"),
        ({"protocol": "SASL_SSL", "username": "u", "password": "p", "password_file": "f"}, "not both"),
        ({"protocol": "SASL_SSL", "sasl_mechanism": "OAUTHBEARER"}, "oauth_token_endpoint"),
        ({"protocol": "SSL", "certificate_file": "c.pem"}, "go together"),
    ],
)
def test_incomplete_settings_name_what_is_missing(fields: dict[str, str], says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        KafkaSecurity.model_validate(fields)


def test_a_missing_secret_file_names_the_setting_and_the_path(tmp_path: Path) -> None:
    security = KafkaSecurity(
        protocol="SASL_SSL", username="u", password_file=str(tmp_path / "{processor}.password")
    )
    with pytest.raises(UsageError, match=r"PASSWORD_FILE: cannot read .*learner\.password"):
        security.resolve("learner")


def test_faust_gets_the_same_principal(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text(SECRET)
    creds = KafkaSecurity(
        protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-256",
        username="rlstream-faust",
        password_file=str(tmp_path / "pw"),
    ).resolve("faust")
    faust_creds = broker_credentials(creds)
    assert (faust_creds.username, faust_creds.password) == ("rlstream-faust", SECRET)
    assert faust_creds.mechanism.value == "SCRAM-SHA-256"
