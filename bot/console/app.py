"""The local console: the same TableService behind a terminal, for newcomers and hot-seat play.

`make run` with no platform tokens lands here. A short menu picks a game, fills the
other seats with AI players and starts; the player's own secrets are shown to them
only. In hot-seat mode several humans share the keyboard: private messages wait
until their owner takes the keyboard, and the screen is cleared between seats.

A terminal is a game screen: logs go to a file (`keep_logs_off_screen`), lines typed
while no prompt is open are dropped, Ctrl-C leaves at once ("Bye.", exit code 0), and
inbound ids carry a random run id so a restarted console never repeats an old one (the
service would take a resumed move for a duplicate).
"""

from __future__ import annotations

import asyncio
import difflib
import itertools
import logging
import secrets
import signal
import sys
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from bot.console import commands
from bot.core import codec, intake
from bot.core.messages import Button, Command, CommandKind, MessageRef, Outgoing, Place, Reply, UserRef
from bot.core.ports import ServicePort, SneakPort
from bot.settings import Settings
from games.base import Board, Cell
from games.catalog import descriptors, find
from games.descriptor import GameDescriptor
from games.text import name_problem, person_name, typed_number

if TYPE_CHECKING:
    from bot.core.privacy import PrivacyDesk

PLATFORM = "console"
MAX_PLAYER_NAME = 40  # a seat's name on a board line
TENANT = "console"
TABLE = Place(PLATFORM, "table")
LOG_FILE = "console.log"
# Home, erase the screen, erase the scrollback (ESC[3J): in hot-seat the next player must not scroll
# up into the last one's secrets. The order is what `clear` writes (some terminals move an erased
# screen into the scrollback, so the scrollback goes last).
CLEAR = "\033[H\033[2J\033[3J"
PUBLIC_REDRAW = 60  # the latest public lines redrawn after a hot-seat clear (the card, the clues so far)


def game_menu() -> list[GameDescriptor]:
    """The games the console's menu offers, in their menu order (from the game descriptors)."""
    entries = [(d.menu.order, d.id, d) for d in descriptors() if d.menu is not None]
    return [d for _, _, d in sorted(entries, key=lambda e: (e[0], e[1]))]


class _TableView(Protocol):
    platform: str
    over: bool


class ConsoleService(ServicePort, Protocol):
    """The service port, plus the running tables (the console shows the menu only when none runs)."""

    @property
    def tables(self) -> Mapping[int, _TableView]: ...


