"""The contract processor as a worker process of its own (so that a test can kill it with SIGKILL):

    python -m tests.contract.worker transactional|faust BOOTSTRAP TOPIC_IN TOPIC_OUT NAME DELAY_S IDLE_S

It runs until its input has been idle for IDLE_S seconds, then prints ``STATE <json>``: the task ids
its restored-and-updated state says it handled.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time

from infra.kafka.transactional import TransactionalProcessor
from rlstream.settings import Settings
from rlstream.workers import Built, faust_runner
from tests.contract.relay import handled, relay


def main(
    runtime: str, bootstrap: str, topic_in: str, topic_out: str, name: str, delay_s: float, idle_s: float
) -> None:
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s {runtime} %(levelname)s %(message)s")
    processor, _ = relay(name, topic_in, topic_out, delay_s=delay_s, defers=0)
    if runtime == "faust":
        runner = faust_runner(Settings(kafka={"bootstrap_servers": bootstrap}), bootstrap, [Built(processor)])
        runner.run(threading.Event(), idle_exit_s=idle_s)
        print("STATE " + json.dumps(handled(runner.hosted[0].state)), flush=True)
        return
    proc = TransactionalProcessor(processor, bootstrap=bootstrap)
    proc.start()
    idle_since = time.monotonic()
    try:
        while time.monotonic() - idle_since < idle_s:
            if proc.step() or not proc.assigned:
                idle_since = time.monotonic()
        # before closing: a closed consumer has given its partitions, and their state, away
        print("STATE " + json.dumps(handled(proc.state)), flush=True)
    finally:
        proc.close()


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], a[2], a[3], a[4], float(a[5]), float(a[6]))
