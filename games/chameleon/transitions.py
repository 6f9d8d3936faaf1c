"""The Chameleon's transitions: dealing a round, clues, readiness, ballots and run-offs, the
chameleon's guess, the end of a round and of the game."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from games import deals, vote
from games.base import PUBLIC, Audience, Event, IllegalAction, Seat, rng
from games.chameleon.config import Card, ChameleonConfig, Mode, Outcome, Phase, Role, TieRule, deck_of, round_deal
from games.chameleon.state import ChameleonState, RoundRecord, ballot_json, ballot_kind, winners_of
from games.text import key as text_key
from games.text import reveals_secret
from games.vote import Ballot


def _points(outcome: Outcome, chameleon: Seat, seats: int) -> tuple[int, ...]:
    if outcome is Outcome.ESCAPED:
        return tuple(2 if s == chameleon else 0 for s in range(seats))
    if outcome is Outcome.GUESSED:
        return tuple(1 if s == chameleon else 0 for s in range(seats))
    return tuple(0 if s == chameleon else 2 for s in range(seats))


def _deck_index(deck: Sequence[Card], category: str) -> int:
    """Where a card is in the deck, or -1 for a dealt card the deck does not hold."""
    return next((i for i, c in enumerate(deck) if deals.same(c[0], category)), -1)


def _card_for(cfg: ChameleonConfig, seed: int, round_no: int, cards_used: tuple[int, ...]) -> tuple[int, Card]:
    """The round's card, as dealt or drawn among the deck's unused cards, with its deck index.

    Cards a deal fixes for any round are never drawn: the match would meet them twice."""
    deck = deck_of(cfg)
    dealt = round_deal(cfg, round_no)
    if dealt.card is not None:
        return _deck_index(deck, dealt.card[0]), dealt.card
    reserved = {_deck_index(deck, d.card[0]) for d in cfg.deal or () if d.card is not None}
    unused = [i for i in range(len(deck)) if i not in cards_used and i not in reserved]
    index = rng(seed, "card", round_no).choice(unused)
    category, words = deck[index]
    return index, (category, words[: cfg.card_size])


def check_deal(cfg: ChameleonConfig, seats: int, seed: int) -> None:
    """What a deal can only be checked against once the seats and the drawn cards are known."""
    used: tuple[int, ...] = ()
    for round_no, d in enumerate(cfg.deal or (), start=1):
        for name, value in (("chameleon", d.chameleon), ("first", d.first)):
            if value is not None:
                deals.in_range(f"round {round_no}: {name}", (value,), seats)
        index, (category, card) = _card_for(cfg, seed, round_no, used)
        used = (*used, index)
        if d.secret is not None and not any(deals.same(w, d.secret) for w in card):
            raise deals.error(f"round {round_no}: the secret {d.secret!r} is not a word of the {category} card")


def deal_round(
    cfg: ChameleonConfig,
    seats: int,
    seed: int,
    round_no: int,
    cards_used: tuple[int, ...],
    scores: tuple[int, ...],
    history: tuple[RoundRecord, ...],
    log: tuple[Event, ...],
) -> tuple[ChameleonState, tuple[Event, ...]]:
    """Start a round: the card, the secret, the chameleon and the first speaker, as dealt or drawn."""
    dealt = round_deal(cfg, round_no)
    index, (category, card) = _card_for(cfg, seed, round_no, cards_used)
    if dealt.secret is not None:  # in the card's own spelling (checked at the deal)
        secret = next(w for w in card if deals.same(w, dealt.secret))
    else:
        secret = rng(seed, "secret", round_no).choice(card)
    chameleon = dealt.chameleon if dealt.chameleon is not None else rng(seed, "chameleon", round_no).randrange(seats)
    first = dealt.first if dealt.first is not None else rng(seed, "first", round_no).randrange(seats)
    order = tuple((first + i) % seats for i in range(seats))
    events: list[Event] = [
        Event(
            "round_start",
            {
                "round": round_no,
                "category": category,
                "card": list(card),
                "speaking_order": list(order),
                "first": first,
            },
            PUBLIC,
        )
    ]
    # One private event per seat, each to that seat alone: an event addressed to
    # "everyone but the chameleon" would show its audience, and so the chameleon.
    for s in range(seats):
        if s == chameleon:
            events.append(Event("role", {"round": round_no, "role": Role.CHAMELEON.value, "secret": None}, Audience.of(s)))
        else:
            events.append(Event("role", {"round": round_no, "role": Role.PLAYER.value, "secret": secret}, Audience.of(s)))
    state = ChameleonState(
        config=cfg,
        seats=seats,
        seed=seed,
        phase=Phase.CLUES,
        round=round_no,
        cards_used=(*cards_used, index),
        category=category,
        card=card,
        secret=secret,
        chameleon=chameleon,
        order=order,
        clues=(),
        ready=frozenset(),
        ballots=(),
        accused=None,
        scores=scores,
        history=history,
        log=(*log, *events),
    )
    return state, tuple(events)


def give_clue(s: ChameleonState, seat: Seat, clue: str) -> tuple[ChameleonState, tuple[Event, ...]]:
    # Only a seat that knows the secret is held to it: refusing the chameleon's
    # word would tell the chameleon which word is the secret.
    if seat != s.chameleon and reveals_secret(clue, s.secret):
        raise IllegalAction("Your clue cannot be the secret word or contain it.")
    if any(text_key(clue) == text_key(earlier) for _, earlier in s.clues):
        raise IllegalAction(f"{clue!r} was already given as a clue this round; choose another word.")
    clues = (*s.clues, (seat, clue))
    events: list[Event] = [Event("clue", {"round": s.round, "seat": seat, "clue": clue}, PUBLIC)]
    if len(clues) < s.seats:
        return step(s, events, clues=clues)
    if s.config.discussion:
        events.append(Event("discussion_start", {"round": s.round}, PUBLIC))
        return step(s, events, clues=clues, phase=Phase.DISCUSSION)
    return open_ballot(dataclasses.replace(s, clues=clues), events, vote.first(range(s.seats), range(s.seats)))


def mark_ready(s: ChameleonState, seat: Seat) -> tuple[ChameleonState, tuple[Event, ...]]:
    ready = s.ready | {seat}
    events: list[Event] = [Event("ready", {"round": s.round, "seat": seat}, PUBLIC)]
    if len(ready) < s.seats:
        return step(s, events, ready=ready)
    return open_ballot(dataclasses.replace(s, ready=ready), events, vote.first(range(s.seats), range(s.seats)))


def open_ballot(s: ChameleonState, events: list[Event], ballot: Ballot) -> tuple[ChameleonState, tuple[Event, ...]]:
    kind = ballot_kind(ballot)
    events.append(Event("vote_start", {"round": s.round, "ballot": kind.value, "candidates": list(ballot.candidates)}, PUBLIC))
    phase = Phase.RUNOFF if ballot.runoff else Phase.VOTE
    return step(s, events, phase=phase, ballots=(*s.ballots, ballot))


def cast_vote(s: ChameleonState, seat: Seat, target: Seat | None) -> tuple[ChameleonState, tuple[Event, ...]]:
    ballot = s.ballots[-1].cast(seat, target)
    ballots = (*s.ballots[:-1], ballot)
    kind = ballot_kind(ballot).value
    events: list[Event] = [
        Event("vote_cast", {"round": s.round, "ballot": kind, "seat": seat, "target": target}, Audience.of(seat)),
        Event("voted", {"round": s.round, "ballot": kind, "seat": seat}, PUBLIC),
    ]
    if not ballot.complete:
        return step(s, events, ballots=ballots)
    s = dataclasses.replace(s, ballots=ballots)
    verdict = ballot.verdict()
    runoff = ballot.needs_runoff(verdict, s.config.tie_rule is TieRule.RUNOFF)
    accused = verdict.chosen
    events.append(
        Event(
            "vote_result",
            {"round": s.round, **ballot_json(ballot), "tied": list(verdict.tied), "accused": accused, "runoff": runoff},
            PUBLIC,
        )
    )
    if runoff:
        return open_ballot(s, events, vote.runoff(verdict.tied, range(s.seats)))
    caught = accused is not None and accused == s.chameleon
    events.append(
        Event("reveal", {"round": s.round, "chameleon": s.chameleon, "accused": accused, "caught": caught}, PUBLIC)
    )
    if caught:
        return step(s, events, phase=Phase.GUESS, accused=accused)
    return end_round(dataclasses.replace(s, accused=accused), events, Outcome.ESCAPED, None)


def name_secret(s: ChameleonState, guess: str) -> tuple[ChameleonState, tuple[Event, ...]]:
    right = guess == s.secret
    events: list[Event] = [
        Event(
            "guess",
            {"round": s.round, "seat": s.chameleon, "guess": guess, "secret": s.secret, "correct": right},
            PUBLIC,
        )
    ]
    return end_round(s, events, Outcome.GUESSED if right else Outcome.CAUGHT, guess)


def end_round(s: ChameleonState, events: list[Event], outcome: Outcome, guess: str | None
) -> tuple[ChameleonState, tuple[Event, ...]]:
    points = _points(outcome, s.chameleon, s.seats)
    scores = tuple(a + b for a, b in zip(s.scores, points, strict=False))
    record = RoundRecord(
        round=s.round,
        category=s.category,
        card=s.card,
        secret=s.secret,
        chameleon=s.chameleon,
        order=s.order,
        clues=s.clues,
        ballots=s.ballots,
        accused=s.accused,
        guess=guess,
        outcome=outcome,
        points=points,
    )
    history = (*s.history, record)
    events.append(
        Event(
            "round_end",
            {
                "round": s.round,
                "outcome": outcome.value,
                "chameleon": s.chameleon,
                "secret": s.secret,
                "points": list(points),
                "scores": list(scores),
            },
            PUBLIC,
        )
    )
    cfg = s.config
    top = max(scores)
    leaders = [i for i, v in enumerate(scores) if v == top]
    over = (
        cfg.mode is Mode.SINGLE
        # A tie at the top plays on, so the match ends with one leader when it can.
        or (top >= cfg.target_points and len(leaders) == 1)
        or s.round >= cfg.max_rounds
    )
    if not over:
        log = (*s.log, *events)
        nxt, deal = deal_round(cfg, s.seats, s.seed, s.round + 1, s.cards_used, scores, history, log)
        return nxt, (*events, *deal)
    winners = sorted(winners_of(cfg, record, scores))
    events.append(Event("game_over", {"winners": winners, "scores": list(scores), "rounds": s.round}, PUBLIC))
    return step(s, events, phase=Phase.OVER, scores=scores, history=history)


def step(s: ChameleonState, events: list[Event], **changes: Any) -> tuple[ChameleonState, tuple[Event, ...]]:
    return dataclasses.replace(s, log=(*s.log, *events), **changes), tuple(events)
