"""The live scheduler: informers' events into a cache and a scheduling queue, and the
scheduling and binding cycles that drain the queue (ARCHITECTURE.md, part 3)."""
