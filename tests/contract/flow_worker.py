"""The stream processors on the transactional runtime in one process (a thread each), until SIGTERM: the
contract flow's counterpart of ``faust -A rlstream.faust_app worker`` (the same ones:
``RLSTREAM_FAUST__PROCESSORS``)."""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType

from rlstream.settings import get_settings
from rlstream.workers import build


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(threadName)s %(levelname)s %(message)s")
    settings = get_settings()
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    workers = [build(name, settings, runtime="transactional") for name in settings.faust.processors]
    threads = [threading.Thread(target=w.run, args=(stop,), name=w.name) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
