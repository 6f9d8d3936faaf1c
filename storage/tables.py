"""The tables of the game log, as SQLModel classes.

The log is append-only: a game's seats, actions and events are written once
and never changed; state is rebuilt by replaying actions through the engine.
The few mutable columns are the game's lifecycle (``status``, ``lobby`` while
in the lobby, ``result``, ``announced_at``) and a deadline's ``state``.

Columns hold plain strings for statuses and kinds (so that SQL reading the
database needs no Python), while rows hand back the ``StrEnum``s below
(``EnumText``); a ``StrEnum`` member *is* its string, so both compare equal.

Every timestamp is stored and returned as an aware UTC datetime
(``UTCDateTime``), whatever the backend does with time zones.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

# Column types and helpers live beside the tables; re-exported because callers import them from here.
from storage.columns import EnumText as EnumText
from storage.columns import UTCDateTime as UTCDateTime
from storage.columns import inserted_id as inserted_id
from storage.columns import table_of as table_of
from storage.columns import utcnow as utcnow


class GameStatus(StrEnum):
    LOBBY = "lobby"
    RUNNING = "running"
    FINISHED = "finished"
    ABORTED = "aborted"
    BROKEN = "broken"  # its log no longer replays (an engine change, a hand edit); see status_reason


ENDED: tuple[GameStatus, ...] = (GameStatus.FINISHED, GameStatus.ABORTED)
"""Statuses of a game that is over (its result, if any, is saved). A BROKEN game is not among
them: it did not end, its log stopped replaying (``Store.mark_broken``)."""


class SeatKind(StrEnum):
    HUMAN = "human"
    AI = "ai"


class ActionSource(StrEnum):
    """Who or what produced an action: the seat's own player, or a stand-in."""

    HUMAN = "human"
    AI = "ai"
    TIMEOUT = "timeout"  # the rules' neutral action for an absent seat
    FALLBACK = "fallback"  # an agent failed; its fallback answer was used
    TAKEOVER = "takeover"  # someone else (usually an AI) played the seat's turn


class AgentOperation(StrEnum):
    GENERATE = "generate"
    SCORE = "score"
    EMBED = "embed"
    NONE = "none"  # agents that call no model (random, scripted)


class DeadlineState(StrEnum):
    PENDING = "pending"
    DONE = "done"
    CANCELLED = "cancelled"


def _ts(*, nullable: bool = False, index: bool = False) -> Any:
    if nullable:
        return Field(default=None, sa_type=UTCDateTime, nullable=True, index=index)
    return Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False, index=index)


def _json(*, nullable: bool = False, default_factory: Any = dict) -> Any:
    if nullable:
        return Field(default=None, sa_type=sa.JSON, nullable=True)
    return Field(default_factory=default_factory, sa_type=sa.JSON, nullable=False)


def _game_fk(*, nullable: bool = False, primary_key: bool = False) -> Any:
    return Field(
        default=None if nullable else ...,
        foreign_key="games.id",
        nullable=nullable,
        primary_key=primary_key,
        index=not primary_key,
    )


