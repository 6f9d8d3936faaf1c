"""The console's typed commands: one table, one entry per verb, read by ``help`` and by every prompt.

The console is a full chat client at one keyboard: the verbs and the service's replies are the
chat platforms' (``play``, ``join``, ``leave``, ``ai``, ``deadline``, ``start``, ``abort``,
``status``, ``list``, ``rules``, ``show``, ``export``, ``help``), plus what only a keyboard needs
(``quit``). A new verb is one decorated function below (`command`); ``help`` lists it in table
order, and the prompts accept it: bare at the game menu, at "Play again?" and at a choice, and
written ``/verb`` at a text prompt, where a bare word is an answer (only verbs marked ``bare``,
never a plausible answer, are taken bare there too).

Game names are forgiving (``just one``, ``justone``, ``JustOne``, an alias); a name that is no game
gets the nearest one (difflib). ``play GAME as ROLE`` seats the player in a role or team the game
shows at the deal (``as encoder``, ``as red spymaster``): the console picks a deal seed whose seating
gives it them, since roles follow seats and seats are drawn from the seed.
"""

from __future__ import annotations

import difflib
import re
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bot.core import intake
from bot.core.messages import CommandKind, Reply, UserRef
from bot.core.ports import ServicePort, SneakPort
from bot.core.tables import seating
from games.catalog import descriptors, find
from games.descriptor import GameDescriptor
from games.text import typed_number
from models.agent_names import canonical


class Screen(Protocol):
    def write(self, text: str) -> None: ...


class Console(Protocol):
    """What a verb uses of the console (``bot.console.app.ConsoleUI``, which imports this module)."""

    users: list[UserRef]
    data_dir: Path  # exports go here, beside the logs

    @property
    def p(self) -> Screen: ...

    @property
    def service(self) -> ServicePort: ...

    @property
    def sneak(self) -> SneakPort | None: ...

    def origin(self, user: UserRef | None = None) -> intake.Origin: ...

    async def send(self, kind: CommandKind, user: UserRef | None = None, *, quiet: bool = False, **args: object) -> Reply: ...

    async def show(self, user: UserRef | None) -> None: ...

    def default_agent(self) -> str: ...

    def help(self) -> str: ...

    async def join(self, name: str) -> None: ...

    async def open_table(self, game: str, variant: str | None, options: dict[str, Any], *, seats: int | None = None,
                         role: Sequence[str] = (), deadline_s: float | None = None) -> None: ...

    async def privacy_command(self, verb: str, args: list[str], user: UserRef | None) -> None: ...


# A handler: the console, the words after the verb, the player whose turn it is (None between turns).
# It returns False to leave the console.
Handler = Callable[[Console, list[str], UserRef | None], Awaitable[bool]]

TENANT = "console"  # bot.console.app.TENANT (not imported: app imports this module)
TABLE_KEY = "table"  # bot.console.app.TABLE's key, likewise
ROLE_TRIES = 4000  # seeds tried for `play GAME as ROLE`; a role held by one seat of five is found in a handful


@dataclass(frozen=True, slots=True)
class ConsoleCommand:
    """One verb: how it is written, what it does (``{games}``/``{agents}`` filled in by ``help``), its handler."""

    name: str
    usage: str
    summary: str
    run: Handler
    bare: bool = False  # also taken bare at a text prompt (the word is never an answer there)


COMMANDS: dict[str, ConsoleCommand] = {}
ALIASES: dict[str, str] = {}


def command(name: str, usage: str, summary: str, *, aliases: Sequence[str] = (), bare: bool = False) -> Callable[[Handler], Handler]:
    """Register a verb in the console's table (help lists verbs in the order they are registered)."""

    def register(fn: Handler) -> Handler:
        COMMANDS[name] = ConsoleCommand(name, usage, summary, fn, bare)
        for a in aliases:
            ALIASES[a] = name
        return fn

    return register


def lookup(verb: str) -> ConsoleCommand | None:
    verb = verb.lower()
    return COMMANDS.get(ALIASES.get(verb, verb))


