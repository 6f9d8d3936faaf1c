"""Decrypto in words: each event as a sentence (seats as ``seat_ref`` tokens) and the rules of a config."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.base import ABSTAIN, Event
from games.decrypto.config import DecryptoConfig, Variant
from games.labels import fill_labels, seat_ref


def event_text(e: Event, names: Sequence[str]) -> str:
    """A sentence for people describing an event, seats named by ``names``."""
    return fill_labels(sentence(e), names)


def sentence(e: Event) -> str:
    """The event in words, seats as ``seat_ref`` tokens."""
    d = e.data
    # Benchmark events say "turn" (the paper's word) and have a single team.
    bench = "turn" in d or d.get("variant") == Variant.BENCHMARK

    def who(seat: object) -> str:
        return seat_ref(seat) if isinstance(seat, int) and seat >= 0 else f"seat {seat}"

    def team(label: object = d.get("team")) -> str:
        return "the team" if bench else f"Team {label}"

    def team_s(label: object = d.get("team")) -> str:
        return "the team's" if bench else f"Team {label}'s"

    at = f"turn {d['turn']}" if "turn" in d else f"round {d.get('round')}"
    k = e.kind
    if k == "setup":
        if bench:
            return (
                f"Decrypto (benchmark): {who(d['encoder'])} is the encoder, {who(d['decoder'])} the decoder "
                f"and {who(d['interceptor'])} the interceptor."
            )
        return "Decrypto (teams): " + "; ".join(
            f"Team {label} is {', '.join(who(x) for x in seats)}" for label, seats in d["teams"].items()
        ) + "."
    if k == "keywords":
        kws = ", ".join(f"{n}. {w}" for n, w in d["keywords"].items())
        return f"{_cap(team_s())} secret keywords: {kws}."
    if k == "round":
        if bench:
            return f"Turn {d['turn']} begins."
        enc, dec = d["encoders"], d["decoders"]
        parts = [f"Team {t}: {who(enc[t])} encodes, {who(dec[t])} decodes" for t in enc]
        return f"Round {d['round']} begins. " + "; ".join(parts) + "."
    if k == "code":
        return f"The secret code for {team_s()} {at} is {d['code']}."
    if k == "hints_written":
        return f"You wrote {team_s()} hints for {at}: {', '.join(d['hints'])}."
    if k == "hints_ready":
        return f"{who(d['encoder'])} has written {team_s()} hints."
    if k == "hints":
        return f"{who(d['encoder'])} gives {team_s()} hints for {at}: {', '.join(d['hints'])}."
    if k == "guess":
        if d["guess"] == ABSTAIN:
            return f"You abstained on {team_s()} code."
        return f"You guessed {d['guess']} for {team_s()} code."
    if k == "guessed":
        return f"{who(d['seat'])} has locked in a guess for {team_s()} code."
    if k == "reveal":
        bench = "interceptions" in d["tokens"]  # the reveal carries the record's "round"; tokens tell the variant
        hints = ", ".join(f"{n}: {h}" for n, h in d["hints_by_digit"].items())
        line = f"{_cap(team_s())} code was {d['code']} ({hints}). "
        dg = d["decoder_guess"]
        line += f"{who(d['decoder'])} guessed {dg}" if dg != ABSTAIN else f"{who(d['decoder'])} abstained"
        line += ": miscommunication." if d["miscommunication"] else ": correct."
        if d["interceptor"] is not None:
            ig = d["interceptor_guess"]
            line += f" {who(d['interceptor'])} tried {ig}" if ig != ABSTAIN else f" {who(d['interceptor'])} abstained"
            line += ": interception!" if d["interception"] else ": no interception."
        return line + " Tokens: " + _tokens_text(d["tokens"]) + "."
    if k == "decided":
        return f"{d['summary']} Play goes on to turn {d['max_turns']}; the later turns do not change the result."
    if k == "tiebreak":
        sc, g = d["scores"], d["guessers"]
        return (
            f"Tied at {sc['A']} to {sc['B']} ({d['cause']}): {who(g['A'])} guesses Team B's keywords "
            f"and {who(g['B'])} guesses Team A's keywords."
        )
    if k == "tiebreak_written":
        other = "B" if d["team"] == "A" else "A"
        return f"You guessed Team {other}'s keywords: {', '.join(d['guesses'])}."
    if k == "tiebreak_guessed":
        return f"{who(d['seat'])} has written Team {d['team']}'s keyword guesses."
    if k == "tiebreak_result":
        c, g = d["correct"], d["guesses"]
        return (
            f"Tie-break: Team A guessed {', '.join(g['A'])} ({c['A']} right); "
            f"Team B guessed {', '.join(g['B'])} ({c['B']} right)."
        )
    if k == "game_over":
        kw = d["keywords"]
        if all(isinstance(v, dict) for v in kw.values()):
            shown = "; ".join(f"Team {t}: {', '.join(f'{n}. {w}' for n, w in m.items())}" for t, m in kw.items())
        else:
            shown = ", ".join(f"{n}. {w}" for n, w in kw.items())
        return f"{d['summary']} The keywords were {shown}."
    return f"{k}: {dict(d)}"


def rules_text(cfg: DecryptoConfig) -> str:
    """The rules of this config, in a few paragraphs for players."""
    limits = (
        f"{cfg.max_interceptions} interceptions or {cfg.max_miscommunications} miscommunications"
    )
    codes = (
        "Codes already used by a team are left out of the guess options."
        if cfg.exclude_used_codes
        else "All 24 codes are offered when guessing, though a team never gets the same code twice."
    )
    common = (
        "Each turn the encoder secretly gets a code of three different digits from 1 to 4, such as 3-1-4, "
        "and gives one hint per digit, in code order: one or two words about the meaning of that keyword, "
        "never the keyword itself. Then the decoder guesses the code while an opponent tries to intercept it; "
        "the code, the guesses and the hints are then shown to all. A wrong decoder guess is a miscommunication; "
        "a right opponent guess is an interception. " + codes
    )
    if cfg.variant is Variant.BENCHMARK:
        return (
            "Decrypto, benchmark rules: three players. The encoder and the decoder share four secret keywords "
            "numbered 1 to 4; the interceptor does not know them.\n\n"
            + common
            + f"\n\nThe interceptor wins at once with {limits} (also when both happen on the same turn). "
            f"The encoder and decoder win by surviving {cfg.max_turns} turns. The interceptor also guesses on the "
            "first turn; the growing public hint history is its best clue."
            + (f" Once the game is decided, play goes on to turn {cfg.max_turns}; the later turns do not change the "
               "result." if cfg.play_on else "")
        )
    return (
        "Decrypto, team rules: two teams (even seats are team A, odd seats team B), each with four secret "
        "keywords numbered 1 to 4. Each round a different player of each team encodes and the next one decodes.\n\n"
        + common
        + " Both teams write their hints at the same time; team A's hints are guessed first, then team B's. "
        "Interceptions start in round 2.\n\n"
        f"At the end of a round, a team with {cfg.max_interceptions} interceptions wins, and a team with "
        f"{cfg.max_miscommunications} miscommunications loses. If both teams would win, or nobody has won after "
        f"{cfg.max_rounds} rounds, the higher score (interceptions minus miscommunications) wins. If still tied, "
        "each team's decoder guesses the other team's four keywords; more right guesses wins, otherwise it is a draw."
    )


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _tokens_text(tokens: Mapping[str, Any]) -> str:
    if "interceptions" in tokens:
        return f"{_count(tokens['interceptions'], 'interception')}, {_count(tokens['miscommunications'], 'miscommunication')}"
    return "; ".join(
        f"Team {t} {_count(v['interceptions'], 'interception')}, {_count(v['miscommunications'], 'miscommunication')}"
        for t, v in tokens.items()
    )
