"""The off-policy learner.

* ``learner.grpo`` - the learning rule in one file (pure tensor functions, fixed metric names).
* ``schemas.advantages`` (re-exported by ``learner.grpo``) - group-relative advantages, one definition
  shared with the experience processor.
* ``learner.batch`` - ExperienceReady events to padded batches under a token budget; stale, too long
  or invalid samples are dropped and counted.
* ``learner.engine`` - DeepSpeed (ZeRO 0-2, bf16 where supported) on GPU or CPU, or a plain torch
  backend with the same interface; checkpoints and weight publication.
* ``learner.checkpoint`` / ``learner.store`` - atomic checkpoint directories, the newest complete one,
  and the URI-addressed weight store (``file://`` built in, other schemes register).
* ``learner.loop`` - the bookkeeping between the log and the engine (whole records per step, consumed
  offsets, publication every K steps), without any Kafka client.

Importing this package imports nothing heavy; DeepSpeed is imported only when an engine is built.
"""