FOOTER = """When it is your turn, answer with the option's number (or the option itself, e.g. 3-4-2),
or type your text (several answers separated by ';'). At a text prompt, write a command with a
slash (/help, /status, /list) so that it is not taken for your answer."""


def help_text(games: str, agents: str) -> str:
    width = max(len(c.usage) for c in COMMANDS.values()) + 2
    lines = ["Commands:", *(f"  {c.usage.ljust(width)}{c.summary.format(games=games, agents=agents)}" for c in COMMANDS.values())]
    return "\n".join([*lines, FOOTER])


# ------------------------------------------------------------------ game names


def _fold(name: str) -> str:
    return re.sub(r"[\s_\-'’]+", "", name.casefold())


def _names() -> dict[str, GameDescriptor]:
    out: dict[str, GameDescriptor] = {}
    for d in descriptors():
        for n in (d.id, d.title, *d.aliases):
            out.setdefault(_fold(n), d)
    return out


def resolve_game(words: Sequence[str]) -> tuple[GameDescriptor | None, int]:
    """The game the first words name (``just one``, ``JustOne``, an alias) and how many words it took."""
    names = _names()
    for k in range(min(len(words), 3), 0, -1):
        d = names.get(_fold("".join(words[:k])))
        if d is not None:
            return d, k
    return None, 0


def suggestion(typed: str) -> str:
    """One sentence for a name that is no game, with the nearest game's name where one is close."""
    names = _names()
    close = difflib.get_close_matches(_fold(typed), list(names), n=1, cutoff=0.6)
    games = ", ".join(d.id for d in descriptors())
    if close:
        return f"There is no game called {typed[:40]!r}. Did you mean {names[close[0]].id} ({names[close[0]].title})? Games: {games}."
    return f"There is no game called {typed[:40]!r}. Games: {games}."


# ------------------------------------------------------------------ the verbs


@command("play", "play GAME [VARIANT] [as ROLE] [seats=N] [key=value ...]",
         "open a table and start it ({games}); e.g. play chameleon seats=5, play decrypto as encoder",
         aliases=("new", "create"))
async def _play(ui: Console, args: list[str], user: UserRef | None) -> bool:
    if not args:
        ui.p.write("! Which game? play GAME (" + ", ".join(d.id for d in descriptors()) + ").")
        return True
    role: list[str] = []
    if "as" in (a.lower() for a in args):
        at = [a.lower() for a in args].index("as")
        role = [a for a in args[at + 1:] if "=" not in a]
        args = args[:at] + [a for a in args[at + 1:] if "=" in a]
    positional = [a for a in args if "=" not in a]
    d, used = resolve_game(positional)
    if d is None:
        ui.p.write("! " + suggestion(" ".join(positional)))
        return True
    rest = positional[used:]
    if len(rest) > 1:
        ui.p.write(f"! Unexpected {rest[1]!r}: write play GAME [VARIANT] [as ROLE] [key=value ...].")
        return True
    variant = rest[0] if rest else None
    try:
        options = intake.parse_options(a for a in args if "=" in a)
    except intake.IntakeError as e:
        ui.p.write(f"! {e}")
        return True
    seats = options.pop("seats", None)
    deadline = options.pop("deadline", None)
    if seats is not None and (not isinstance(seats, int) or isinstance(seats, bool)):
        ui.p.write(f"! seats is a whole number, not {str(seats)[:20]!r}.")
        return True
    if deadline is not None and (not isinstance(deadline, int | float) or isinstance(deadline, bool)):
        ui.p.write(f"! deadline is a number of seconds, not {str(deadline)[:20]!r}.")
        return True
    await ui.open_table(d.id, variant, options, seats=seats, role=role, deadline_s=deadline)
    return True