class GameRow(SQLModel, table=True):
    """One game from lobby to result. ``lobby`` holds the pre-start roster and options."""

    __tablename__ = "games"
    __table_args__ = (
        sa.Index("ix_games_platform_place_status", "platform", "place", "status"),
        sa.Index("ix_games_tenant_status", "tenant", "status"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game: str = Field(index=True)
    variant: str = ""
    config: dict[str, Any] = _json()
    # Seeds are drawn at start; BigInteger so any signed 64-bit seed fits on every backend.
    seed: int | None = Field(default=None, sa_type=sa.BigInteger, nullable=True)
    platform: str
    place: str
    place_name: str = ""
    host: str
    status: GameStatus = Field(default=GameStatus.LOBBY, sa_type=EnumText(GameStatus), index=True)
    lobby: dict[str, Any] = _json()
    created_at: datetime = _ts(index=True)
    started_at: datetime | None = _ts(nullable=True)
    finished_at: datetime | None = _ts(nullable=True)
    result: dict[str, Any] | None = _json(nullable=True)
    announced_at: datetime | None = _ts(nullable=True)
    rules_version: str = ""
    # "discord:<guild id>", "slack:<team id>", "console"; "" for games from before tenants.
    tenant: str = Field(default="", sa_column_kwargs={"server_default": ""})
    status_reason: str | None = Field(default=None, sa_type=sa.Text, nullable=True)  # why it is broken


class SeatRow(SQLModel, table=True):
    """A seat of a started game; the roster is frozen when the game starts."""

    __tablename__ = "seats"

    game_id: int = _game_fk(primary_key=True)
    seat: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    kind: SeatKind = Field(sa_type=EnumText(SeatKind))
    user_key: str | None = Field(default=None, index=True)
    display_name: str = ""
    agent_spec: str | None = None
    joined_at: datetime = _ts()


class ActionRow(SQLModel, table=True):
    """One action, numbered 1.. within its game. (game_id, seq) is the key, hence unique."""

    __tablename__ = "actions"

    game_id: int = _game_fk(primary_key=True)
    seq: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    seat: int
    kind: str
    value: list[str] = _json(default_factory=list)
    source: ActionSource = Field(sa_type=EnumText(ActionSource))
    actor: str
    inbound_id: str | None = None
    created_at: datetime = _ts()


class EventRow(SQLModel, table=True):
    """One event with its audience, numbered 1.. within its game; the deal's events have no action."""

    __tablename__ = "events"

    game_id: int = _game_fk(primary_key=True)
    seq: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    action_seq: int | None = None
    kind: str
    data: dict[str, Any] = _json()
    # "public" or a sorted list of seat numbers (games.base.Audience.to_json()).
    audience: Any = Field(default="public", sa_type=sa.JSON, nullable=False)
    created_at: datetime = _ts()


class AgentCallRow(SQLModel, table=True):
    """One call an AI seat made to a model (or none, for model-free agents), with what came back."""

    __tablename__ = "agent_calls"
    __table_args__ = (sa.Index("ix_agent_calls_game_action", "game_id", "action_seq"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", nullable=False)
    seat: int
    action_seq: int | None = None
    agent_spec: str
    model_id: str = ""
    operation: AgentOperation = Field(default=AgentOperation.NONE, sa_type=EnumText(AgentOperation))
    prompt: Any = _json()
    raw_output: str = Field(default="", sa_type=sa.Text)
    label_probs: Any = _json(nullable=True)
    latency_ms: float = 0.0
    retries: int = 0
    fallback: bool = False
    error: str | None = Field(default=None, sa_type=sa.Text, nullable=True)
    created_at: datetime = _ts()


class InboundRow(SQLModel, table=True):
    """A platform event already handled ("platform:event_id"): the deduplication record."""

    __tablename__ = "inbound"

    key: str = Field(primary_key=True)
    game_id: int | None = _game_fk(nullable=True)
    created_at: datetime = _ts()


class DeadlineRow(SQLModel, table=True):
    """When a human seat's turn runs out. ``state`` is the one mutable column here."""

    __tablename__ = "deadlines"
    __table_args__ = (sa.Index("ix_deadlines_state_due", "state", "due_at"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = _game_fk()
    seat: int
    due_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    state: DeadlineState = Field(default=DeadlineState.PENDING, sa_type=EnumText(DeadlineState))
    created_at: datetime = _ts()


class EvaluationRow(SQLModel, table=True):
    """A score of a logged move by an evaluator (SNEAK utility and leakage; storage/evaluations.py).

    One row per (game, action, part, evaluator, settings): re-running a scoring
    adds only what is new. ``part`` tells apart several messages of one action
    (Decrypto's three hints). ``settings`` is a digest of the evaluator's
    settings (orderings, seed, prompt version, decoy strategy), spelled out in
    ``settings_json``. Probabilities are in the stored option order: the ally's
    over ``[message, *decoys]``, the chameleon's over ``instance.candidates``.
    The metrics are in [0, 1] (reports show them x100) and null when the
    judgement failed (``error`` says why); ``metric`` is free-form extra data.
    """

    __tablename__ = "evaluations"
    __table_args__ = (
        sa.UniqueConstraint("game_id", "action_seq", "part", "evaluator", "settings", name="uq_evaluations_move"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = _game_fk()
    action_seq: int
    part: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    game: str = Field(default="", sa_column_kwargs={"server_default": ""})
    evaluator: str
    settings: str = Field(default="", sa_column_kwargs={"server_default": ""})
    settings_json: dict[str, Any] = Field(default_factory=dict, sa_type=sa.JSON, nullable=False,
                                          sa_column_kwargs={"server_default": "{}"})
    instance: dict[str, Any] = Field(default_factory=dict, sa_type=sa.JSON, nullable=False,
                                     sa_column_kwargs={"server_default": "{}"})
    decoys: list[str] = Field(default_factory=list, sa_type=sa.JSON, nullable=False,
                              sa_column_kwargs={"server_default": "[]"})
    perm_seed: int = Field(default=0, sa_type=sa.BigInteger, nullable=False, sa_column_kwargs={"server_default": "0"})
    ally_probs: list[float] | None = _json(nullable=True)
    cham_probs: list[float] | None = _json(nullable=True)
    utility: float | None = None
    leakage: float | None = None
    soft: float | None = None
    binary: float | None = None
    error: str | None = Field(default=None, sa_type=sa.Text, nullable=True)
    metric: dict[str, Any] = _json()
    created_at: datetime = _ts()


# --------------------------------------------------------------------------- tournaments


class TournamentStatus(StrEnum):
    PLANNED = "planned"  # created, not run yet (or waiting for its schedule)
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class MatchStatus(StrEnum):
    PLANNED = "planned"
    RUNNING = "running"  # a game was opened for it (game_id set)
    FINISHED = "finished"
    FAILED = "failed"  # every attempt broke or stalled; recorded, never blocks the tournament


class TournamentRow(SQLModel, table=True):
    """A tournament: which game, who plays (configured agent names only), in which format, when."""

    __tablename__ = "tournaments"

    id: int | None = Field(default=None, primary_key=True)
    tenant: str = Field(index=True)
    name: str = ""
    game: str
    variant: str = ""
    options: dict[str, Any] = _json()
    entrants: list[str] = _json(default_factory=list)
    format: str
    seats: int
    games_per_pairing: int = 1
    duplicate: bool = False
    spectate: bool = False  # post each game to the place as a spectated table
    seed: int = Field(sa_type=sa.BigInteger)
    schedule: str | None = None  # a crontab expression; None = run on demand
    concurrency: int | None = None  # None = sized to the machine when it runs
    status: str = Field(default=TournamentStatus.PLANNED.value, index=True)
    # Where the live status message and the leaderboard go ("platform", "place" key) and the status message.
    platform: str = ""
    place: str = ""
    status_message: dict[str, Any] | None = _json(nullable=True)
    created_by: str = ""
    created_at: datetime = _ts()
    started_at: datetime | None = _ts(nullable=True)
    finished_at: datetime | None = _ts(nullable=True)


class TournamentMatchRow(SQLModel, table=True):
    """One planned game of a tournament: who sits in each seat, with which seed; the game once played."""

    __tablename__ = "tournament_matches"
    __table_args__ = (sa.UniqueConstraint("tournament_id", "idx", name="uq_tournament_matches_idx"),)

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: int = Field(foreign_key="tournaments.id", nullable=False, index=True)
    idx: int
    seats: list[str] = _json(default_factory=list)  # entrant name per seat, seat order kept
    seed: int = Field(sa_type=sa.BigInteger)
    deal_group: int  # matches sharing a deal (duplicates) share a group; the bootstrap resamples groups
    status: str = MatchStatus.PLANNED.value
    game_id: int | None = _game_fk(nullable=True)
    attempts: int = 0
    roles: list[str] | None = _json(nullable=True)  # role per seat once finished
    # Each seat's outcome once finished (seat, role, side, won, the game's numbers), written with
    # the finish: standings read these, not the replayed game. None for matches finished before.
    outcomes: list[dict[str, Any]] | None = _json(nullable=True)
    error: str | None = Field(default=None, sa_type=sa.Text, nullable=True)
    started_at: datetime | None = _ts(nullable=True)
    finished_at: datetime | None = _ts(nullable=True)


class TournamentRatingRow(SQLModel, table=True):
    """An entrant's standing after a tournament: rating, bootstrap interval, games, metrics per role."""

    __tablename__ = "tournament_ratings"

    tournament_id: int = Field(foreign_key="tournaments.id", primary_key=True)
    entrant: str = Field(primary_key=True)
    game: str
    variant: str = ""
    rank: int
    mu: float
    sigma: float
    lo: float
    hi: float
    games: int
    metrics: dict[str, Any] = _json()
    updated_at: datetime = _ts()


class SchedulerLeaseRow(SQLModel, table=True):
    """Who runs the scheduler of this database, until when: one scheduler per database."""

    __tablename__ = "scheduler_leases"

    name: str = Field(primary_key=True)
    owner: str
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)


class TableLeaseRow(SQLModel, table=True):
    """Which bot process drives a running game, until when, and the fencing token of its hold.

    The token grows by one each time the game changes hands; a turn is logged only under the
    current token, so a process that lost the game (paused past its lease) cannot log a turn."""

    __tablename__ = "table_leases"

    game_id: int = _game_fk(primary_key=True)
    owner: str = Field(index=True)
    token: int = Field(sa_type=sa.BigInteger)
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)


class ProcessRow(SQLModel, table=True):
    """A live bot process among several on one database: what it serves (the tenants whose
    commands the platforms send to it, as ``bot.core.serving.Served`` writes them), renewed with
    its leases and expiring with them, on the database's clock. A process that took over a table
    of a tenant another live process serves hands the table back to it."""

    __tablename__ = "bot_processes"

    owner: str = Field(primary_key=True)
    serves: dict[str, Any] = _json()
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)


class OutboxRow(SQLModel, table=True):
    """A message of a turn, written in the turn's own (fenced) transaction and sent from here:
    at least once, keyed by ``id`` (made by the bot, so a sender knows it before the commit);
    ``sent_at`` marks it sent. ``seat`` is None for the table's channel, else that seat's
    private message (which may hold the seat's secrets, like the events it renders)."""

    __tablename__ = "outbox"

    id: str = Field(primary_key=True)
    game_id: int = _game_fk()
    action_seq: int = Field(sa_type=sa.Integer, nullable=False)
    pos: int = Field(sa_type=sa.Integer, nullable=False)  # order among the messages of one turn
    seat: int | None = Field(default=None, nullable=True)
    body: dict[str, Any] = _json()
    created_at: datetime = _ts()
    sent_at: datetime | None = _ts(nullable=True)


# --------------------------------------------------------------------------- the human study (storage/annotations.py)


class AnnotationItemRow(SQLModel, table=True):
    """A question of the SNEAK human study (models/eval/human.py ``Item``, as JSON): a logged clue's (its game,
    tenant and author; its players never judge it) or a benchmark instance's (no game, every tenant)."""

    __tablename__ = "annotation_items"
    # A member's next fresh item is an index range (storage/annotations.py ``serve``): by tenant, task, key.
    __table_args__ = (sa.Index("ix_annotation_items_tenant_task_key", "tenant", "task", "key"),)

    key: str = Field(primary_key=True)
    task: str
    source: str = "log"
    game_id: int | None = _game_fk(nullable=True)
    tenant: str = Field(default="", index=True)
    item: dict[str, Any] = _json()
    created_at: datetime = _ts()
    # The member whose seat made the logged move (null: an AI seat's, or no game): their clue is shown only
    # while their words may go into research (``serve``); an erasure unlinks it as it does their seats.
    author: str | None = Field(default=None, nullable=True)


class AnnotationRow(SQLModel, table=True):
    """A member's answer to an item: served (``choice`` null) until answered; one per (item, member)."""

    __tablename__ = "annotations"
    __table_args__ = (sa.UniqueConstraint("item_key", "annotator", name="uq_annotations_item_annotator"),)

    id: int | None = Field(default=None, primary_key=True)
    item_key: str = Field(foreign_key="annotation_items.key", index=True)
    annotator: str = Field(index=True)
    tenant: str = ""
    choice: int | None = None
    correct: bool | None = None
    served_at: datetime = _ts()
    answered_at: datetime | None = _ts(nullable=True)


# --------------------------------------------------------------------------- people's choices and their rights (storage/people.py)


class MemberRow(SQLModel, table=True):
    """A member's own choices: whether their words may go into research exports (None: never said)."""

    __tablename__ = "members"

    user_key: str = Field(primary_key=True)
    research: bool | None = Field(default=None, nullable=True)
    updated_at: datetime = _ts()


class PrivacyNoticeRow(SQLModel, table=True):
    """The privacy notice was shown to this member in this tenant (it is shown once)."""

    __tablename__ = "privacy_notices"

    tenant: str = Field(primary_key=True)
    user_key: str = Field(primary_key=True, index=True)
    shown_at: datetime = _ts()


class PendingErasureRow(SQLModel, table=True):
    """A member asked to be forgotten while a game of theirs had not ended: erased when it ends."""

    __tablename__ = "pending_erasures"

    user_key: str = Field(primary_key=True)
    requested_by: str = ""
    requested_at: datetime = _ts()


class TextExpiryRow(SQLModel, table=True):
    """A finished game whose free text and private messages the retention job removed, and when."""

    __tablename__ = "text_expiry"

    game_id: int = _game_fk(primary_key=True)
    expired_at: datetime = _ts()


class PrivacyAuditRow(SQLModel, table=True):
    """One export, data request or erasure: who, when, what scope, how many rows; never content.
    ``subject`` is the member concerned (unlinked when that member is erased)."""

    __tablename__ = "privacy_audit"

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = _ts(index=True)
    actor: str
    action: str
    scope: str = ""
    subject: str | None = Field(default=None, nullable=True, index=True)
    rows: int = 0


metadata = SQLModel.metadata
"""The metadata the migrations must produce (checked by tests/storage/test_migrations.py)."""

ALL_TABLES: tuple[type[SQLModel], ...] = (
    GameRow,
    SeatRow,
    ActionRow,
    EventRow,
    AgentCallRow,
    InboundRow,
    DeadlineRow,
    EvaluationRow,
    TournamentRow,
    TournamentMatchRow,
    TournamentRatingRow,
    SchedulerLeaseRow,
    TableLeaseRow,
    OutboxRow,
    AnnotationItemRow,
    AnnotationRow,
    ProcessRow,
    MemberRow,
    PrivacyNoticeRow,
    PendingErasureRow,
    PrivacyAuditRow,
    TextExpiryRow,
)
