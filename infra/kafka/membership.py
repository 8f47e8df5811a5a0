"""How long a consumer group member may stay out of its group after the group took its partitions away."""

from __future__ import annotations

from schemas.errors import BrokerError

#: a member whose group took its partitions away (its session timed out: a broker restart, a network
#: cut) and that has not been handed partitions again after this long ends, to be restarted with fresh
#: clients. A static member (``group.instance.id``) that lost its session can stay out of its group for
#: good: its own earlier membership fences it (FENCED_INSTANCE_ID, which the client reports as a fatal
#: error, or not at all), and no poll of the old client brings it back, while a fresh process under the
#: same instance id takes the partitions at once. A healthy rejoin after a broker restart takes seconds
#: to a few tens of seconds (the fault suite's broker restart: the first event downstream 28 s after the
#: kill, the broker answering again after 9 s).
REJOIN_LIMIT_S = 90.0


class RejoinWatch:
    """Since when a member has been out of its group, and the error that ends it once that is too long."""

    def __init__(self, who: str, group_id: str, limit_s: float = REJOIN_LIMIT_S) -> None:
        self.who, self.group_id, self.limit_s = who, group_id, limit_s
        self.since: float | None = None

    def lost(self, now: float) -> None:
        """The group took the partitions away (a session loss, not a plain rebalance's revocation)."""
        if self.since is None:
            self.since = now

    def back(self) -> None:
        """The group handed partitions again (or an assignment with none: the member is back either way)."""
        self.since = None

    def check(self, now: float) -> None:
        if self.since is not None and now - self.since >= self.limit_s:
            raise BrokerError(
                f"{self.who}: not back in group {self.group_id} {now - self.since:.0f}s after the group took"
                " its partitions away; ending, to be restarted with fresh clients"
            )
