"""SQL projections of the event log: one table per fact (tasks, groups, samples, executions, rewards,
verdicts, experiences, policy versions, reviews) plus derived pass@k, each row keyed by the id of the
event it comes from and stamped with the run id of its envelope.

``models`` are the tables, ``fold`` the pure event -> rows core, ``store`` the database side
(migrations, one transaction per batch with the offsets), ``projector`` the Kafka shell, ``queries``
the read API and ``diff`` a row-for-row comparison of two databases.
"""
