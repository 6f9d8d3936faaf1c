"""Who-is-Spy's transitions: rounds, votes and their verdicts, eliminations, the end of the game."""

from __future__ import annotations

import dataclasses

from games import vote
from games.base import Event, Seat, rng
from games.spy.config import Phase, Role, Team, TieRule, Variant
from games.spy.state import SpyState, VoteRecord
from games.text import same_words
from games.vote import Ballot

# --------------------------------------------------------------------------- helpers


def guess_right(guess: str, word: str) -> bool:
    """Mr. White's guess names the villagers' word: the same words, a plural or other form allowed."""
    return same_words(guess, word)


def emit(s: SpyState, events: list[Event]) -> SpyState:
    return dataclasses.replace(s, log=s.log + tuple(events))


def start_round(s: SpyState, rnd: int, events: list[Event]) -> SpyState:
    deal = s.config.deal
    if deal is not None and rnd <= len(deal.order):
        living = set(s.living)
        order = [x for x in deal.order[rnd - 1] if x in living]
    else:
        order = list(s.living)
        rng(s.seed, "order", rnd).shuffle(order)
    events.append(Event("round_started", {"round": rnd, "order": order}))
    return dataclasses.replace(
        s, phase=Phase.DESCRIBE, round=rnd, order=tuple(order), turn=0, ready=frozenset(), ballot=None
    )


def start_vote(s: SpyState, ballot: Ballot, events: list[Event]) -> SpyState:
    stage = Phase.RUNOFF if ballot.runoff else Phase.VOTE
    events.append(Event("vote_started", {"round": s.round, "stage": stage.value, "candidates": list(ballot.candidates) if ballot.runoff else []}))
    return dataclasses.replace(s, phase=stage, ballot=ballot, ready=frozenset())


def _outcome(s: SpyState) -> tuple[Team, frozenset[Seat], str] | None:
    """The end of the game if the position decides it (rules 2-4 of the module docstring)."""
    living = set(s.living)
    spies = [x for x in s.seats_with(Role.SPY) if x in living]
    whites = [x for x in s.seats_with(Role.MR_WHITE) if x in living]
    villagers = [x for x in s.seats_with(Role.VILLAGER) if x in living]
    all_spies = s.seats_with(Role.SPY)
    if not spies and not whites:
        who = "the spy was" if len(all_spies) == 1 else "every spy was"
        if s.seats_with(Role.MR_WHITE):
            who = "the spy and Mr. White were" if len(all_spies) == 1 else "every spy and Mr. White were"
        return Team.VILLAGERS, frozenset(s.seats_with(Role.VILLAGER)), f"{who} voted out"
    if spies and s.config.variant is Variant.SPYGAME and len(living) <= 2:
        return (*_infiltrators(s), "the spy was not voted out before only two players remained")
    if spies and len(spies) >= len(villagers):
        who = "the spy is" if len(all_spies) == 1 else "the spies are"
        return (*_infiltrators(s), f"{who} no longer outnumbered by villagers")
    if len(living) <= 2:
        return (*_infiltrators(s), "only two players are left")
    return None


def _infiltrators(s: SpyState) -> tuple[Team, frozenset[Seat]]:
    living = set(s.living)
    spies = s.seats_with(Role.SPY)
    winners = set(spies) if any(x in living for x in spies) else set()
    winners.update(x for x in s.seats_with(Role.MR_WHITE) if x in living)
    return Team.INFILTRATORS, frozenset(winners)


def finish(s: SpyState, team: Team, winners: frozenset[Seat], reason: str, events: list[Event]) -> SpyState:
    events.append(
        Event(
            "game_over",
            {
                "team": team.value,
                "winners": sorted(winners),
                "reason": reason,
                "villager_word": s.villager_word,
                "spy_word": s.spy_word,
                "roles": [r.value for r in s.roles],
            },
        )
    )
    return dataclasses.replace(s, phase=Phase.OVER, winners=winners, team=team, end_reason=reason)


def after_elimination(s: SpyState, events: list[Event]) -> SpyState:
    """End the game if it is decided, else go on to the next round (or end at the round limit)."""
    decided = _outcome(s)
    if decided is not None:
        return finish(s, *decided, events)
    if s.round >= s.max_rounds:
        team, winners = _infiltrators(s)
        return finish(s, team, winners, f"the infiltrators survived {s.max_rounds} rounds", events)
    return start_round(s, s.round + 1, events)


def resolve_vote(s: SpyState, events: list[Event]) -> SpyState:
    stage = s.phase
    assert s.ballot is not None
    ballot = s.ballot
    ordered = tuple(sorted(ballot.votes))
    counts = {k: n for k, n in sorted(ballot.tally().items()) if n}
    events.append(
        Event(
            "votes_revealed",
            {
                "round": s.round,
                "stage": stage.value,
                "ballots": {str(v): t for v, t in ordered},
                "counts": {str(k): n for k, n in counts.items()},
            },
        )
    )
    verdict = ballot.verdict()
    out = verdict.chosen
    s = dataclasses.replace(s, votes=(*s.votes, VoteRecord(s.round, stage.value, ordered, out)), ballot=None)
    if out is None:
        if verdict.no_votes:
            events.append(Event("no_elimination", {"round": s.round, "reason": "no votes"}))
            return after_elimination(s, events)
        runoff = ballot.needs_runoff(verdict, s.config.tie_rule is TieRule.RUNOFF)
        events.append(Event("tie", {"round": s.round, "stage": stage.value, "tied": list(verdict.tied), "runoff": runoff}))
        if runoff:
            return start_vote(s, vote.runoff(verdict.tied, s.living), events)
        events.append(Event("no_elimination", {"round": s.round, "reason": "tie"}))
        return after_elimination(s, events)
    role = s.roles[out]
    events.append(Event("eliminated", {"round": s.round, "seat": out, "role": role.value}))
    s = dataclasses.replace(s, eliminated=(*s.eliminated, (s.round, out)))
    if role is Role.MR_WHITE:
        events.append(Event("white_guess_started", {"round": s.round, "seat": out}))
        return dataclasses.replace(s, phase=Phase.WHITE_GUESS)
    return after_elimination(s, events)
