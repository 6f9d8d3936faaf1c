"""What each page of the web view shows, read from the store and replayed through the engines.

Every function takes the link's `Scope` and returns plain frozen data for a template, or raises
`NotShown` when the scope does not reach it: another tenant's game, a game the link does not name,
a game still running (its secrets are never read here), a missing id. One refusal for all of them, so a
guessed id tells nothing about what exists. People appear under their export pseudonyms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any

from sqlmodel import col, select

from bot.core.render import label, result_text
from bot.core.replays import record_of
from bot.web.links import Scope
from games.base import Audience, Choice, Event, IllegalAction, Text
from games.record import RecordError
from storage import annotations as study_repo
from storage import tournaments as tournament_repo
from storage.evaluations import evaluations_json
from storage.export import pseudonym
from storage.ports import ExportSource
from storage.records import GameLog
from storage.tables import ENDED, ActionSource, AgentCallRow, GameRow, GameStatus, SeatKind, SeatRow

LIST_LIMIT = 500  # the newest games a list shows; filters narrow it further


class NotShown(LookupError):
    """The link does not reach this page (or it does not exist: the same answer)."""


@dataclass(frozen=True, slots=True)
class Filters:
    game: str | None = None
    since: date | None = None
    until: date | None = None
    player: str | None = None
    agent: str | None = None


@dataclass(frozen=True, slots=True)
class GameItem:
    id: int
    game: str
    variant: str
    status: str
    finished_at: str
    seats: tuple[str, ...]
    summary: str
    mine: bool


def seat_names(seats: Sequence[SeatRow], secret: str, tenant: str) -> list[str]:
    """How seats are named on every page: people by export pseudonym (keyed by the game's tenant, as in
    exports), AI seats by their agent."""
    out = []
    for s in seats:
        if s.kind == SeatKind.HUMAN:
            out.append(pseudonym(secret, s.user_key, tenant=tenant) if s.user_key else f"seat {s.seat + 1}")
        else:
            out.append(f"{s.agent_spec or 'AI'} (seat {s.seat + 1})")
    return out


def _when(ts: datetime | None) -> str:
    return ts.strftime("%Y-%m-%d %H:%M UTC") if ts is not None else "-"


async def _seats_of(store: ExportSource, ids: Sequence[int]) -> dict[int, list[SeatRow]]:
    out: dict[int, list[SeatRow]] = {i: [] for i in ids}
    if not ids:
        return out
    async with store.read() as s:
        q = select(SeatRow).where(col(SeatRow.game_id).in_(list(ids))).order_by(col(SeatRow.game_id), col(SeatRow.seat))
        for row in (await s.exec(q)).all():
            out[row.game_id].append(row)
    return out


async def game_list(store: ExportSource, scope: Scope, secret: str, f: Filters) -> list[GameItem]:
    """The tenant's ended games, newest first, narrowed by the filters."""
    since = datetime.combine(f.since, time.min, tzinfo=UTC) if f.since else None
    rows = await store.games(status=ENDED, tenant=scope.tenant, game=f.game or None, finished_since=since)
    if f.until is not None:
        end = datetime.combine(f.until, time.max, tzinfo=UTC)
        rows = [r for r in rows if r.finished_at is not None and _aware(r.finished_at) <= end]
    rows = [r for r in rows if r.id is not None and scope.allows_game(r.id)]
    rows.sort(key=lambda r: r.id or 0, reverse=True)
    seats = await _seats_of(store, [r.id for r in rows if r.id is not None])
    items: list[GameItem] = []
    for r in rows:
        assert r.id is not None
        these = seats[r.id]
        names = seat_names(these, secret, r.tenant)
        players = {pseudonym(secret, s.user_key, tenant=r.tenant) for s in these if s.user_key}
        if f.player and f.player.strip() not in players:
            continue
        if f.agent and not any(f.agent.strip().lower() in (s.agent_spec or "").lower() for s in these if s.kind == SeatKind.AI):
            continue
        summary = str((r.result or {}).get("summary", "aborted" if r.status == GameStatus.ABORTED else ""))
        items.append(GameItem(r.id, r.game, r.variant, str(r.status), _when(r.finished_at), tuple(names), summary,
                              scope.member is not None and scope.member in players))
        if len(items) >= LIST_LIMIT:
            break
    return items


def _aware(ts: datetime) -> datetime:
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