class LineReader:
    """Lines from a text stream, read by a daemon thread so that Ctrl-C never waits for Enter
    (a thread in asyncio's executor would hold the exit until the blocking read returns)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self._thread: threading.Thread | None = None

    def _pump(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            try:
                line = self.stream.readline()
            except (OSError, ValueError):
                # The terminal hung up (EIO) or the stream was closed under us: that is the end of input,
                # as Ctrl-D is, not a traceback on the screen and a console waiting for a line forever.
                line = ""
            try:
                loop.call_soon_threadsafe(self.queue.put_nowait, line)
            except RuntimeError:
                return  # the loop is closed: we are exiting
            if line == "":
                return

    def drop_typed_ahead(self) -> None:
        """Forget lines typed while no prompt was open (they answered nothing on screen)."""
        while not self.queue.empty():
            line = self.queue.get_nowait()
            if line == "":
                self.queue.put_nowait(line)  # end of input stays the end
                return

    async def readline(self) -> str:
        if self._thread is None:
            self._thread = threading.Thread(target=self._pump, args=(asyncio.get_running_loop(),),
                                            name="console-stdin", daemon=True)
            self._thread.start()
        return await self.queue.get()


@dataclass
class ConsolePlatform:
    """Prints public messages; keeps private ones per user until their owner looks."""

    out: TextIO
    hotseat: bool = False
    name: str = PLATFORM
    private: dict[str, list[Outgoing]] = field(default_factory=lambda: defaultdict(list))
    pending: dict[str, Outgoing] = field(default_factory=dict)  # the latest prompt with controls, per user
    quiet_waiting: bool = True
    text_replies: bool = False  # the console answers prompts in place: no "reply here"
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    current: str | None = None  # the user at the keyboard
    public: list[str] = field(default_factory=list)  # this game's public lines, for the hot-seat redraw

    def write(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def clear(self) -> None:
        """Hot-seat: wipe the screen and its scrollback, then redraw only what everyone may see."""
        self.out.write(CLEAR)
        lines = [ln for text in self.public for ln in text.splitlines()][-PUBLIC_REDRAW:]
        if lines:
            self.write("The table so far (public):")
            self.write("\n".join(lines))
            self.write("")
        self.out.flush()

    async def post(self, place: Place, m: Outgoing) -> MessageRef:
        if m.text:
            text = m.text.replace("**", "")
            self.public.append(text)
            del self.public[:-PUBLIC_REDRAW]
            self.write(text)
        return MessageRef(PLATFORM, place.key, str(next(self._ids)))

    async def dm(self, user: UserRef, m: Outgoing) -> MessageRef:
        if m.has_controls:
            self.pending[user.key] = m
        else:
            self.private[user.key].append(m)
            if not self.hotseat or self.current == user.key:
                self.flush_private(user)
        return MessageRef(PLATFORM, f"dm:{user.key}", str(next(self._ids)))

    def flush_private(self, user: UserRef) -> None:
        for m in self.private.pop(user.key, []):
            who = f"only {user.name} sees" if self.hotseat else "only you see"
            self.write(f"  [{who}] " + m.text.replace("\n", "\n  "))

    async def edit(self, ref: MessageRef, m: Outgoing) -> None:
        return None  # a terminal scrolls; the lobby is reprinted on status

    async def open_thread(self, place: Place, title: str, anchor: MessageRef | None) -> Place:
        return place


def render_board(board: Board, numbers: Mapping[str, int] | None = None) -> str:
    """The grid: one row per line, the cells in aligned columns. A revealed cell shows its mark
    (``[R] bank``), a hidden one the number that picks it (``3) apple``) or what this seat privately
    knows of it (``(r) apple``, a spymaster's key); the score above, the legend below."""
    numbers = numbers or {}

    def cell(c: Cell) -> str:
        tag = f"[{c.mark}]" if c.mark else f"{numbers[c.word]})" if c.word in numbers else f"({c.known})" if c.known else ""
        return f"{tag:>4} {c.word}"

    texts = [cell(c) for c in board.cells]
    width = max((len(t) for t in texts), default=0) + 2
    rows = ["".join(t.ljust(width) for t in texts[i:i + board.columns]).rstrip()
            for i in range(0, len(texts), board.columns)]
    return "\n".join([board.score, *rows, *([board.legend] if board.legend else [])])


def option_numbers(m: Outgoing) -> dict[int, Button]:
    """The number that picks each option. On a board a cell keeps its place's number (1 to 25, row by
    row) for the whole game, so a word's number never changes as others are revealed; options that are
    no cell follow the board's last number. Without a board the options count from 1."""
    cells = [c.word for c in m.board.cells] if m.board else []
    place = {w: i for i, w in enumerate(cells, start=1)}
    out: dict[int, Button] = {}
    after = len(cells)
    for b in m.buttons:
        if b.label in place:
            out[place[b.label]] = b
        else:
            after += 1
            out[after] = b
    return out


def render_prompt(m: Outgoing) -> str:
    """A prompt with its options numbered; options that are cells of the board are numbered in the grid
    (so a board game's guess reads as the board, not as 25 lines), the others listed below it."""
    numbers = option_numbers(m)
    cells = {c.word for c in m.board.cells} if m.board else set()
    on_board = {b.label: n for n, b in numbers.items() if b.label in cells}
    lines = [render_board(m.board, on_board)] if m.board else []
    lines.append(m.text)
    for n, b in numbers.items():
        if b.label not in on_board:
            lines.append(f"  {n}) {b.label}")
    if m.form:
        lines.append(f"  ({m.form.hint}; fields: {'; '.join(m.form.fields)})")
    return "\n".join(lines)


def _pick(m: Outgoing, text: str) -> Button | str:
    numbers = option_numbers(m)
    shown = sorted(numbers)
    again = (f"Type a number from {shown[0]} to {shown[-1]}" if shown == list(range(shown[0], shown[-1] + 1))
             else "Type one of the numbers shown") + ", or the option itself."
    if text.isdigit():  # ASCII digits only pick an option: `१`, `１` and `²` are no number here
        number = typed_number(text)
        return again if number is None else numbers.get(number, again)
    wanted = text.casefold()

    def names(b: Button) -> set[str]:
        # The label, the option's id, and the first word of a label ("stop" for "Stop guessing").
        label = b.label.strip().casefold()
        return {label, b.id.rsplit(":", 1)[-1].casefold().lstrip("_"), label.split(" ", 1)[0] if " " in label else label}

    exact = [b for b in m.buttons if wanted in (b.label.strip().casefold(), b.id.rsplit(":", 1)[-1].casefold())]
    matches = exact or [b for b in m.buttons if wanted in names(b)]
    return matches[0] if len(matches) == 1 else again


def answer_command(origin: intake.Origin, m: Outgoing, text: str) -> Command | str:
    """Turn what was typed at a prompt into an ACT command, or a sentence saying what is wrong.

    A choice is answered by its number (`option_numbers`) or by the option itself (its label or id,
    e.g. ``3-4-2``, or a label's first word: ``stop``); a number that picks nothing is refused, never
    taken for a default."""
    text = text.strip()
    if m.buttons:
        chosen = _pick(m, text)
        if isinstance(chosen, str):
            return chosen
        cmd = intake.command_for(codec.decode(chosen.id), origin, agent="")
        assert cmd is not None
        return cmd
    assert m.form is not None
    parts = [p.strip() for p in text.split(";")] if len(m.form.fields) > 1 else [text]
    if len(parts) != len(m.form.fields):
        return f"Give {len(m.form.fields)} answers separated by ';'."
    cmd = intake.command_for(codec.decode(m.form.id), origin, agent="", values=parts)
    assert cmd is not None
    return cmd


def log_dir_for(settings: Settings) -> Path:
    """``.hushtable/logs`` beside the SQLite database (the working directory otherwise)."""
    url = settings.database_url
    if url.startswith("sqlite") and ":///" in url:
        db = url.split(":///", 1)[1]
        if db and db != ":memory:":
            return Path(db).expanduser().parent / ".hushtable" / "logs"
    return Path(".hushtable") / "logs"


def _is_terminal_handler(h: logging.Handler) -> bool:
    stream = getattr(h, "stream", None)
    if not isinstance(h, logging.StreamHandler) or isinstance(h, logging.FileHandler):
        return False
    return stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__) or bool(getattr(stream, "isatty", lambda: False)())


