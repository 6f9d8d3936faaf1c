"""The one error of the tournament rooms: a request that changes nothing."""

from __future__ import annotations


class TournamentError(ValueError):
    """A request that changes nothing; the message is one sentence for the person who asked."""