async def _ended_log(store: ExportSource, scope: Scope, game_id: int) -> GameLog:
    row = await _row_in_scope(store, scope, game_id)
    if row.status not in ENDED:
        raise NotShown(game_id)
    return await store.load_game(game_id)


async def _row_in_scope(store: ExportSource, scope: Scope, game_id: int) -> GameRow:
    if not scope.allows_game(game_id):
        raise NotShown(game_id)
    row = await store.game(game_id)
    if row is None or row.tenant != scope.tenant:
        raise NotShown(game_id)
    return row


# --------------------------------------------------------------------------- the replay


@dataclass(frozen=True, slots=True)
class Line:
    step: int
    text: str


@dataclass(frozen=True, slots=True)
class Step:
    index: int  # 0: the deal
    who: str
    move: str
    source: str
    rule: str


@dataclass(frozen=True, slots=True)
class SeatView:
    seat: int
    name: str
    lines: tuple[Line, ...]


@dataclass(frozen=True, slots=True)
class Replay:
    id: int
    game: str
    variant: str
    status: str
    finished_at: str
    names: tuple[str, ...]
    steps: tuple[Step, ...]
    public: tuple[Line, ...]
    private: tuple[SeatView, ...]
    secrets: tuple[str, ...]
    outcome: str
    has_clues: bool
    problem: str = ""


def _source(src: str, actor: str, agent: str | None, call: AgentCallRow | None, person: str | None) -> str:
    """Where a move came from, in one line: a person (``person``: their pseudonym), a model, a fallback, the rules."""
    model = f", model {call.model_id}" if call is not None and call.model_id else ""
    who = person or actor
    if src == ActionSource.HUMAN:
        return f"played by {who}"
    if src == ActionSource.AI:
        return f"AI move by {who}{model}"
    if src == ActionSource.FALLBACK:
        why = f" ({call.error})" if call is not None and call.error else ""
        return f"fallback: {agent or 'the agent'} failed{why}; {who} played{model}"
    if src == ActionSource.TIMEOUT:
        return "timeout: the rules' neutral move for an absent seat"
    if src == ActionSource.TAKEOVER:
        return f"takeover: {who} played this seat's turn{model}"
    return src


def _rule(spec: Choice | Text | None, names: Sequence[str]) -> str:
    """The rules in one line for this step: what the seat was asked to do."""
    if spec is None:
        return ""
    line = label(spec.prompt, names).strip().splitlines()
    text = line[0] if line else ""
    if isinstance(spec, Text):
        text += f" ({spec.limits()})" if hasattr(spec, "limits") else ""
    return text


async def replay(store: ExportSource, scope: Scope, game_id: int, secret: str) -> Replay:
    """Every step of an ended game: the public table, each seat's private view, the secrets, every
    move's source and the rule it followed."""
    log = await _ended_log(store, scope, game_id)
    row = log.row
    names = seat_names(log.seats, secret, row.tenant)
    agents = {s.seat: s.agent_spec for s in log.seats}
    people = {s.user_key for s in log.seats if s.user_key} | {row.host}
    calls: dict[tuple[int, int], AgentCallRow] = {}
    for c in await store.agent_calls(game_id):
        if c.action_seq is not None:
            calls[(c.seat, c.action_seq)] = c  # the last call of a move says how it ended
    has_clues = bool(await evaluations_json(store, game_id))
    public: list[Line] = []
    private: dict[int, list[Line]] = {s.seat: [] for s in log.seats}
    steps: list[Step] = []
    secrets_out: list[str] = []
    problem = ""

    def add(step: int, events: Sequence[Event]) -> None:
        for e in events:
            text = engine.text(e, names)
            if e.audience.is_public:
                public.append(Line(step, text))
            else:
                for seat in private:
                    if e.audience.includes(seat):
                        private[seat].append(Line(step, text))

    try:
        rec = record_of(log)
    except RecordError as exc:
        return Replay(game_id, row.game, row.variant, str(row.status), _when(row.finished_at), tuple(names), (), (), (),
                      (), "", has_clues, problem=str(exc))
    engine = rec.game
    state, dealt = engine.new(rec.config, rec.seats, rec.seed)
    for sec in engine.secrets(state):
        knew = ", ".join(names[s] for s in sorted(sec.known_by) if 0 <= s < len(names)) or "nobody"
        among = f" (hidden among: {', '.join(sec.among)})" if sec.among else ""
        secrets_out.append(f"{sec.value}{among}, known to {knew}")
    steps.append(Step(0, "", "the deal", "the rules", "Cards and roles are dealt; each seat sees only its own secret."))
    add(0, dealt)
    for i, (a, (seat, action)) in enumerate(zip(log.actions, rec.actions, strict=True), start=1):
        spec = engine.legal(state, seat)
        who = names[seat] if 0 <= seat < len(names) else f"seat {seat + 1}"
        move = f"{action.kind}: {', '.join(action.value)}" if action.value else action.kind
        # As in exports: an actor is a person when the move was theirs, or the key is a seat's or the platform's.
        person = pseudonym(secret, a.actor, tenant=row.tenant) if (a.source == ActionSource.HUMAN or a.actor in people
                                                or a.actor.startswith(f"{row.platform}:")) else None
        src = _source(str(a.source), a.actor, agents.get(seat), calls.get((seat, a.seq)), person)
        steps.append(Step(i, who, move, src, _rule(spec, names)))
        try:
            state, evs = engine.apply(state, seat, action)
        except IllegalAction:
            problem = f"move {i} no longer replays under the current rules; the steps stop here"
            break
        add(i, evs)
    result = row.result
    outcome = result_text(result, names) if result else "The game was stopped before it ended."
    return Replay(game_id, row.game, row.variant, str(row.status), _when(row.finished_at), tuple(names), tuple(steps),
                  tuple(public), tuple(SeatView(s, names[s], tuple(private[s])) for s in sorted(private)),
                  tuple(secrets_out), outcome, has_clues, problem)


