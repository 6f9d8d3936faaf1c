"""The skeleton every backend's batch call shares: one result slot per request, failures kept apart.

A batch holds requests from many games. A bad request (an unscorable label set, a
prompt over the context) must fail alone, and a failure of a step that served a
group of requests (one padded forward) fails exactly that group. ``Slots`` is that
bookkeeping, written once for the transformers and fake backends:

    slots = Slots(len(reqs))
    ok = slots.each(range(len(reqs)), lambda i: check(reqs[i]))   # per request
    with slots.together(group):                                   # one step for a group
        ...; slots[i] = result
    return slots.results(latency_s=dt, missing="not scored")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

# Results are dataclasses: `results` stamps the batch latency on each with dataclasses.replace.
T = TypeVar("T", bound="DataclassInstance")


class Slots(Generic[T]):
    """One slot per request of a batch: a result, the exception for that request alone, or empty."""

    def __init__(self, n: int) -> None:
        self._slots: list[T | Exception | None] = [None] * n

    def __setitem__(self, i: int, value: T | Exception) -> None:
        self._slots[i] = value

    def __getitem__(self, i: int) -> T | Exception | None:
        return self._slots[i]

    def empty(self, i: int) -> bool:
        return self._slots[i] is None

    def each(self, indices: Iterable[int], step: Callable[[int], Any]) -> list[int]:
        """Run ``step(i)`` for each index; an exception becomes that request's result. Returns the ones that passed."""
        passed: list[int] = []
        for i in indices:
            try:
                out = step(i)
            except Exception as exc:  # a bad request fails alone
                self._slots[i] = exc
                continue
            if out is not None:
                self._slots[i] = out
            passed.append(i)
        return passed

    @contextmanager
    def together(self, indices: Sequence[int]) -> Iterator[None]:
        """A step that serves these requests at once: if it raises, each of them gets the exception."""
        try:
            yield
        except Exception as exc:
            for i in indices:
                self._slots[i] = exc

    def results(self, *, latency_s: float | None = None, missing: str = "no result") -> list[T | Exception]:
        """The batch's answer: results (with the batch latency, if given), exceptions, and an error for any gap."""
        out: list[T | Exception] = []
        for r in self._slots:
            if r is None:
                out.append(RuntimeError(missing))
            elif isinstance(r, Exception) or latency_s is None:
                out.append(r)
            else:
                out.append(replace(r, latency_s=latency_s))
        return out


__all__ = ["Slots"]