def keep_logs_off_screen(log_dir: Path, settings: Settings | None = None) -> Path:
    """Send every log record to ``log_dir/console.log`` and none to the terminal: a warning
    printed between game lines has told players things they must not see. The file gets the
    bot's one masking step (passwords, credentials, the secret words of running tables) and,
    with ``settings``, their log level (``HUSHTABLE_LOG_LEVEL=DEBUG`` reaches this file too)."""
    loggers = [logging.getLogger(), *(lg for lg in logging.root.manager.loggerDict.values() if isinstance(lg, logging.Logger))]
    for lg in loggers:
        for h in list(lg.handlers):
            if _is_terminal_handler(h):
                lg.removeHandler(h)
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / LOG_FILE
    root = logging.getLogger()
    if not any(isinstance(h, logging.FileHandler) for h in root.handlers):
        from bot.ops.logs import TEXT_FORMAT, LibraryBodies, Masked, Redact, cap_library_loggers, credentials

        handler = logging.FileHandler(path, encoding="utf-8")
        handler.setFormatter(Masked(logging.Formatter(TEXT_FORMAT)))
        handler.addFilter(LibraryBodies())  # no library writes a message body here either
        handler.addFilter(Redact(credentials(settings)))
        root.addHandler(handler)  # also keeps logging.lastResort (stderr) from ever firing
        if settings is not None:
            root.setLevel(settings.log_level)
            cap_library_loggers(settings.log_level)
        logging.captureWarnings(True)  # warnings.warn goes to the file, never onto the game screen
    return path


