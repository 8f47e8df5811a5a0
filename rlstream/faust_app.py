"""The stream processors as one Faust app, for teams that run Faust: ``faust -A rlstream.faust_app worker``.

Importing this module builds ``app`` from the settings (``RLSTREAM_*``, as every rlstream command): the
processors named by ``RLSTREAM_FAUST__PROCESSORS`` (default: every stream processor) become agents of
one app, ``<RLSTREAM_FAUST__APP_PREFIX>`` (one consumer group), each with its state table and tick
timer. Faust's own worker command then runs it (``-l info``, ``--web-port``, ... as usual), and stops it
on SIGTERM. The learner and the projector are not Faust agents: run them with ``rlstream worker``.

One processor per process instead (what ``rlstream run --runtime faust`` does, so that each restarts and
scales on its own): ``rlstream worker NAME --runtime faust``.
"""

from __future__ import annotations

import logging
from typing import Any

from infra.kafka.sides import KafkaSideInputs
from rlstream.commands.broker import bootstrap_servers
from rlstream.settings import get_settings
from rlstream.workers import LEARNER_GROUP, faust_app, stream_processor

log = logging.getLogger(__name__)

settings = get_settings()
_bootstrap = bootstrap_servers("faust")  # one principal for the processors this app hosts
_built = [
    stream_processor(name, settings, KafkaSideInputs(_bootstrap, learner_group=LEARNER_GROUP))
    for name in settings.faust.processors
]
app, hosted = faust_app(settings, _bootstrap, _built, app_id=settings.faust.app_prefix)


async def _close(sender: Any, **kwargs: Any) -> None:
    for h in hosted:
        h.close()
    for b in _built:
        for close in b.closers:
            try:
                close()
            except Exception:  # a failing close must not hide the others
                log.exception("closing failed")


app.on_before_shutdown.connect(_close)  # type: ignore[arg-type]