# --------------------------------------------------------------------------- the clue report


@dataclass(frozen=True, slots=True)
class Clue:
    step: int
    clue: str
    evaluator: str
    utility: str
    leakage: str
    soft: str
    note: str


def _pct(x: Any) -> str:
    return "-" if x is None else f"{100 * float(x):.0f}"


async def clue_report(store: ExportSource, scope: Scope, game_id: int) -> tuple[GameRow, list[Clue]]:
    log = await _ended_log(store, scope, game_id)
    steps = {a.seq: (i, a) for i, a in enumerate(log.actions, start=1)}
    out: list[Clue] = []
    for ev in await evaluations_json(store, game_id):
        i, a = steps.get(int(ev["action_seq"]), (0, None))
        value = list(a.value) if a is not None else []
        part = int(ev.get("part") or 0)
        clue = value[part] if 0 <= part < len(value) else ", ".join(value)
        if ev.get("error"):
            note = f"not judged: {ev['error']}"
        elif ev.get("soft") is not None and ev.get("utility") is not None and ev.get("leakage") is not None:
            u, lk = float(ev["utility"]), float(ev["leakage"])
            ally = "well above" if u >= 0.5 else "a little above" if u > 0 else "no better than"
            note = (f"allies pick the secret {ally} chance (utility {_pct(u)}), "
                    f"an outsider {'does too' if lk >= 0.5 else 'does not'} (leakage {_pct(lk)}): "
                    f"SoftScore {_pct(ev['soft'])} = utility x (1 - leakage)")
        else:
            note = ""
        out.append(Clue(i, clue, str(ev.get("evaluator", "")), _pct(ev.get("utility")), _pct(ev.get("leakage")),
                        _pct(ev.get("soft")), note))
    return log.row, out


# --------------------------------------------------------------------------- the live table


@dataclass(frozen=True, slots=True)
class Live:
    id: int
    game: str
    variant: str
    names: tuple[str, ...]
    lines: tuple[str, ...]
    over: bool


def spectatable(row: GameRow, seats: Sequence[SeatRow]) -> bool:
    """AI-only tables, and tables whose host allowed spectators (``spectators`` in the lobby)."""
    return (bool(seats) and all(s.kind == SeatKind.AI for s in seats)) or bool((row.lobby or {}).get("spectators"))


async def live(store: ExportSource, scope: Scope, game_id: int, secret: str) -> Live:
    """A running (or ended) spectatable table's public story: only events every seat saw."""
    row = await _row_in_scope(store, scope, game_id)
    if row.status not in (GameStatus.RUNNING, *ENDED):
        raise NotShown(game_id)
    log = await store.load_game(game_id)
    if not spectatable(row, log.seats):
        raise NotShown(game_id)
    names = seat_names(log.seats, secret, row.tenant)
    import games

    engine = games.get(row.game)
    lines = []
    for e in log.events:
        if e.audience != "public":
            continue  # never a secret while the game runs
        lines.append(engine.text(Event(e.kind, e.data, Audience.public()), names))
    return Live(game_id, row.game, row.variant, tuple(names), tuple(lines), row.status in ENDED)