def role_seed(d: GameDescriptor, variant: str | None, options: dict[str, Any], seats: int, index: int,
              role: Sequence[str]) -> int | str:
    """A deal seed that seats lobby entry ``index`` in ``role`` (each word a role or a team the seat's
    view shows at the deal), or the sentence that says why none can."""
    engine = d.engine
    try:
        cfg = engine.make_config(variant, **options)
    except Exception as exc:  # noqa: BLE001 - the service refuses the same config with its own sentence
        return str(exc)
    wanted = {w.casefold() for w in role}
    roles: set[str] = set()
    teams: set[str] = set()
    draw = secrets.SystemRandom()
    for _ in range(ROLE_TRIES):
        seed = draw.getrandbits(62)
        seat = seating(seats, seed).index(index)
        state, _ = engine.new(cfg, seats, seed)
        view = engine.observe(state, seat).view
        role_, team = view.get("role"), view.get("team")
        roles |= {str(role_)} if role_ is not None else set()
        teams |= {str(team)} if team is not None else set()
        has = {str(v).casefold() for v in (role_, team) if v is not None}
        if wanted <= has:
            return seed
    if not roles and not teams:
        return f"In {d.title} nobody chooses a role: roles stay hidden until the game shows them."
    among = [f"a role ({', '.join(sorted(roles))})"] if roles else []
    among += [f"a team ({', '.join(sorted(teams))})"] if teams else []
    return (f"{d.title} ({cfg.variant}) with {seats} seats has no seat that is {' '.join(role)[:40]}; "
            f"choose {' or '.join(among)}, e.g. as {sorted(roles or teams)[0]}.")


@command("join", "join NAME", "(hot-seat) another human joins the next game at this keyboard")
async def _join(ui: Console, args: list[str], user: UserRef | None) -> bool:
    await ui.join(" ".join(args).strip())
    return True


@command("leave", "leave", "give up your seat at the open table")
async def _leave(ui: Console, args: list[str], user: UserRef | None) -> bool:
    await ui.send(CommandKind.LEAVE, user)
    return True


@command("ai", "ai [AGENT] [COUNT] | ai remove [AGENT]", "add (or remove) AI seats (agents: {agents})")
async def _ai(ui: Console, args: list[str], user: UserRef | None) -> bool:
    if args and args[0].lower() == "remove":
        if len(args) > 1:
            await ui.send(CommandKind.REMOVE_AI, user, agent=canonical(args[1]))
        else:
            await ui.send(CommandKind.REMOVE_AI, user)
        return True
    agent = canonical(next((a for a in args if not a.isdigit()), ui.default_agent()))
    if agent not in ui.service.agent_choices():
        ui.p.write(f"! Pick an AI player among: {', '.join(ui.service.agent_choices())}.")
        return True
    typed = next((a for a in args if a.isdigit()), "1")
    count = typed_number(typed)
    if count is None:
        ui.p.write(f"! The number of AI players is digits 0-9, not {typed[:20]!r}.")
        return True
    await ui.send(CommandKind.ADD_AI, user, agent=agent, count=count)
    return True


@command("deadline", "deadline SECONDS", "the turn deadline for people at this table (0 = none)")
async def _deadline(ui: Console, args: list[str], user: UserRef | None) -> bool:
    if not args:
        ui.p.write("! How many seconds? deadline SECONDS (0 = none)")
        return True
    await ui.send(CommandKind.SET_DEADLINE, user, seconds=args[0])
    return True


@command("start", "start", "start the open table")
async def _start(ui: Console, args: list[str], user: UserRef | None) -> bool:
    await ui.send(CommandKind.START, user)
    return True


@command("abort", "abort", "end the running game", bare=True)
async def _abort(ui: Console, args: list[str], user: UserRef | None) -> bool:
    await ui.send(CommandKind.ABORT, user)
    return True


@command("status", "status", "whose turn it is", bare=True)
async def _status(ui: Console, args: list[str], user: UserRef | None) -> bool:
    await ui.send(CommandKind.STATUS, user)
    return True


@command("list", "list", "the open tables here")
async def _list(ui: Console, args: list[str], user: UserRef | None) -> bool:
    await ui.send(CommandKind.LIST, user)
    return True


@command("rules", "rules [GAME] [VARIANT]", "how a game is played", bare=True)
async def _rules(ui: Console, args: list[str], user: UserRef | None) -> bool:
    if not args:
        await ui.send(CommandKind.RULES, user)
        return True
    d, used = resolve_game(args)
    if d is None:
        ui.p.write("! " + suggestion(" ".join(args)))
        return True
    rest = args[used:]
    await ui.send(CommandKind.RULES, user, game=d.id, variant=rest[0] if rest else None)
    return True


