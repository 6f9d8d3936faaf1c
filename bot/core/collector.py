"""The cyclic garbage collector's thresholds while a process serves many tables."""

from __future__ import annotations

import gc

GC_THRESHOLDS = (2_000, 200, 20)


def quiet_collector() -> None:
    """Raise the cyclic garbage collector's thresholds to ``GC_THRESHOLDS`` (never lower them).

    Every collection stops the event loop, and what it scans grows with the live tables (their
    states, events, seats, locks, tasks). A full collection scans everything: with 1,000 tables
    about 0.2 s of CPU, and under CPython's defaults (700, 10, 10) the objects of turns in flight,
    promoted before they die, set one off about every 45 s. A young collection scans what was
    allocated since the last one and still lives, which at 1,000 busy tables is mostly the new
    states of the tables that moved meanwhile; as a turn's objects replace the ones they succeed,
    the count that triggers one rises slowly, so a large young threshold (20,000) let a young
    generation gather many tables' states and each young collection take 6-35 ms. A young
    threshold of 2,000 keeps each young collection to about a millisecond. What outlives one (a
    table's state lives until its next move) moves to the middle generation, scanned once per 200
    young collections (about 0.15 s with 1,000 tables), so few objects reach the old generation
    and full collections stay rare (CPython also waits for new old objects a quarter of the old
    generation's size before one)."""
    current = gc.get_threshold()
    gc.set_threshold(*(max(a, b) for a, b in zip(current, GC_THRESHOLDS, strict=True)))