class ConsoleUI:
    def __init__(self, service: ConsoleService, platform: ConsolePlatform, settings: Settings, *,
                 reader: LineReader | None = None, hotseat: bool = False, sneak: SneakPort | None = None,
                 privacy: PrivacyDesk | None = None) -> None:
        self.service = service
        self.sneak = sneak  # the SNEAK service, when it runs: the `sneak` and `judge` commands
        self.privacy = privacy  # the members' data commands (bot/core/privacy.py)
        self.p = platform
        self.settings = settings
        self.hotseat = hotseat
        self.users: list[UserRef] = [UserRef(PLATFORM, "you", "You")]
        self.reader = reader or LineReader(sys.stdin)
        # Unique across processes: a resumed console must not repeat the ids of the last run.
        self.run_id = secrets.token_hex(4)
        self._warned_warmup = False
        self._ids = itertools.count(1)
        self.data_dir = commands.data_dir_of(settings.database_url) / ".hushtable"  # exports go beside the logs

    def origin(self, user: UserRef | None = None) -> intake.Origin:
        # The console is the operator's own terminal: whoever sits there administers it.
        return intake.Origin(user or self.users[0], TABLE, TENANT, is_admin=True,
                             inbound_id=f"console-{self.run_id}-{next(self._ids)}")

    async def readline(self, prompt: str = "> ") -> str:
        self.reader.drop_typed_ahead()
        self.p.out.write(prompt)
        self.p.out.flush()
        line = await self.reader.readline()
        if line == "":
            raise EOFError
        return line.rstrip("\n")

    async def send(self, kind: CommandKind, user: UserRef | None = None, *, quiet: bool = False, **args: object) -> Reply:
        """The command for ``user``; its reply printed (``quiet``: only a refusal)."""
        reply = await self.service.handle(self.origin(user).command(kind, dict(args)))
        if quiet and reply.ok and not reply.duplicate:
            return reply
        if reply.text and not (kind is CommandKind.ACT and reply.ok and not reply.duplicate):
            self.p.write(("! " if not reply.ok or reply.duplicate else "") + reply.text)
        return reply

    async def show(self, user: UserRef | None) -> None:
        """``show``: the player's secrets and the table as they see it, privately. In the hot seat only the
        player whose turn it is may ask (the screen is shared between turns)."""
        if user is None and self.hotseat:
            self.p.write("! In the hot seat, type /show during your turn: between turns everyone sees the screen.")
            return
        who = user or self.users[0]
        running = [gid for gid, t in self.service.tables.items() if t.platform == PLATFORM and not t.over]
        if not running:
            self.p.write("! No game is running; start one with play GAME.")
            return
        reply = await self.service.handle(self.origin(who).command(CommandKind.SHOW, {"game_id": running[-1]}))
        if not reply.ok:
            self.p.write("! " + (reply.text or "Nothing to show."))
        elif reply.text:
            self.p.private[who.key].append(Outgoing(reply.text))
            self.p.flush_private(who)

    def game_running(self) -> bool:
        return any(t.platform == PLATFORM and not t.over for t in self.service.tables.values())

    def default_agent(self) -> str:
        return intake.default_agent(self.service.agent_choices(), self.settings.default_agent)

    def help(self) -> str:
        agents = ", ".join(self.service.agent_choices()) or self.settings.default_agent
        return commands.help_text(", ".join(d.id for d in game_menu()), agents)

    async def join(self, name: str) -> None:
        """``join NAME``: in the hot seat, another human at this keyboard (at the open table, else from the
        next game on). Anywhere else it is refused and changes nothing: one screen cannot keep two players'
        secrets apart outside the hot-seat flow, which clears the screen between seats."""
        if not self.hotseat:
            self.p.write("! join adds a player at this keyboard only in hot-seat mode (hushtable run --hotseat), "
                         "where the screen is cleared between seats. Here you play alone against AI players.")
            return
        if not name:
            self.p.write("! Who joins? join NAME")
            return
        problem = name_problem(name, "A player's name", MAX_PLAYER_NAME)
        if problem is not None:
            self.p.write(f"! {problem}")
            return
        name = person_name(name, MAX_PLAYER_NAME)  # fullwidth ａｄａ is ada
        if any(u.name.casefold() == name.casefold() for u in self.users):
            self.p.write(f"! {name[:32]} already plays at this keyboard.")
            return
        user = UserRef(PLATFORM, f"p{len(self.users) + 1}", name)
        if self.game_running():
            self.p.write("! A game is under way: join after it ends, for the next one.")
            return
        lobby = await self.service.handle(self.origin(user).command(CommandKind.JOIN, {}))
        self.users.append(user)
        self.p.write(lobby.text if lobby.ok else f"{user.name} joins the next game at this keyboard.")

    async def run(self) -> None:
        self.p.write("Welcome to Hushtable: word games of hidden information, against AI players.")
        try:
            if self.hotseat:
                await self.gather_players()
            else:
                name = (await self.readline("Your name (Enter for Player): ")).strip()[:32] or "Player"
                self.users = [UserRef(PLATFORM, "you", name)]
            if self.game_running():
                await self.resume()
            else:
                await self.quick_start()
            while True:
                await self.play_until_quiet()
                if not self.game_running():
                    again = (await self.readline("Play again? (Enter for the menu, or type a command) ")).strip()
                    if not again:
                        await self.quick_start()
                        continue
                    if not await self.command(again):
                        break
                    continue
                line = await self.readline()
                if not await self.command(line):
                    break
        except (EOFError, KeyboardInterrupt):
            pass
        self.p.write("Bye.")

    async def resume(self) -> None:
        """A game from the last run is still on: show each player their secrets, then carry on."""
        for gid, t in self.service.tables.items():
            if t.platform == PLATFORM and not t.over:
                self.p.write(f"Game #{gid} resumes where it stopped.")
                for user in self.users:
                    reply = await self.service.handle(self.origin(user).command(CommandKind.SHOW, {"game_id": gid}))
                    if reply.ok and reply.text:
                        self.p.private[user.key].append(Outgoing(reply.text))

    async def gather_players(self) -> None:
        raw = await self.readline("Hot-seat: names of the human players, separated by commas: ")
        names = [n.strip() for n in raw.split(",") if n.strip()] or ["You"]
        self.users = [UserRef(PLATFORM, f"p{i + 1}", n) for i, n in enumerate(names)]

    async def quick_start(self) -> None:
        self.p.write("Pick a game:")
        menu = game_menu()
        for i, d in enumerate(menu, start=1):
            self.p.write(f"  {i}) {d.title}: {d.blurb}")
        self.p.write("  or press Enter for the command line (type help).")
        choice = (await self.readline("game> ")).strip()
        if not choice:
            self.p.write(self.help())
            return
        if choice.isdigit():
            number = typed_number(choice)
            if number is None or not 1 <= number <= len(menu):
                self.p.write(f"! Type a number from 1 to {len(menu)}, a game's name, or a command (help).")
                return
            game = menu[number - 1].id
        else:
            words = choice.split()
            named, used = commands.resolve_game(words)
            if named is not None and used == len(words):  # a game's name alone: that game, as its number would
                game = named.id
            else:
                if not await self.command(choice):
                    raise EOFError  # quit at the menu leaves like end of input
                return
        variants = list(self.service.game_choices()[game])
        variant = variants[0]
        if len(variants) > 1:
            listing = ", ".join(f"{i}) {v}" for i, v in enumerate(variants, start=1))
            while True:
                pick = (await self.readline(f"variant ({listing}; Enter for {variant})> ")).strip()
                if not pick:
                    break
                number = typed_number(pick)
                if number is not None and 1 <= number <= len(variants):
                    variant = variants[number - 1]
                    break
                if pick in variants:
                    variant = pick
                    break
                self.p.write(f"! Type a number from 1 to {len(variants)}, or press Enter for {variant}.")
        await self.open_table(game, variant, {})

    async def open_table(self, game: str, variant: str | None, options: dict[str, Any], *, seats: int | None = None,
                         role: Sequence[str] = (), deadline_s: float | None = None) -> None:
        """Open a table, fill it with AI players and start it. ``seats``: the table's size (the menu's
        size for the game otherwise); ``role``: the role or team the first player takes (``as encoder``).
        A size or role the game cannot give is refused before anything opens."""
        entry = find(game)
        lo, hi = self._seat_range(game, variant, options)
        if seats is not None and not max(lo, len(self.users)) <= seats <= hi:
            self.p.write(f"! {entry.title if entry else game} is played with {lo} to {hi} seats"
                         + (f" (and {len(self.users)} of you play)." if len(self.users) > 1 else "."))
            return
        total = seats if seats is not None else max(lo, len(self.users),
                                                    entry.menu.seats if entry is not None and entry.menu is not None else 0)
        total = min(total, hi) if hi >= len(self.users) else total
        seed: int | None = None
        if role:
            found = commands.role_seed(entry, variant, options, total, 0, role) if entry is not None else "No such game."
            if isinstance(found, str):
                self.p.write("! " + found)
                return
            seed = found
        self.p.public.clear()  # the hot-seat redraw shows this game only
        # The lobby's own replies ("add AI seats, then start") are for chat, where people gather: here the
        # table fills and starts at once, so only a refusal is printed.
        extra: dict[str, Any] = {} if deadline_s is None else {"deadline_s": deadline_s}
        reply = await self.send(CommandKind.CREATE, quiet=True, game=game, variant=variant, options=options, **extra)
        if not reply.ok or reply.duplicate:
            return
        for u in self.users[1:]:
            await self.send(CommandKind.JOIN, u, quiet=True)
        need = max(0, total - len(self.users))
        if need:
            await self.send(CommandKind.ADD_AI, quiet=True, agent=self.default_agent(), count=need)
        if not self._warned_warmup:  # once: later games find the models loaded
            self._warned_warmup = True
            self.p.write("AI players may take a moment to warm up the first time.")
        lobby_lines = len(self.p.public)
        await (self.send(CommandKind.START) if seed is None else self.send(CommandKind.START, seed=seed))
        del self.p.public[:lobby_lines]  # the lobby as it filled is stale once the game runs: not redrawn

    def _seat_range(self, game: str, variant: str | None, options: dict[str, Any]) -> tuple[int, int]:
        import games

        try:
            engine = games.get(game)
            lo, hi = engine.seat_range(engine.make_config(variant, **options))
            return int(lo), int(hi)
        except Exception:  # noqa: BLE001 - the service refuses the same table with its own sentence
            return 1, 1_000

    async def play_until_quiet(self) -> None:
        """Let AI seats play; whenever a human at this keyboard owes a move, ask them."""
        while True:
            await self.service.wait_idle(timeout=3600)
            waiting = [u for u in self.users if u.key in self.p.pending]
            if not waiting:
                return
            for user in waiting:
                await self.take_turn(user)

    async def take_turn(self, user: UserRef) -> None:
        if self.hotseat:
            self.p.current = None
            self.p.clear()
            await self.readline(f"Pass the keyboard to {user.name}, then press Enter. ")
            self.p.clear()
        self.p.current = user.key
        self.p.flush_private(user)
        while user.key in self.p.pending:
            m = self.p.pending[user.key]
            self.p.write(render_prompt(m))
            line = await self.readline(f"{user.name}> ")
            if self.is_command(m, line):
                if not await self.command(line.strip().lstrip("/"), user):
                    raise EOFError  # quit at a prompt leaves like end of input
                if not self.game_running():
                    self.p.pending.pop(user.key, None)
                continue
            cmd = answer_command(self.origin(user), m, line)
            if isinstance(cmd, str):
                self.p.write("! " + cmd)
                continue
            if self.p.pending.get(user.key) is m:
                del self.p.pending[user.key]
            reply = await self.service.handle(cmd)
            if not reply.ok or reply.duplicate:
                # A refused duplicate is never silent: the prompt stays open.
                self.p.pending.setdefault(user.key, m)
                self.p.write("! " + (reply.text or "That answer was not taken."))
        if self.hotseat:
            self.p.write("")  # the last lines of the turn (a result, a report) stand apart from the question
            await self.readline("Done. Press Enter and pass the keyboard on. ")
            self.p.clear()
            self.p.current = None

    async def privacy_command(self, verb: str, args: list[str], user: UserRef | None) -> None:
        """``privacy``, ``research on|off``, ``mydata``, ``forget-me [confirm]``, ``audit`` for the member at the keyboard."""
        desk = self.privacy
        if desk is None:
            self.p.write("! Privacy commands are not available here.")
            return
        who = (user or self.users[0]).key
        if verb == "privacy":
            self.p.write(desk.privacy_text())
        elif verb == "research":
            if len(args) > 1:
                self.p.write("! Say `research on` or `research off`.")
                return
            self.p.write(await desk.research(who, args[0] if args else None))
        elif verb == "mydata":
            name, body = await desk.mydata(who)
            folder = self.settings.log_dir.parent / "mydata"
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{who.replace(':', '-')}-{name}"
            path.touch(mode=0o600)
            path.write_bytes(body)
            self.p.write(f"Everything stored about you is in {path}.")
        elif verb == "forget-me":
            if args and args != ["confirm"]:
                self.p.write("! Type `forget-me` to read what it does, then `forget-me confirm`.")
                return
            self.p.write(await desk.forget_me(who, confirmed=args == ["confirm"]))
        else:  # audit: the console is the operator's own terminal
            self.p.write(await desk.audit_text(is_admin=True))

    @staticmethod
    def is_command(m: Outgoing, line: str) -> bool:
        """Is this line, typed at prompt ``m``, a command rather than an answer? ``/verb`` always is; at a
        choice a verb is one unless it names an option; at a text prompt only the verbs that are never an
        answer are taken bare (``help``, ``show``, ``status``...), anything else is the answer."""
        text = line.strip()
        if text.startswith("/"):
            return True
        words = text.split()
        found = commands.lookup(words[0]) if words else None
        if found is None:
            return False
        if m.buttons:
            return isinstance(_pick(m, text), str)
        return found.bare and len(words) == 1

    async def command(self, line: str, user: UserRef | None = None) -> bool:
        """One typed command; ``user``: the player whose turn it is (None between turns). False: leave."""
        try:
            words = [intake.unquote(w) if "=" not in w else w for w in intake.tokens(line)]
        except intake.IntakeError as e:
            self.p.write(f"! {e}")
            return True
        if not words:
            return True
        found = commands.lookup(words[0])
        named, used = commands.resolve_game(words)
        if found is None and named is not None and used == len(words):  # a game's name alone: play it
            return await commands.COMMANDS["play"].run(self, words, user)
        if found is None:
            close = difflib.get_close_matches(words[0].lower(), list(commands.COMMANDS), n=1)
            self.p.write(f"! Unknown command {words[0][:20]!r}" + (f"; did you mean {close[0]}?" if close else "")
                         + " Type help for the commands.")
            return True
        return await found.run(self, words[1:], user)


