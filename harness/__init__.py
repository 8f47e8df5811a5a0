"""Drives whole local runs for the tests and the benches: fault injection on a supervised pipeline
(``faults``), its recovery figures (``recovery``), load runs (``load``), the episode-learning
measurement (``episode_learning``), a planned event stream for the projections (``projections``) and a
throwaway PostgreSQL cluster (``postgres``), the red-team corpus' tasks (``redteam_tasks``) and programs
run in this process as a sandbox would report them (``simulated``), the benches' trivial task
(``trivial``). It imports only the project's packages, never ``tests`` or ``bench``: both import it,
and neither imports the other."""
