"""Per-seat outcomes and the papers' metrics over any set of game records.

Pure functions over ``games.record.Record``: every record is replayed through
its engine, so the engine (not a stored summary) decides roles, tokens, votes
and winners. Used by ``hushtable stats`` and by tournament leaderboards.

Metrics, as the papers report them:

- Decrypto benchmark (the Decrypto paper's Table 1): total miscommunications
  and total interceptions over the set of games, the encoder-decoder team's win
  rate, and the mean game length in turns; also how games ended (its Figure 10:
  interceptions, miscommunications, both on the same turn, survived).
- Decrypto teams (no paper): the same tokens per team, rounds, win rates, draws.
- Who-is-Spy (the SpyGame paper's Table 4): the spies' win rate ("Win"), the mean
  number of rounds a spy survives ("Round") and the votes a spy receives per
  round ("Voted"); the same three for villagers for comparison. "Voted" is
  pooled: all votes a spy received in the rounds' main votes divided by the
  number of main votes it took part in (a run-off is not a new round).
- Chameleon (SNEAK's game; the paper scores clues, not games): catch rate (the
  chameleon was the accused), escape rate (not caught, or caught and named the
  secret), and points per round for the chameleon and for the other players.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from games.base import Result
from games.catalog import find
from games.descriptor import GameDescriptor, Measured, SeatOutcome, SeatRole, Side
from games.record import Record, replay_record

__all__ = [
    "GameNotOver", "Measured", "SeatOutcome", "SeatRole", "Side", "chameleon_metrics", "chameleon_seats",
    "decrypto_metrics", "decrypto_seats", "game_metrics", "generic_metrics", "generic_seats", "measure",
    "metrics_of", "seat_outcomes", "spy_metrics", "spy_seats",
]


class GameNotOver(ValueError):
    """The record stops before the game ends: it has no outcome to measure."""


def measure(rec: Record) -> Measured:
    """Replay a record and read the seats' outcomes; raises GameNotOver or RecordError."""
    _, _, result = replay_record(rec)
    if result is None:
        raise GameNotOver(f"this {rec.game.id} game is not over ({len(rec.actions)} actions)")
    variant = str(rec.config.variant)
    d = find(rec.game.id)
    reader = d.read_seats if d is not None and d.read_seats is not None else generic_seats
    return Measured(rec.game.id, variant, result, tuple(reader(rec, variant, result)))


def seat_outcomes(rec: Record) -> list[SeatOutcome]:
    """Each seat's role, side, win (None on a draw) and numbers, from the replayed game."""
    return list(measure(rec).seats)


def _won(result: Result, seat: int) -> bool | None:
    return None if not result.winners else seat in result.winners


# --------------------------------------------------------------------------- seat readers


def decrypto_seats(rec: Record, variant: str, result: Result) -> list[SeatOutcome]:
    d = result.details
    history: Sequence[Mapping[str, Any]] = d["history"]
    if variant == "benchmark":
        common = {
            "turns": float(d["turns"]),
            "miscommunications": float(d["miscommunications"]),
            "interceptions": float(d["interceptions"]),
        }
        roles = ((SeatRole.ENCODER, Side.TEAM), (SeatRole.DECODER, Side.TEAM), (SeatRole.INTERCEPTOR, Side.INTERCEPTOR))
        return [SeatOutcome(seat, role, side, _won(result, seat), dict(common)) for seat, (role, side) in enumerate(roles)]
    out = []
    for seat in range(rec.seats):
        label = "A" if seat % 2 == 0 else "B"
        tokens = d["tokens"][label]
        stats = {
            "rounds": float(d["rounds"]),
            "miscommunications": float(tokens["miscommunications"]),
            "interceptions": float(tokens["interceptions"]),
            "encoded": float(sum(1 for t in history if t["encoder"] == seat)),
            "decoded": float(sum(1 for t in history if t["decoder"] == seat)),
        }
        side = Side.TEAM_A if label == "A" else Side.TEAM_B
        out.append(SeatOutcome(seat, SeatRole.TEAM_MEMBER, side, _won(result, seat), stats))
    return out


_SPY_ROLE = {"villager": (SeatRole.VILLAGER, Side.VILLAGERS), "spy": (SeatRole.SPY, Side.SPIES),
             "mr_white": (SeatRole.MR_WHITE, Side.MR_WHITE)}


