"""The scheduler's state between cycles: the scheduling queue and the cache
(upstream ``pkg/scheduler/backend``). Pure logic, no I/O."""
