"""Who-is-Spy in words: each event as a sentence (seats as ``seat_ref`` tokens) and the rules of a config."""

from __future__ import annotations

from collections.abc import Sequence

from games.base import Event
from games.labels import fill_labels, human_list, seat_ref
from games.spy.config import ROLE_NAMES, Phase, Role, SpyConfig, TieRule, Variant
from games.spy.state import winners_line


def event_text(e: Event, names: Sequence[str]) -> str:
    """A sentence for people describing an event, seats named by ``names``."""
    return fill_labels(sentence(e), names)


def sentence(e: Event) -> str:
    """The event in words, seats as ``seat_ref`` tokens."""
    d = e.data

    def n(x: object) -> str:
        return seat_ref(x) if isinstance(x, int) and x >= 0 else str(x)

    k = e.kind
    if k == "word":
        if d.get("blank"):
            return "You are Mr. White: you have no word. Blend in, and guess the villagers' word if voted out."
        return f"Your word is {d['word']}."
    if k == "game_started":
        extra = " and a Mr. White" if d.get("blank") else ""
        spies = d["spies"]
        return (
            f"Who-is-Spy begins with {d['seats']} players: {spies} {'spy' if spies == 1 else 'spies'}{extra} "
            f"{'hides' if spies == 1 and not extra else 'hide'} among the villagers "
            f"(at most {d['max_rounds']} rounds)."
        )
    if k == "round_started":
        return f"Round {d['round']} begins. Speaking order: {', '.join(n(x) for x in d['order'])}."
    if k == "described":
        return f"{n(d['seat'])} describes their word: \"{d['text']}\""
    if k == "discussion_started":
        return "Discussion time: talk it over, then say you are ready to vote."
    if k == "ready":
        return f"{n(d['seat'])} is ready to vote."
    if k == "vote_started":
        if d["stage"] == Phase.RUNOFF.value:
            return f"Run-off vote between {' and '.join(n(x) for x in d['candidates'])}."
        return f"Round {d['round']} vote: who is the spy?"
    if k == "vote_cast":
        if d["target"] is None:
            return "You abstained."
        return f"You voted for {n(d['target'])}."
    if k == "voted":
        return f"{n(d['voter'])} has voted."
    if k == "votes_revealed":
        parts = [
            f"{n(int(v))} for {n(t)}" if t is not None else f"{n(int(v))} abstained"
            for v, t in d["ballots"].items()
        ]
        return "The votes: " + "; ".join(parts) + "."
    if k == "tie":
        tied = human_list([n(x) for x in d["tied"]])
        return f"Tie between {tied}" + (": a run-off decides." if d["runoff"] else ".")
    if k == "no_elimination":
        return "Nobody received a vote; nobody is eliminated." if d["reason"] == "no votes" else "Still tied; nobody is eliminated this round."
    if k == "eliminated":
        return f"{n(d['seat'])} is voted out. They were {ROLE_NAMES[Role(d['role'])]}."
    if k == "white_guess_started":
        return f"{n(d['seat'])}, Mr. White, may now guess the villagers' word."
    if k == "white_guess":
        return f"You guessed \"{d['guess']}\"."
    if k == "white_guessed":
        if d["correct"]:
            return f"{n(d['seat'])} guessed the villagers' word: \"{d['guess']}\"!"
        return f"{n(d['seat'])} guessed wrong."
    if k == "game_over":
        lead = winners_line(d["team"], d["roles"], d["winners"])
        roles = [Role(r) for r in d["roles"]]
        spies = ", ".join(seat_ref(i) for i, r in enumerate(roles) if r is Role.SPY)
        white = [seat_ref(i) for i, r in enumerate(roles) if r is Role.MR_WHITE]
        tail = f"; Mr. White was {white[0]}" if white else ""
        return (
            f"{lead}: {d['reason']}. The villagers' word was {d['villager_word']}, the spies' word was "
            f"{d['spy_word']}. Spies: {spies}{tail}."
        )
    return f"{k}: {dict(d)}"


def rules_text(cfg: SpyConfig) -> str:
    """The rules of this config, in a few paragraphs for players."""
    spies = "1 spy" if cfg.variant is Variant.SPYGAME else (
        f"{cfg.spies} spies" if cfg.spies is not None else "1 spy (2 from 7 players, 3 from 11)"
    )
    white = (
        " One more player is Mr. White, who gets no word at all; if voted out, Mr. White may guess the "
        "villagers' word and wins alone if right."
        if cfg.blank
        else ""
    )
    rounds = f"{cfg.max_rounds} rounds" if cfg.max_rounds is not None else "as many rounds as players"
    tie = (
        "A tie leads to a run-off vote among the tied players; if that ties too, nobody is out this round."
        if cfg.tie_rule is TieRule.RUNOFF
        else "A tie eliminates nobody."
    )
    discussion = " After the descriptions you discuss freely, then vote." if cfg.discussion else ""
    end = (
        "The spy wins by not being voted out before only two players remain; the villagers win by voting the spy out."
        if cfg.variant is Variant.SPYGAME
        else "The villagers win when every spy"
        + (" and Mr. White" if cfg.blank else "")
        + f" is out. The spies win when they are no longer outnumbered by living villagers, or when {rounds} "
        "have passed with a spy still in."
    )
    return (
        f"Who is the spy? Most players (the villagers) share one secret word; {spies} got a similar but "
        f"different word. Nobody is told which side they are on: compare descriptions to find out.{white}\n\n"
        f"Each round every living player describes their word in at most {cfg.max_words} words, in a random "
        "order: never say your word, and never repeat a description already given."
        f"{discussion} Then everyone votes in secret for who they think is a spy. The votes are shown "
        f"together, and the player with the most votes is out; their role (not their word) is revealed. {tie}\n\n"
        f"{end}"
    )