async def run_console(service: ConsoleService, settings: Settings, *, hotseat: bool = False,
                      out: TextIO | None = None, log_dir: Path | None = None, sneak: SneakPort | None = None,
                      privacy: PrivacyDesk | None = None) -> None:
    """Play at this terminal until quit, end of input or Ctrl-C (which leaves at once, exit code 0).
    ``sneak``: the SNEAK service, when it runs (its evaluators load during the first game);
    ``privacy``: the members' data commands (``bot.core.privacy``)."""
    keep_logs_off_screen(log_dir or log_dir_for(settings), settings)
    platform = ConsolePlatform(out or sys.stdout, hotseat=hotseat)
    service.attach(platform)
    await service.start()
    # The clue report's models load while the first game is played: loaded at the game's end, they kept
    # players (a minute on a busy machine) from the report and from "Play again?".
    warming = asyncio.ensure_future(sneak.warm()) if sneak is not None else None
    ui = ConsoleUI(service, platform, settings, hotseat=hotseat, sneak=sneak, privacy=privacy)
    task = asyncio.ensure_future(ui.run())
    loop = asyncio.get_running_loop()
    interrupted = False

    def on_interrupt() -> None:
        nonlocal interrupted
        interrupted = True
        task.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
    except (NotImplementedError, RuntimeError):
        pass  # no signal handlers here (Windows, a non-main thread): Ctrl-C raises as usual
    try:
        await task
    except asyncio.CancelledError:
        if not interrupted:
            raise
        platform.write("\nBye.")
    finally:
        if warming is not None and not warming.done():
            warming.cancel()
        try:
            loop.remove_signal_handler(signal.SIGINT)
        except (NotImplementedError, RuntimeError):
            pass
