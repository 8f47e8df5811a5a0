"""Event ids are UUIDv5 of the type, the cause and the attempt: ids already on the log must keep
matching what a reader derives, whatever the implementation of the hash."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.base import EVENT_ID_NAMESPACE, make_event_id


@settings(deadline=None)  # a loaded machine must not fail a hash
@given(
    ce_type=st.text(min_size=1, max_size=40),
    causation=st.lists(st.text(max_size=60), max_size=4),
    attempt=st.integers(min_value=0, max_value=10_000),
)
def test_event_id_is_the_rfc_uuid5_of_type_cause_and_attempt(
    ce_type: str, causation: list[str], attempt: int
) -> None:
    name = "|".join((ce_type, *causation, str(attempt)))
    expected = str(uuid.uuid5(EVENT_ID_NAMESPACE, name))
    assert make_event_id(ce_type, *causation, attempt=attempt) == expected


def test_a_known_id_never_changes() -> None:
    # pinned: ids written by earlier runs are on their logs
    expected = "d4eb915f-3e98-554f-9e0a-d94cc06e4345"
    assert make_event_id("rlstream.rollout.generated.v1", "s-1", "0") == expected