def spy_seats(rec: Record, variant: str, result: Result) -> list[SeatOutcome]:
    d = result.details
    out = []
    for seat, raw_role in enumerate(d["roles"]):
        role, side = _SPY_ROLE[raw_role]
        votes = [v for v in d["votes_received"][str(seat)] if v is not None]
        stats = {
            "rounds_survived": float(d["rounds_survived"][str(seat)]),
            "votes_received": float(sum(votes)),
            "voted_rounds": float(len(votes)),
            "eliminated": float(seat in d["eliminated"]),
        }
        out.append(SeatOutcome(seat, role, side, _won(result, seat), stats))
    return out


def chameleon_seats(rec: Record, variant: str, result: Result) -> list[SeatOutcome]:
    d = result.details
    rounds: Sequence[Mapping[str, Any]] = d["rounds"]
    single = d["mode"] == "single"
    out = []
    for seat in range(rec.seats):
        as_cham = [r for r in rounds if r["chameleon"] == seat]
        first_votes = [v for r in rounds for b in r["votes"] if b["ballot"] == "first" for v in b["votes"]]
        stats = {
            "points": float(d["scores"][seat]),
            "rounds": float(len(rounds)),
            "rounds_as_chameleon": float(len(as_cham)),
            "escapes": float(sum(1 for r in as_cham if r["outcome"] != "caught")),
            "caught": float(sum(1 for r in as_cham if r["caught"])),
            "votes_received": float(sum(1 for v in first_votes if v["target"] == seat)),
        }
        if single:
            cham = as_cham != []
            role, side = (SeatRole.CHAMELEON, Side.CHAMELEON) if cham else (SeatRole.PLAYER, Side.PLAYERS)
        else:
            role, side = SeatRole.PLAYER, Side.SELF
        out.append(SeatOutcome(seat, role, side, _won(result, seat), stats))
    return out


def generic_seats(rec: Record, variant: str, result: Result) -> list[SeatOutcome]:
    """Every seat a player on its own side, won or lost as the result says (a game that
    declares no seat reader)."""
    return [SeatOutcome(seat, SeatRole.PLAYER, Side.SELF, _won(result, seat)) for seat in range(rec.seats)]


# --------------------------------------------------------------------------- metrics per game


def _rate(num: float, den: float) -> float | None:
    """A ratio, or None when there is nothing to divide by (no games, no rounds)."""
    return num / den if den else None


def decrypto_metrics(games: Sequence[Measured]) -> dict[str, Any]:
    """The Decrypto paper's metrics over benchmark games (Table 1), or the teams' analogue."""
    bench = [g for g in games if g.variant == "benchmark"]
    teams = [g for g in games if g.variant == "teams"]
    if bench and teams:
        raise ValueError("benchmark and teams games are measured separately")
    if bench or not teams:
        n = len(bench)
        details = [g.result.details for g in bench]
        ended = Counter(str(x["reason"]) for x in details)
        return {
            "games": n,
            "miscommunications": sum(int(x["miscommunications"]) for x in details),
            "interceptions": sum(int(x["interceptions"]) for x in details),
            "miscommunications_per_game": _rate(sum(int(x["miscommunications"]) for x in details), n),
            "interceptions_per_game": _rate(sum(int(x["interceptions"]) for x in details), n),
            "team_win_rate": _rate(sum(1 for x in details if x["team_won"]), n),
            "mean_turns": _rate(sum(int(x["turns"]) for x in details), n),
            "ended_by": {k: ended.get(k, 0) for k in ("interceptions", "miscommunications", "both", "survived")},
        }
    n = len(teams)
    details = [g.result.details for g in teams]
    winners = Counter(x["winning_team"] for x in details)
    ended = Counter(str(x["reason"]) for x in details)
    return {
        "games": n,
        "miscommunications": {t: sum(int(x["tokens"][t]["miscommunications"]) for x in details) for t in "AB"},
        "interceptions": {t: sum(int(x["tokens"][t]["interceptions"]) for x in details) for t in "AB"},
        "win_rate": {t: _rate(winners.get(t, 0), n) for t in "AB"},
        "draw_rate": _rate(winners.get(None, 0), n),
        "mean_rounds": _rate(sum(int(x["rounds"]) for x in details), n),
        "ended_by": {k: ended.get(k, 0) for k in ("tokens", "score", "tiebreak", "tie")},
    }


