"""``rlstream report``: a run's HTML page with PNG charts (reward, pass@k, verdicts, staleness, sandbox,
human-review agreement), from pure data (:mod:`.data`) that loaders fill from the projections or the log."""