# --------------------------------------------------------------------------- tournaments


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int
    entrant: str
    mu: float
    lo: float
    hi: float
    games: int
    interval: bool


@dataclass(frozen=True, slots=True)
class Match:
    idx: int
    seats: tuple[str, ...]
    status: str
    game_id: int | None
    winners: str


@dataclass(frozen=True, slots=True)
class Board:
    id: int
    name: str
    game: str
    variant: str
    status: str
    standings: tuple[Standing, ...]
    matches: tuple[Match, ...]
    chart: tuple[tuple[str, float, float, float, float, float, float], ...]  # entrant, y, x_lo, x_mu, x_hi, mu, games


async def tournament_list(store: ExportSource, scope: Scope) -> list[tuple[int, str, str, str]]:
    return [(t.id or 0, t.name or f"tournament #{t.id}", t.game, t.status)
            for t in reversed(await tournament_repo.tournaments(store, tenant=scope.tenant))]


async def board(store: ExportSource, scope: Scope, tournament_id: int) -> Board:
    t = await tournament_repo.tournament(store, tournament_id)
    if t is None or t.tenant != scope.tenant or scope.game is not None:
        raise NotShown(tournament_id)
    ratings = sorted(await tournament_repo.ratings(store, tournament_id), key=lambda r: r.rank)
    standings = tuple(Standing(r.rank, r.entrant, r.mu, r.lo, r.hi, r.games, r.hi > r.lo) for r in ratings)
    matches: list[Match] = []
    planned = await tournament_repo.matches(store, tournament_id)
    ids = [m.game_id for m in planned if m.game_id is not None]
    async with store.read() as session:
        q = select(GameRow).where(col(GameRow.id).in_(ids), GameRow.tenant == scope.tenant, col(GameRow.status).in_(list(ENDED)))
        ended = {g.id: g for g in (await session.exec(q)).all()}
    for m in planned:
        g = ended.get(m.game_id) if m.game_id is not None else None
        winners = ""
        if g is not None and g.result:
            winners = ", ".join(m.seats[w] for w in g.result.get("winners") or [] if isinstance(w, int) and 0 <= w < len(m.seats))
        matches.append(Match(m.idx, tuple(m.seats), m.status, m.game_id if g is not None else None, winners))
    chart: list[tuple[str, float, float, float, float, float, float]] = []
    if standings:
        lo = min(s.lo for s in standings)
        hi = max(s.hi for s in standings)
        span = (hi - lo) or 1.0

        def x(v: float) -> float:
            return round(160 + 420 * (v - lo) / span, 1)

        for i, s in enumerate(standings):
            chart.append((s.entrant, 20 + 24 * i, x(s.lo), x(s.mu), x(s.hi), round(s.mu, 1), s.games))
    return Board(tournament_id, t.name or f"tournament #{tournament_id}", t.game, t.variant, t.status, standings,
                 tuple(matches), tuple(chart))


# --------------------------------------------------------------------------- the study


@dataclass(frozen=True, slots=True)
class StudyTask:
    task: str
    items: int
    answered: int
    answers: int


async def study(store: ExportSource, scope: Scope) -> list[StudyTask]:
    """The human study's progress per task, in counts only (no item, no answer, no annotator shown)."""
    if not scope.admin or scope.game is not None:
        raise NotShown(0)
    items, votes = await study_repo.study(store)
    # Items from logged clues belong to their game's tenant; benchmark items (no game) are everyone's.
    ours = {r.id for r in await store.games(tenant=scope.tenant)}
    tasks: dict[str, list[int]] = {}
    for item in items:
        if item.get("game_id") is not None and item["game_id"] not in ours:
            continue
        key = str(item.get("key", ""))
        t = tasks.setdefault(str(item.get("task", "items")), [0, 0, 0])
        n = len(votes.get(key, []))
        t[0] += 1
        t[1] += 1 if n else 0
        t[2] += n
    return [StudyTask(k, v[0], v[1], v[2]) for k, v in sorted(tasks.items())]