def _spy_role_metrics(seats: Sequence[SeatOutcome]) -> dict[str, Any]:
    voted = sum(s.stats["voted_rounds"] for s in seats)
    return {
        "seats": len(seats),
        "win_rate": _rate(sum(1 for s in seats if s.won), len(seats)),
        "rounds_survived": _rate(sum(s.stats["rounds_survived"] for s in seats), len(seats)),
        "votes_per_round": _rate(sum(s.stats["votes_received"] for s in seats), voted),
    }


def spy_metrics(games: Sequence[Measured]) -> dict[str, Any]:
    """The SpyGame paper's Win, Round and Voted for spies (and villagers, Mr. White)."""
    seats = [s for g in games for s in g.seats]
    by_role = {role: [s for s in seats if s.role is role] for role in (SeatRole.SPY, SeatRole.VILLAGER, SeatRole.MR_WHITE)}
    n = len(games)
    spies_won = sum(1 for g in games if g.result.details["team"] == "infiltrators"
                    and any(g.result.details["roles"][w] == "spy" for w in g.result.winners))
    out: dict[str, Any] = {
        "games": n,
        "spy_game_win_rate": _rate(spies_won, n),
        "mean_rounds": _rate(sum(int(g.result.details["rounds"]) for g in games), n),
        "spy": _spy_role_metrics(by_role[SeatRole.SPY]),
        "villager": _spy_role_metrics(by_role[SeatRole.VILLAGER]),
    }
    if by_role[SeatRole.MR_WHITE]:
        out["mr_white"] = _spy_role_metrics(by_role[SeatRole.MR_WHITE])
    return out


def chameleon_metrics(games: Sequence[Measured]) -> dict[str, Any]:
    """Catch rate, escape rate and points per round over every round of every game."""
    rounds = [r for g in games for r in g.result.details["rounds"]]
    n = len(rounds)
    outcomes = Counter(str(r["outcome"]) for r in rounds)
    cham_points = sum(int(r["points"][r["chameleon"]]) for r in rounds)
    other_points = sum(sum(int(p) for i, p in enumerate(r["points"]) if i != r["chameleon"]) for r in rounds)
    other_seats = sum(len(r["points"]) - 1 for r in rounds)
    return {
        "games": len(games),
        "rounds": n,
        "catch_rate": _rate(sum(1 for r in rounds if r["caught"]), n),
        "escape_rate": _rate(outcomes["escaped"] + outcomes["guessed"], n),
        "guessed_when_caught": _rate(outcomes["guessed"], outcomes["guessed"] + outcomes["caught"]),
        "outcomes": {k: outcomes.get(k, 0) for k in ("escaped", "guessed", "caught")},
        "chameleon_points_per_round": _rate(cham_points, n),
        "player_points_per_round": _rate(other_points, other_seats),
    }


def generic_metrics(games: Sequence[Measured]) -> dict[str, Any]:
    """How many games, and how many ended in a draw (a game that declares no summary)."""
    return {"games": len(games), "draw_rate": _rate(sum(1 for g in games if not g.result.winners), len(games))}


def _summary(d: GameDescriptor | None, games: Sequence[Measured]) -> dict[str, Any]:
    summarize = d.summarize if d is not None and d.summarize is not None else generic_metrics
    return summarize(games)


def metrics_of(measured: Iterable[Measured]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{game: {variant: metrics}}`` over already replayed games."""
    groups: dict[tuple[str, str], list[Measured]] = {}
    for m in measured:
        groups.setdefault((m.game, m.variant), []).append(m)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for (game, variant), ms in sorted(groups.items()):
        out.setdefault(game, {})[variant] = _summary(find(game), ms)
    return out


def game_metrics(recs: Iterable[Record]) -> dict[str, dict[str, dict[str, Any]]]:
    """The papers' metrics per game and variant: ``{game: {variant: metrics}}``.

    Every record must be a finished game (GameNotOver otherwise); variants are
    kept apart because their rules (and so their numbers) differ.
    """
    return metrics_of(measure(r) for r in recs)
