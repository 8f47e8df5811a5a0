"""How ``rlstream run`` places its workers in processes (``RLSTREAM_RUN__LAYOUT``).

``split``: every worker a process of its own (``rlstream worker NAME``). ``shared``: the light stream
processors share one process (``rlstream worker sandbox,reward,filter,...``), each on its own thread with
its own clients, consumer group, transactional id, principal, state and metrics. ``auto`` (the default):
shared where the cores are few (at most ``shared_up_to_cores``), where eleven Python interpreters and the
broker would otherwise take turns on the same cores, split elsewhere.

Whatever the layout, these keep a process of their own: the torch workers (generation and training hold
the GIL for most of their work and size their thread pools to the cores), and the scheduler, which the
run stops on its own when the learner reaches its last step while the others finish the groups in
flight. On the Faust runtime every layout is split: a process runs one Faust app.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from schemas.errors import UsageError

Layout = Literal["auto", "split", "shared"]

#: the workers that run torch (generation and training): they share the machine's cores
TORCH_WORKERS = frozenset({"generator", "evaluator", "learner"})
#: workers never placed in a shared process (see the module's docstring)
OWN_PROCESS = TORCH_WORKERS | {"scheduler"}


class RunConfig(BaseModel):
    """``RLSTREAM_RUN__*``: how ``rlstream run`` lays its workers out."""

    model_config = {"frozen": True}

    #: auto, split or shared (``RLSTREAM_RUN__LAYOUT``)
    layout: Layout = "auto"
    #: ``auto`` shares processes on machines with at most this many cores
    shared_up_to_cores: int = Field(default=4, ge=0)


def resolve(config: RunConfig, cpus: int | None, runtime: str) -> Literal["split", "shared"]:
    """The layout ``config`` asks for on a machine of ``cpus`` cores under ``runtime``."""
    if config.layout == "shared" and runtime == "faust":
        raise UsageError(
            "RLSTREAM_RUN__LAYOUT=shared: processors share a process on the transactional runtime only",
            hint="use RLSTREAM_RUN__LAYOUT=split (or auto) with the Faust runtime",
        )
    if config.layout != "auto":
        return config.layout
    return "shared" if runtime != "faust" and (cpus or 1) <= config.shared_up_to_cores else "split"


def processes(workers: tuple[str, ...], layout: Literal["split", "shared"]) -> list[str]:
    """The worker processes to start, each as its ``rlstream worker`` argument (``reward`` or
    ``sandbox,reward,filter``), in the order of ``workers``."""
    if layout == "split":
        return list(workers)
    shared = [w for w in workers if w not in OWN_PROCESS]
    out: list[str] = []
    for w in workers:
        if w in OWN_PROCESS or len(shared) < 2:
            out.append(w)
        elif w == shared[0]:
            out.append(",".join(shared))
    return out
