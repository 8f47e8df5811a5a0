"""The review core: queue selection, the review in force, retries, outcomes, agreement."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from consumers.review import (
    AlreadyRecorded,
    Recorded,
    Trained,
    agreement,
    is_flagged,
    new_review,
    review_outcome,
    reviews_in_force,
    select_queue,
)
from schemas.rollout import NoiseVerdict, Reason, ReviewRecorded

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def verdict(sid: str, v: str = "accept", *codes: str) -> NoiseVerdict:
    group = sid.rpartition("/")[0]
    return NoiseVerdict.model_validate(
        {
            "sample_id": sid,
            "group_id": group,
            "task_id": "t",
            "reward_event_id": f"r-{sid}",
            "verdict": v,
            "reasons": [Reason(code=c) for c in codes],
            "reward": 1.0,
            "failure_reward": 0.0,
        }
    )


def recorded(event: ReviewRecorded | NoiseVerdict, minutes: int = 0) -> Recorded:
    return Recorded(event.event_id(), T0 + timedelta(minutes=minutes), event)


def review(
    sid: str, v: str, *, supersedes: Recorded | None = None, note: str = "n", who: str = "al"
) -> Recorded:
    event = new_review(
        sample_id=sid,
        group_id=sid.rpartition("/")[0],
        task_id="t",
        verdict=v,  # type: ignore[arg-type]
        note=note,
        reviewer=who,
        automated=None,
        in_force=supersedes,
        now=T0,
    )
    return recorded(event)


def test_flagged_means_not_accepted_or_accepted_with_a_reason_the_task_does_not_allow():
    assert is_flagged(verdict("r/g/0", "mask", "degenerate.syntax"))
    assert is_flagged(verdict("r/g/0", "reject", "hack.forced_exit"))
    assert is_flagged(verdict("r/g/0", "accept", "runtime.violation"))
    assert not is_flagged(verdict("r/g/0", "accept"))
    assert not is_flagged(verdict("r/g/0", "accept", "allowed.hack.dynamic_code"))


def test_queue_has_every_flagged_unreviewed_sample_and_a_reproducible_draw_of_accepted_ones():
    verdicts = [verdict(f"r/g/{i}") for i in range(20)]
    verdicts += [verdict("r/h/0", "mask", "infra.sandbox"), verdict("r/h/1", "reject", "hack.x")]
    verdicts += [verdict("r/h/2", "mask"), verdict("other/g/0", "reject")]
    queue = select_queue(verdicts, ["r/h/2", "r/g/3"], accepted_sample=4, seed=7, run_id="r")
    assert [(q.sample_id, q.why) for q in queue[:2]] == [("r/h/0", "flagged"), ("r/h/1", "flagged")]
    drawn = [q.sample_id for q in queue[2:]]
    assert len(drawn) == 4 and "r/g/3" not in drawn and all(q.why == "accepted sample" for q in queue[2:])
    again = select_queue(verdicts, ["r/h/2", "r/g/3"], accepted_sample=4, seed=7, run_id="r")
    assert again == queue
    assert [q.sample_id for q in select_queue(verdicts, [], accepted_sample=0, seed=1)] == [
        "other/g/0",
        "r/h/0",
        "r/h/1",
        "r/h/2",
    ]
    assert len(select_queue(verdicts, [], accepted_sample=100, seed=1, run_id="r")) == 23


def test_the_newest_review_in_log_order_is_in_force_and_duplicates_count_once():
    first = review("r/g/0", "reject")
    second = review("r/g/0", "accept", supersedes=first)
    other = review("r/g/1", "mask")
    latest = reviews_in_force([first, other, second, first])
    assert latest["r/g/0"] is second and latest["r/g/1"] is other


def test_a_retried_command_publishes_nothing_new_but_the_same_words_later_are_a_new_review():
    first = review("r/g/0", "reject")
    with pytest.raises(AlreadyRecorded) as exc:
        review("r/g/0", "reject", supersedes=first)
    assert exc.value.existing is first
    flipped = review("r/g/0", "accept", supersedes=first)
    back = review("r/g/0", "reject", supersedes=flipped)
    assert len({first.event_id, flipped.event_id, back.event_id}) == 3
    assert back.event.supersedes == flipped.event_id


def test_a_review_records_the_automated_verdict_it_overrides():
    auto = recorded(verdict("r/g/0", "accept", "runtime.violation"))
    event = new_review(
        sample_id="r/g/0",
        group_id="r/g",
        task_id="t",
        verdict="reject",
        note="reads the expected value",
        reviewer="bo",
        automated=auto,
        in_force=None,
        now=T0,
    )
    assert (event.automated_verdict, event.automated_reasons) == ("accept", ("runtime.violation",))
    assert event.verdict_event_id == auto.event_id and event.supersedes is None


def test_outcomes_say_whether_a_review_came_in_time():
    rej = review("r/g/0", "reject")
    trained_before = [Trained(3, T0 - timedelta(seconds=1))]
    trained_after = [Trained(4, T0 + timedelta(seconds=1))]
    assert review_outcome(rej, in_force=True, trained=trained_before) == (
        "too late: trained into v3 before review"
    )
    assert review_outcome(rej, in_force=True, trained=[]) == "in force: not trained on"
    assert review_outcome(rej, in_force=True, trained=trained_after).startswith("too late: trained into v4")
    assert review_outcome(rej, in_force=False, trained=[]) == "superseded by a later review"
    acc = review("r/g/0", "accept")
    assert review_outcome(acc, in_force=True, trained=[], assembled_at=T0, in_gradient=False) == (
        "too late: the group was assembled without it before review"
    )
    later = T0 + timedelta(seconds=5)
    assert review_outcome(acc, in_force=True, trained=[], assembled_at=later, in_gradient=True) == (
        "in force: may be trained on"
    )
    assert review_outcome(acc, in_force=True, trained=trained_after) == "in force: trained into v4"


def test_agreement_counts_a_confusion_matrix_and_kappa():
    auto = {"a": "accept", "b": "accept", "c": "mask", "d": "reject", "e": "accept"}
    human = {"a": "accept", "b": "reject", "c": "mask", "d": "reject", "z": "accept"}
    result = agreement(auto, human)
    assert (result.reviewed, result.agreed, result.without_verdict) == (4, 3, 1)
    assert result.rate == 0.75
    assert result.confusion["accept"] == {"accept": 1, "mask": 0, "reject": 1}
    assert result.confusion["mask"]["mask"] == 1 and result.confusion["reject"]["reject"] == 1
    # p_o = .75; p_e = (2*1 + 1*1 + 1*2) / 16 = 5/16
    assert result.kappa == pytest.approx((0.75 - 5 / 16) / (1 - 5 / 16))
    assert agreement(auto, {}).rate is None and agreement(auto, {}).kappa is None
    assert agreement({"a": "accept"}, {"a": "accept"}).kappa is None
    assert agreement(auto, human).as_dict()["confusion"]["accept"]["reject"] == 1


def test_lineage_shows_who_changed_what_when_and_that_a_review_after_training_came_too_late():
    from consumers.lineage import Lineage
    from schemas.envelope import Envelope
    from tests.unit.test_lineage import golden

    lineage = Lineage("local/demo/add/0/1")
    for ce_type in (
        "rlstream.policy.published.v1",
        "rlstream.rollout.generated.v1",
        "rlstream.rollout.assembled.v1",
        "rlstream.review.recorded.v1",
    ):
        d = golden(ce_type)
        lineage.fold(d.envelope, d.event)
    first = golden("rlstream.review.recorded.v1")
    again = first.event.model_copy(
        update={"verdict": "reject", "reviewer": "bob", "note": "n", "supersedes": first.envelope.id}
    )
    later = Envelope.for_event(again, source="test", time=first.envelope.time + timedelta(hours=1))
    lineage.fold(later, again)
    lineage.fold(later, again)  # a duplicate record of the same event
    rows = lineage.result()["reviews"]
    assert [(r["reviewer"], r["verdict"], r["automated_verdict"]) for r in rows] == [
        ("alice", "mask", "accept"),
        ("bob", "reject", "accept"),
    ]
    assert rows[0]["outcome"] == "superseded by a later review"
    assert rows[1]["outcome"] == "too late: trained into v3 before review"
    assert rows[1]["supersedes"] == rows[0]["event_id"]
