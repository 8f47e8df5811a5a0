"""Access control lists on the cluster: create allow rules, and translate the broker's authorization
refusals into errors that say who was refused what."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from confluent_kafka import KafkaException
from confluent_kafka.admin._acl import AclBinding, AclOperation, AclPermissionType
from confluent_kafka.admin._resource import ResourcePatternType, ResourceType

from infra.kafka.admin import admin_client
from schemas.errors import BrokerError

_RESOURCES = {
    "topic": ResourceType.TOPIC,
    "group": ResourceType.GROUP,
    "transactional_id": ResourceType.TRANSACTIONAL_ID,
    "cluster": ResourceType.BROKER,
}
_PATTERNS = {"literal": ResourcePatternType.LITERAL, "prefixed": ResourcePatternType.PREFIXED}


class AclRule(Protocol):
    """What an allow rule names (``rlstream.access.Grant`` is one)."""

    @property
    def principal(self) -> str: ...
    @property
    def resource(self) -> str: ...
    @property
    def pattern(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def operation(self) -> str: ...


def binding(rule: AclRule) -> AclBinding:
    return AclBinding(
        _RESOURCES[rule.resource],
        "kafka-cluster" if rule.resource == "cluster" else rule.name,
        _PATTERNS[rule.pattern],
        f"User:{rule.principal}",
        "*",
        AclOperation[rule.operation],
        AclPermissionType.ALLOW,
    )


def create_acls(bootstrap: str, rules: Sequence[AclRule], timeout_s: float = 30.0) -> int:
    """Create ``rules`` (existing ones are left as they are); returns how many were asked for."""
    if not rules:
        return 0
    admin = admin_client(bootstrap, client_id="rlstream-acls")
    futures = admin.create_acls([binding(r) for r in rules], request_timeout=timeout_s)
    failed = []
    for acl, future in futures.items():
        try:
            future.result()
        except KafkaException as exc:
            failed.append(f"{acl}: {exc.args[0].str() if exc.args else exc}")
    if failed:
        raise BrokerError(
            f"{len(failed)} of {len(rules)} ACLs were not created; first: {failed[0]}",
            hint="the caller's principal must be allowed to ALTER the cluster (a super user)",
        )
    return len(rules)