@command("show", "show", "your secrets and the table as you see it", bare=True)
async def _show(ui: Console, args: list[str], user: UserRef | None) -> bool:
    await ui.show(user)
    return True


@command("export", "export [jsonl|csv] [GAME] [since=YYYY-MM-DD]",
         "the game log (finished and aborted games) as a file in the data folder")
async def _export(ui: Console, args: list[str], user: UserRef | None) -> bool:
    fmt, game, since = "jsonl", None, None
    try:
        for w in args:
            if w.lower().startswith("since="):
                since = intake.parse_since(w.partition("=")[2])
            elif w.lower() in ("jsonl", "csv"):
                fmt = w.lower()
            else:
                d = find(w) or resolve_game([w])[0]
                if d is None:
                    ui.p.write("! " + suggestion(w))
                    return True
                game = d.id
    except intake.IntakeError as e:
        ui.p.write(f"! {e}")
        return True
    result = await ui.service.export(ui.origin(user).command(CommandKind.EXPORT), fmt, game, since)
    if isinstance(result, Reply):
        ui.p.write("! " + result.text)
        return True
    name, data = result
    folder = ui.data_dir / "exports"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    lines = data.count(b"\n") - (1 if fmt == "csv" and data else 0)
    ui.p.write(f"Exported {lines} {'row' if fmt == 'csv' else 'game'}(s) to {path}.")
    return True


@command("sneak", "sneak", "your SNEAK clue scores (utility, leakage) against the AI players")
async def _sneak(ui: Console, args: list[str], user: UserRef | None) -> bool:
    if ui.sneak is None:
        ui.p.write("! SNEAK does not run here.")
        return True
    ui.p.write(await ui.sneak.averages((user or ui.users[0]).key, TENANT))
    return True


@command("judge", "judge [N]", "the SNEAK human study: your next item, or N to answer it")
async def _judge(ui: Console, args: list[str], user: UserRef | None) -> bool:
    if ui.sneak is None:
        ui.p.write("! SNEAK does not run here.")
        return True
    # The console's one channel is its table; at the console the answer is `judge N`.
    ui.p.write(await ui.sneak.judge((user or ui.users[0]).key, TENANT, args[0] if args else None,
                                    channels=(TABLE_KEY,), command="judge N"))
    return True


# A member's data and choices (bot/core/privacy.py), answered by the console's privacy desk.
PRIVACY_VERBS = (
    ("privacy", "privacy", "what is stored about you, for how long, and how to get or erase it"),
    ("research", "research on|off", "whether your words may go into research exports"),
    ("mydata", "mydata", "a file of everything stored about you"),
    ("forget-me", "forget-me [confirm]", "erase your name and words from every game"),
    ("audit", "audit", "the record of exports, data requests and erasures"),
)


def _privacy_verb(verb: str) -> Handler:
    async def run(ui: Console, args: list[str], user: UserRef | None) -> bool:
        await ui.privacy_command(verb, args, user)
        return True

    return run


for _verb, _usage, _summary in PRIVACY_VERBS:
    command(_verb, _usage, _summary)(_privacy_verb(_verb))


@command("help", "help", "this list", aliases=("?",), bare=True)
async def _help(ui: Console, args: list[str], user: UserRef | None) -> bool:
    ui.p.write(ui.help())
    return True


@command("quit", "quit", "leave the console (a running game waits for your next start)", aliases=("exit",), bare=True)
async def _quit(ui: Console, args: list[str], user: UserRef | None) -> bool:
    return False


def data_dir_of(database_url: str) -> Path:
    """The folder of the SQLite database (the working directory otherwise): the console's files go beside it."""
    if database_url.startswith("sqlite") and ":///" in database_url:
        db = database_url.split(":///", 1)[1]
        if db and db != ":memory:":
            return Path(db).expanduser().parent
    return Path(".")
