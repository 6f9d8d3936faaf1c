"""The local console: the same TableService behind a terminal, for newcomers and hot-seat play.

`make run` with no platform tokens lands here. A short menu picks a game, fills the
other seats with AI players and starts; the player's own secrets are shown to them
only. In hot-seat mode several humans share the keyboard: private messages wait
until their owner takes the keyboard, and the screen is cleared between seats.
"""

from __future__ import annotations

import asyncio
import itertools
import shlex
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from bot.core import codec
from bot.core.messages import Command, CommandKind, MessageRef, Outgoing, Place, Reply, UserRef
from bot.core.service import TableService
from bot.settings import Settings

PLATFORM = "console"
TABLE = Place(PLATFORM, "table")
CLEAR = "\033[2J\033[H"

GAMES = [
    ("decrypto", "Decrypto", "give hints so your teammate decodes a 3-digit code; the interceptor listens in"),
    ("spy", "Who-is-Spy", "describe your word; find the spy who holds a slightly different one"),
    ("chameleon", "Chameleon", "everyone but the chameleon knows the secret word; give one-word clues, then vote"),
]

HELP = """Commands:
  play GAME [VARIANT] [key=value ...]   open a table (decrypto, spy, chameleon)
  ai [SPEC] [COUNT]                     add AI seats (random, llm:default, embed:minilm)
  join NAME                             (hot-seat) another human joins at this keyboard
  start | abort | status | rules [GAME] | help | quit
When it is your turn, answer with the option's number, or type your text
(several answers separated by ';')."""


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
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))
    current: str | None = None  # the user at the keyboard

    def write(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    async def post(self, place: Place, m: Outgoing) -> MessageRef:
        if m.text:
            self.write(m.text.replace("**", ""))
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


def render_prompt(m: Outgoing) -> str:
    lines = [m.text]
    for i, b in enumerate(m.buttons, start=1):
        lines.append(f"  {i}) {b.label}")
    if m.form:
        lines.append(f"  ({m.form.hint}; fields: {'; '.join(m.form.fields)})")
    return "\n".join(lines)


def answer_command(user: UserRef, m: Outgoing, text: str) -> Command | str:
    """Turn what was typed at a prompt into an ACT command, or a sentence saying what is wrong."""
    text = text.strip()
    if m.buttons:
        if not text.isdigit() or not 1 <= int(text) <= len(m.buttons):
            return f"Type a number from 1 to {len(m.buttons)}."
        d = codec.decode(m.buttons[int(text) - 1].id)
        return Command(CommandKind.ACT, user, TABLE, {"game_id": d.game_id, "seat": d.seat, "kind": d.kind,
                                                      "value": [d.option]})
    assert m.form is not None
    parts = [p.strip() for p in text.split(";")] if len(m.form.fields) > 1 else [text]
    if len(parts) != len(m.form.fields):
        return f"Give {len(m.form.fields)} answers separated by ';'."
    d = codec.decode(m.form.id)
    return Command(CommandKind.ACT, user, TABLE, {"game_id": d.game_id, "seat": d.seat, "kind": d.kind,
                                                  "value": parts})


class ConsoleUI:
    def __init__(self, service: TableService, platform: ConsolePlatform, settings: Settings, *,
                 read: Callable[[], asyncio.Future[str] | asyncio.Task[str]] | None = None,
                 hotseat: bool = False) -> None:
        self.service = service
        self.p = platform
        self.settings = settings
        self.hotseat = hotseat
        self.users: list[UserRef] = [UserRef(PLATFORM, "you", "You")]
        self._read = read
        self._ids = itertools.count(1)

    async def readline(self, prompt: str = "> ") -> str:
        self.p.out.write(prompt)
        self.p.out.flush()
        line = await (self._read() if self._read else asyncio.to_thread(sys.stdin.readline))
        if line == "":
            raise EOFError
        return line.rstrip("\n")

    async def send(self, kind: CommandKind, user: UserRef | None = None, **args: object) -> Reply:
        cmd = Command(kind, user or self.users[0], TABLE, args, inbound_id=f"console-{next(self._ids)}")
        reply = await self.service.handle(cmd)
        if reply.text and not (kind is CommandKind.ACT and reply.ok):
            self.p.write(("" if reply.ok else "! ") + reply.text)
        return reply

    def game_running(self) -> bool:
        return any(t.platform == PLATFORM and not t.over for t in self.service.tables.values())

    async def run(self) -> None:
        self.p.write("Welcome to Hushtable: word games of hidden information, against AI players.")
        try:
            if self.hotseat:
                await self.gather_players()
            else:
                name = (await self.readline("Your name (Enter for Player): ")).strip()[:32] or "Player"
                self.users = [UserRef(PLATFORM, "you", name)]
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
            self.p.write("Bye.")

    async def gather_players(self) -> None:
        raw = await self.readline("Hot-seat: names of the human players, separated by commas: ")
        names = [n.strip() for n in raw.split(",") if n.strip()] or ["You"]
        self.users = [UserRef(PLATFORM, f"p{i + 1}", n) for i, n in enumerate(names)]

    async def quick_start(self) -> None:
        self.p.write("Pick a game:")
        for i, (_, title, blurb) in enumerate(GAMES, start=1):
            self.p.write(f"  {i}) {title}: {blurb}")
        self.p.write("  or press Enter for the command line (type help).")
        choice = (await self.readline("game> ")).strip()
        if not choice:
            self.p.write(HELP)
            return
        if not choice.isdigit() or not 1 <= int(choice) <= len(GAMES):
            self.p.write("No such game; type help for the commands.")
            return
        game = GAMES[int(choice) - 1][0]
        variants = self.service.game_choices()[game]
        variant = variants[0]
        if len(variants) > 1:
            listing = ", ".join(f"{i}) {v}" for i, v in enumerate(variants, start=1))
            pick = (await self.readline(f"variant ({listing}; Enter for {variant})> ")).strip()
            if pick.isdigit() and 1 <= int(pick) <= len(variants):
                variant = variants[int(pick) - 1]
        await self.open_table(game, variant, {})

    async def open_table(self, game: str, variant: str | None, options: dict) -> None:
        reply = await self.send(CommandKind.CREATE, game=game, variant=variant, options=options)
        if not reply.ok:
            return
        for u in self.users[1:]:
            await self.send(CommandKind.JOIN, u)
        engine_min = self._seat_min(game, variant, options)
        need = max(0, engine_min - len(self.users))
        if game == "spy":
            need = max(need, 4 - len(self.users))  # a spy game reads best with four or more
        if need:
            await self.send(CommandKind.ADD_AI, agent=self.settings.default_agent, count=need)
        self.p.write("AI players may take a moment to warm up the first time.")
        await self.send(CommandKind.START)

    def _seat_min(self, game: str, variant: str | None, options: dict) -> int:
        import games

        engine = games.get(game)
        return engine.seat_range(engine.make_config(variant, **options))[0]

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
            self.p.out.write(CLEAR)
            await self.readline(f"Pass the keyboard to {user.name}, then press Enter. ")
            self.p.out.write(CLEAR)
        self.p.current = user.key
        self.p.flush_private(user)
        while user.key in self.p.pending:
            m = self.p.pending[user.key]
            self.p.write(render_prompt(m))
            line = await self.readline(f"{user.name}> ")
            if line.strip().lower() in ("quit", "exit", "abort", "status", "rules", "help") or line.startswith("/"):
                await self.command(line.lstrip("/"))
                if not self.game_running():
                    self.p.pending.pop(user.key, None)
                continue
            cmd = answer_command(user, m, line)
            if isinstance(cmd, str):
                self.p.write("! " + cmd)
                continue
            cmd = Command(cmd.kind, cmd.user, cmd.place, cmd.args, inbound_id=f"console-{next(self._ids)}")
            if self.p.pending.get(user.key) is m:
                del self.p.pending[user.key]
            reply = await self.service.handle(cmd)
            if not reply.ok:
                self.p.pending.setdefault(user.key, m)
                self.p.write("! " + reply.text)
        if self.hotseat:
            await self.readline("Done. Press Enter and pass the keyboard on. ")
            self.p.out.write(CLEAR)
            self.p.current = None

    async def command(self, line: str) -> bool:
        try:
            words = shlex.split(line)
        except ValueError:
            self.p.write("! Unbalanced quotes.")
            return True
        if not words:
            return True
        verb, args = words[0].lower(), words[1:]
        if verb in ("quit", "exit"):
            return False
        if verb == "help":
            self.p.write(HELP)
        elif verb == "play" and args:
            variant = args[1] if len(args) > 1 and "=" not in args[1] else None
            opts = dict(a.split("=", 1) for a in args[1:] if "=" in a)
            await self.open_table(args[0], variant, {k: _value(v) for k, v in opts.items()})
        elif verb == "ai":
            spec = args[0] if args and not args[0].isdigit() else self.settings.default_agent
            count = int(next((a for a in args if a.isdigit()), "1"))
            await self.send(CommandKind.ADD_AI, agent=spec, count=count)
        elif verb == "join" and args:
            user = UserRef(PLATFORM, f"p{len(self.users) + 1}", " ".join(args))
            self.users.append(user)
            await self.send(CommandKind.JOIN, user)
        elif verb in ("start", "abort", "status"):
            await self.send(CommandKind(verb))
        elif verb == "rules":
            await self.send(CommandKind.RULES, **({"game": args[0]} if args else {}))
        else:
            self.p.write("! Unknown command; type help.")
        return True


def _value(raw: str) -> object:
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(raw)
    except ValueError:
        return raw


async def run_console(service: TableService, settings: Settings, *, hotseat: bool = False,
                      out: TextIO | None = None) -> None:
    platform = ConsolePlatform(out or sys.stdout, hotseat=hotseat)
    service.attach(platform)
    await service.start()
    await ConsoleUI(service, platform, settings, hotseat=hotseat).run()
