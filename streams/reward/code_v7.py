"""Reward ``code-v7``: ``code-v5`` with its efficiency read on the guest's own time, not the wall clock.

The efficiency component compares the program's run with its task's reference run. Through code-v6 both
were read on the host's clock from the guest's start to its last result (``active_s``), which the
machine's load stretches: a run that waits for a core reads as slow, and one program's efficiency moved
0.52..1.0 across runs minutes apart on the same machine. A reward that moves with load is noise the
policy trains on. From code-v7 both runs are read on ``active_cpu_s`` where both carry it: the same span
(module load, every case, whatever ran between them) as the CPU the guest's thread spent, read by the host
at the WASM door on that thread, plus the sleeps the guest asked for, counted as asked (a wait it chose
costs its caller as surely as work, and uses no CPU). The program cannot reach either reading. Where
either run lacks it (the container jail runs the guest as another process; runs written before it) both
are read on wall time as in code-v5. ``details["runtime_clock"]`` says which.

Everything else is code-v5's; ``code-v5`` stays registered and scores exactly as before.
"""

from __future__ import annotations

from typing import ClassVar

from streams.reward.code_v5 import CodeRewardV5
from streams.reward.function import register


@register("code-v7")
class CodeRewardV7(CodeRewardV5):
    version = "v7"
    own_time_efficiency: ClassVar[bool] = True
