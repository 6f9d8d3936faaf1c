"""The Chameleon in words: each event as a sentence (seats as ``seat_ref`` tokens) and the rules of a config."""

from __future__ import annotations

from collections.abc import Sequence

from games.base import Event
from games.chameleon.config import BallotKind, ChameleonConfig, Mode, Role, TieRule
from games.labels import fill_labels, seat_ref


def event_text(e: Event, names: Sequence[str]) -> str:
    """A sentence for people describing an event, seats named by ``names``."""
    return fill_labels(sentence(e), names)


def sentence(e: Event) -> str:
    """The event in words, seats as ``seat_ref`` tokens."""
    d = e.data

    def who(seat: object) -> str:
        return seat_ref(seat) if isinstance(seat, int) and seat >= 0 else "nobody"

    kind = e.kind
    if kind == "round_start":
        return (
            f"Round {d['round']}: the category is {d['category']}; the card reads "
            f"{', '.join(d['card'])}. {who(d['first'])} gives the first clue."
        )
    if kind == "role":
        if d["role"] == Role.CHAMELEON.value:
            return "You are the chameleon: blend in without knowing the secret word."
        return f"The secret word is {d['secret']}."
    if kind == "clue":
        return f"{who(d['seat'])} gives the clue: {d['clue']}."
    if kind == "discussion_start":
        return "All clues are in. Discuss, then mark yourself ready to vote."
    if kind == "ready":
        return f"{who(d['seat'])} is ready to vote."
    if kind == "vote_start":
        if d["ballot"] == BallotKind.RUNOFF.value:
            return "Run-off vote between " + ", ".join(who(c) for c in d["candidates"]) + "."
        return "Vote now: who is the chameleon?"
    if kind == "vote_cast":
        return "You abstain." if d["target"] is None else f"You vote for {who(d['target'])}."
    if kind == "voted":
        return f"{who(d['seat'])} has voted."
    if kind == "vote_result":
        votes = "; ".join(
            f"{who(v['voter'])} → {who(v['target']) if v['target'] is not None else 'abstained'}" for v in d["votes"]
        )
        if d["accused"] is not None:
            end = f"{who(d['accused'])} is accused."
        elif d["runoff"]:
            end = "A tie between " + ", ".join(who(t) for t in d["tied"]) + ": run-off."
        elif d["tied"]:
            end = "Still a tie between " + ", ".join(who(t) for t in d["tied"]) + ": nobody is accused."
        else:
            end = "Nobody voted: nobody is accused."
        return f"Votes: {votes}. {end}"
    if kind == "reveal":
        if d["caught"]:
            return f"{who(d['chameleon'])} is the chameleon and has been caught! They may still guess the secret."
        if d["accused"] is None:
            return f"Nobody is accused. {who(d['chameleon'])} was the chameleon and escapes."
        return f"{who(d['accused'])} is not the chameleon: {who(d['chameleon'])} was, and escapes."
    if kind == "guess":
        verdict = "right: the chameleon escapes" if d["correct"] else f"wrong, the secret was {d['secret']}"
        return f"{who(d['seat'])} guesses {d['guess']}: {verdict}."
    if kind == "round_end":
        scored = ", ".join(f"{who(i)} {p}" for i, p in enumerate(d["scores"]))
        return f"Round {d['round']} over (the secret was {d['secret']}). Scores: {scored}."
    if kind == "game_over":
        return "Game over. Winners: " + (", ".join(who(w) for w in d["winners"]) or "nobody") + "."
    return f"{kind}: {dict(d)}"


def rules_text(cfg: ChameleonConfig) -> str:
    """The rules of this config, in a few paragraphs for players."""
    words = f"{cfg.card_size} words"
    mode = (
        "This is a single round: the chameleon wins if it escapes, the others win if it is caught and guesses wrong."
        if cfg.mode is Mode.SINGLE
        else (
            f"This is a match: rounds continue until one player alone has {cfg.target_points} points "
            f"(at most {cfg.max_rounds} rounds; then the highest score wins)."
        )
    )
    tie = (
        "A tie at the top of the vote leads to one run-off vote among the tied players; "
        "if that ties too, the chameleon escapes."
        if cfg.tie_rule is TieRule.RUNOFF
        else "A tie at the top of the vote lets the chameleon escape."
    )
    discussion = " After the clues you may discuss; mark yourself ready when you want to vote." if cfg.discussion else ""
    return (
        f"Everyone sees a category card of {words}. One of them is the secret word, told privately to "
        "everyone except the chameleon, who only learns that they are the chameleon.\n\n"
        "In turn, each player gives a one-word clue that shows they know the secret without "
        "giving it away. You may not say the secret or repeat an earlier clue. The chameleon must "
        f"bluff.{discussion}\n\n"
        f"Then everyone votes at once for who they think the chameleon is. {tie} If the wrong "
        "player is accused, the chameleon escapes. If the chameleon is caught, it may still escape by "
        "naming the secret word from the card.\n\n"
        "Points: the chameleon escapes uncaught, +2 to the chameleon; caught but guesses right, +1 to "
        f"the chameleon; caught and wrong, +2 to everyone else. {mode}"
    )
