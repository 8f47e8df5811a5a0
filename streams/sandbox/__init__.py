"""The sandbox: runs untrusted programs in WASM-isolated CPython (primary) or a bubblewrap jail
(fallback). The guest holds the program and a stub that answers one request at a time; the verdict,
the timings and the labels are the host's (see README.md for what is guaranteed).

The API the reward and the stream agent use::

    from streams.sandbox import Sandbox, SandboxConfig, Limits
    sb = Sandbox(SandboxConfig(cache_dir=...))
    result = sb.run_cases(code, "add", ["(1, 2)", "(3, 4)"], limits=Limits(timeout_s=5), backend="auto")
    result.cases[0].status, result.cases[0].result_repr        # "ok", "3"
    sb.run_check(code, check_src, "add", prelude=prompt)          # the check in a guest of its own
    sb.run_script(code)                                           # a whole program (the CLI's exec)
    to_event(result, sample_id=..., group_id=..., task_id=...)    # -> schemas.rollout.SandboxExecuted

``SandboxPool`` runs many jobs on worker processes with a content-hash result cache.
"""

from streams.sandbox.config import SandboxConfig
from streams.sandbox.limits import Limits
from streams.sandbox.pool import ResultCache, SandboxPool
from streams.sandbox.result import ExecutionResult, Job, to_event
from streams.sandbox.service import Sandbox, default_cache_dir

__all__ = [
    "ExecutionResult",
    "Job",
    "Limits",
    "ResultCache",
    "Sandbox",
    "SandboxConfig",
    "SandboxPool",
    "default_cache_dir",
    "to_event",
]
