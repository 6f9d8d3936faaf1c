"""The SNEAK application service: the clue report after a game and ``/sneak``, in chat words.

``SneakService`` is created once in the startup point (``bot/app.py``) with the
evaluators of ``HUSHTABLE_SNEAK_EVALUATORS``, each checked there: an evaluator
that has not passed ``hushtable sneak validate`` on held-back cards is refused
with a one-line reason unless the operator marks it ``!spec``
(``models/eval/validate.py``). ``attach`` registers it as the table service's
finish listener; the startup point hands it to each adapter beside the table
service, as its ``SneakPort`` (``bot/core/ports.py``; ``bot/discord/sneak.py``,
``bot/slack/sneak.py``, the console's warm-up).

After a game's result is announced, it scores the game's clues that are not
stored yet (``models/eval/live.py``) and posts the report as player text (never
with mentions). Which games get one comes from each game's descriptor (``sneak``:
Chameleon always, the others when the table was opened with
``sneak_report=yes``), how its moves become instances from its SNEAK module
(``models/eval/games/``). Every number is 0-100 and says which
evaluators made it and how many of them agreed.

``judge`` is the SNEAK human study in chat (``models/eval/study.py``): a member's
next item, or their answer to it and their running score; ``/judge`` on Discord,
``/hushtable judge`` on Slack, always answered to the member alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

import typer

from bot.core.finished import AiTablesPort, FinishedTable, finished_log
from bot.core.messages import Outgoing
from bot.core.privacy import ResearchFilter
from bot.core.redact import MARKER
from games.catalog import find
from games.descriptor import ClueScoring, SneakScoring
from games.labels import fill_labels, seat_ref
from models.eval.cli import EvalEnv, make_app
from models.eval.decoys import DecoyStrategy, WordNetDecoys
from models.eval.evaluators import ClientFor, EmbedderFor, Evaluator, resolve, warm_up
from models.eval.games import ClueHook, hooks, registry
from models.eval.live import score_games
from models.eval.metrics import Scores
from models.eval.report import ClueReport, ClueScore, PlayerAverages, clue_report, player_averages
from models.eval.study import HumanStudy
from models.eval.validate import admitted
from models.eval.wordnet import wordnet
from storage.annotations import Scope
from storage.people import Scrubber
from storage.records import GameLog
from storage.store import Store

log = logging.getLogger(__name__)

REPORT_OPTION = "sneak_report"
# How a clue of a member who has not agreed to research is shown: the research export's marker.
WITHHELD = f"[{MARKER}]"
DEFAULT_EVALUATORS = ("embed:minilm",)  # the evaluators that pass validation (models/eval/data/validated.json)
TITLE = "SNEAK clue report"


def _n(x: float) -> str:
    return f"{x:.0f}"


def _metric(c: ClueScore, metric: str) -> str:
    """``62`` with one evaluator; ``40 (embed:minilm 62, llm:x 18; 1 of 2 agree)`` with several."""
    mean = c.mean
    assert mean is not None
    value = _n(mean.x100()[metric])
    if len(c.per_evaluator) < 2:
        return value
    each = ", ".join(f"{ev} {_n(s.x100()[metric])}" for ev, s in sorted(c.per_evaluator.items()))
    return f"{value} ({each}; {c.agreeing(metric)} of {len(c.per_evaluator)} agree)"


# What the numbers mean, in one line, under the title of every report.
MEANING = ("Utility: how surely a friend who knows the secret tells this clue from made-up ones (0: no better "
           "than a guess); leakage: how surely an outsider who does not know it (the chameleon) finds the secret "
           "from the clue among the possible ones; "
           "SoftScore: the utility with the leakage taken off, high for a clue that helps friends and hides the secret.")


def withheld_line(n: int) -> str:
    """The report's count of the clues it does not quote (members who have not agreed to research)."""
    return (f"({n} clue(s) shown as {WITHHELD}: their authors have not agreed that their words go into research; "
            "see `privacy`.)")


def report_text(rep: ClueReport, names: dict[int, str], withheld: Collection[int] = ()) -> str:
    """The chat text of a clue report (0-100); the clues of the moves in ``withheld`` (action seqs) are
    shown as the research export's marker, their numbers kept, and counted."""

    def who(c: ClueScore) -> str:
        return names.get(c.seat, "?") if c.seat is not None else "?"

    def said(c: ClueScore) -> str:
        return WITHHELD if c.action_seq in withheld else f"\u201c{c.message}\u201d"

    evs = ", ".join(rep.evaluators)
    lines = [f"{TITLE} (0-100; evaluator{'s' if len(rep.evaluators) > 1 else ''}: {evs}):", MEANING]
    reads = "the evaluators read" if len(rep.evaluators) > 1 else "the evaluator reads"
    for c in rep.informed:
        if c.mean is None:
            lines.append(f"- {who(c)}: {said(c)}: not scored")
            continue
        if c.action_seq in withheld:  # no note on its kind either: "a name", "the category" say what it was
            lines.append(f"- {who(c)}: {WITHHELD}: utility {_metric(c, 'utility')}, leakage {_metric(c, 'leakage')}, "
                         f"SoftScore {_metric(c, 'soft')}")
            continue
        if c.poorly_read:  # a name: the numbers say how the evaluator read it, not how good the clue was
            lines.append(f"- {who(c)}: \u201c{c.message}\u201d: a name or reference \u2014 {reads} names poorly; "
                         f"score not shown as a verdict (its reading: utility {_metric(c, 'utility')}, leakage "
                         f"{_metric(c, 'leakage')}, SoftScore {_metric(c, 'soft')}; not ranked)")
            continue
        lines.append(f"- {who(c)}: \u201c{c.message}\u201d: utility {_metric(c, 'utility')}, "
                     f"leakage {_metric(c, 'leakage')}, SoftScore {_metric(c, 'soft')}"
                     + (" (the category itself: it fits every word of the card, so it is not ranked)"
                        if c.names_category else ""))
    if rep.bluffs:
        lines.append("Bluffs (said without knowing the secret; not ranked): how well each blended in, as the "
                     "utility it would have had from a player who knew:")
        for c in rep.bluffs:
            lines.append(f"- {who(c)}: {said(c)}: " +
                         (f"blend-in utility {_metric(c, 'utility')}" if c.mean is not None else "not scored"))
    best = rep.best()
    if best is not None and best.mean is not None:
        lines.append(f"Best SoftScore of a player who knew the secret: {_n(best.mean.x100()['soft'])} "
                     f"({who(best)}, {said(best)}).")
    failed = sum(len(c.failed) for c in rep.clues)
    if failed:
        lines.append(f"({failed} judgement(s) failed and are left out.)")
    quiet = sum(1 for c in rep.clues if c.action_seq in withheld)
    if quiet:
        lines.append(withheld_line(quiet))
    return "\n".join(lines)


def averages_text(p: PlayerAverages) -> str:
    """The ``/sneak`` answer: your averages against the AI agents you played with (0-100)."""
    if p.player is None:
        return "No scored clues of yours yet: finish a game whose clues are scored and its clue report will count."

    def line(name: str, s: Scores, n: int) -> str:
        v = s.x100()
        return (f"{name}: utility {v['utility']:.0f}, leakage {v['leakage']:.0f}, SoftScore {v['soft']:.0f}, "
                f"BinaryScore {v['binary']:.0f} ({n} clue judgement(s))")

    out = [f"Your SNEAK averages (0-100; evaluators: {', '.join(p.evaluators)}; clues given knowing the secret):",
           line("You", p.player, p.player_n)]
    out += [line(agent, s, n) for agent, (s, n) in p.agents.items()]
    return "\n".join(out)


def eval_env() -> EvalEnv:
    """What ``hushtable sneak ...`` needs, from the bot's settings (models/eval reads no configuration)."""
    from bot.settings import Settings
    from models.client import ClientPool

    s = Settings()

    def pool() -> ClientPool:
        return ClientPool(s.client_options())

    return EvalEnv(s.database_url, s.export_secret, pool, s.research_consent)


def sneak_cli() -> typer.Typer:
    """The ``hushtable sneak`` commands (registered in bot/cli.py)."""
    return make_app(eval_env)


NOT_CONSENTED = ("The study asks only members who agreed that their answers go into research: "
                 "say `research on` first (see `privacy`).")


class SneakService:
    """Scores finished games' clues and answers ``/sneak``; evaluators checked at construction."""

    def __init__(self, store: Store, *, client_for: ClientFor, embedder_for: EmbedderFor | None = None,
                 evaluators: Sequence[str] = DEFAULT_EVALUATORS, decoys: DecoyStrategy | None = None,
                 consent: str = "opt-in") -> None:
        self.store = store
        self.client_for = client_for
        if embedder_for is None:
            from models.worker.embedding_backend import embedder_for as bundled

            embedder_for = bundled
        self.embedder_for = embedder_for
        # Whether a member consented to research (``bot.core.privacy``); the study asks only those.
        self.consents: Callable[[str], Awaitable[bool]] | None = None
        # The research exports' filter (``bot.core.privacy``): a report quotes only the clues it would export.
        # None (tests of the scoring alone, AI-only tournaments): every clue is quoted.
        self.research_filter: Callable[[], Awaitable[ResearchFilter]] | None = None
        self.specs = tuple(admitted(evaluators))  # EvaluatorRefused (one line) for an unvalidated evaluator
        self._decoys = decoys
        self._evaluators: list[Evaluator] | None = None
        self._loading = asyncio.Lock()  # a warm-up and a report's first call load the models once
        # HUSHTABLE_RESEARCH_CONSENT: the study shows a member's clue only while their words may go into research.
        self.study = HumanStudy(store, self.specs, consent=consent)

    async def warm(self) -> None:
        """Load the evaluators and the decoys' word database now (a screen calls this at its start, so the
        first report after a game only scores). A failure is logged by type; the report says it again."""
        try:
            await asyncio.to_thread(wordnet)  # read once per process; off the loop, which keeps playing
            await self._ready()
        except Exception as exc:  # noqa: BLE001 - warming up must never stop a screen
            log.warning("SNEAK evaluators did not warm up: %s", type(exc).__name__)

    async def _ready(self) -> tuple[list[Evaluator], DecoyStrategy]:
        async with self._loading:
            return await self._load()

    async def _load(self) -> tuple[list[Evaluator], DecoyStrategy]:
        if self._evaluators is None:
            evaluators = []
            for spec in self.specs:  # one model at a time: two loading at once raced
                ev = await resolve(spec, client_for=self.client_for, embedder_for=self.embedder_for)
                failure = await warm_up(ev)
                if failure is not None:
                    raise RuntimeError(f"SNEAK evaluator {spec} failed to start")
                evaluators.append(ev)
            self._evaluators = evaluators
        if self._decoys is None:
            self._decoys = WordNetDecoys(wordnet())
        return self._evaluators, self._decoys

    def wanted(self, game: str, lobby: dict[str, Any] | None) -> bool:
        """The game's descriptor says when (``sneak``); a SNEAK module must say how (``models/eval/games``)."""
        desc = find(game)
        if desc is None or (game not in registry() and game not in hooks()) or desc.sneak is SneakScoring.NEVER:
            return False
        # The table option `sneak_report=yes` is kept in the lobby (bot/core/commands.py), not in the rules.
        return desc.sneak is SneakScoring.ALWAYS or (lobby or {}).get(REPORT_OPTION) is True

    async def report(self, game_id: int, finished: FinishedTable | None = None) -> str | None:
        """Score what is not stored yet and describe the game's clues; None for a game without a report.
        ``finished``: the table that just finished (the finish listener's), whose record is the log: it is
        not read again; without it (or when it does not say who sat and moved) the log is read once."""
        row = await self.store.game(game_id)  # one row: the lobby says whether the table asked for a report
        if row is None or not self.wanted(row.game, row.lobby):
            return None
        glog = None
        if finished is not None and finished.game_id == game_id:
            try:
                glog = finished_log(finished, row)
            except Exception as exc:  # noqa: BLE001 - a record that no longer replays: the log is read instead
                log.warning("game %s: its finished table's record did not replay (%s); reading its log",
                            game_id, type(exc).__name__)
        if glog is None:
            glog = await self.store.load_game(game_id)  # read once: scored, and its seats named, from this copy
        withheld = await self._withheld(glog)
        hook = hooks().get(row.game)
        if hook is not None:
            return await self._own_report(glog, hook, withheld)
        evaluators, decoys = await self._ready()
        await score_games(self.store, evaluators, decoys, log=glog)
        try:
            await self.study.add_game(game_id)  # its clues become study items now, not at a /judge
        except Exception as exc:  # noqa: BLE001 - the report still goes; a process's first /judge catches up
            log.warning("SNEAK study items of game %s were not added: %s", game_id, type(exc).__name__)
        rep = await clue_report(self.store, game_id, self.specs)
        if rep is None:
            return None
        names = {s.seat: s.display_name or f"Player {s.seat + 1}" for s in glog.seats}
        return report_text(rep, names, frozenset(withheld))

    async def _withheld(self, glog: GameLog) -> dict[int, tuple[str, ...]]:
        """The game's clue moves whose words a research export withholds (by action seq: the texts)."""
        if self.research_filter is None:
            return {}
        desc = find(glog.row.game)
        kinds = desc.clue_kinds if desc is not None else frozenset()
        clue_seqs = {a.seq for a in glog.actions if a.kind in kinds}
        found = (await self.research_filter()).withheld_texts(glog)
        return {seq: texts for seq, texts in found.items() if seq in clue_seqs and texts}

    async def _own_report(self, glog: GameLog, hook: ClueHook, withheld: dict[int, tuple[str, ...]]) -> str | None:
        """A game whose clues are scored its own way (``models/eval/games``' ``ClueHook``): its
        report as the hook writes it, seats named as at the table."""
        desc = find(hook.game)
        needs = desc is not None and desc.clue_scoring is not ClueScoring.OUTCOME  # the log alone says an outcome
        evaluators = (await self._ready())[0] if needs else []
        rep = await hook.report(glog, evaluators)
        if not rep.lines:
            return None
        names = {s.seat: s.display_name or f"Player {s.seat + 1}" for s in glog.seats}
        by = f" (0-100; evaluator{'s' if len(self.specs) > 1 else ''}: {', '.join(self.specs)})" if needs else ""
        # The hook scores the words as said; the text quotes them as an export would: the marker in their place
        # (as whole words, as exports scrub the rows derived from a game), in the lines that name their seat
        # only, so that another player's clue of the same word stays quoted.
        seat_of = {a.seq: a.seat for a in glog.actions}
        said: dict[int, list[str]] = {}
        for seq, texts in withheld.items():
            said.setdefault(seat_of[seq], []).extend(texts)
        scrubs = {seat_ref(seat): Scrubber([(f"\u201c{t}\u201d", WITHHELD) for t in ts] + [(t, WITHHELD) for t in ts])
                  for seat, ts in said.items()}
        lines = []
        for line in rep.lines:
            for token, scrub in scrubs.items():
                line = scrub.text(line) if token in line else line
            lines.append(fill_labels(line, names))
        quiet = sum(len(texts) for texts in withheld.values())
        return "\n".join([f"{TITLE}{by}:", *lines, *([withheld_line(quiet)] if quiet else [])])

    async def averages(self, user_key: str, tenant: str | None) -> str:
        """The ``/sneak`` answer for a person (their games of this tenant)."""
        return averages_text(await player_averages(self.store, user_key, tenant=tenant, evaluators=self.specs))

    async def judge(self, user_key: str, tenant: str | None, answer: str | None = None, *,
                    channels: Collection[str] = (), command: str = "judge N") -> str:
        """The human study's next step for a member (``/judge``): their item, or their answer and the next.
        Items come from the member's tenant, from games in ``channels`` (those the platform says they can
        read), never from a game they played or watched; none of a tenant "" (the operator's CLI alone).
        Only members who consented to research are asked."""
        if self.consents is not None and not await self.consents(user_key):
            return NOT_CONSENTED
        scope = Scope(tenant or None, frozenset(channels))
        return await self.study.turn(user_key, scope, answer, command=command)

    async def on_finish(self, finished: FinishedTable) -> Outgoing | None:
        try:
            text = await self.report(finished.game_id, finished)
        except Exception as exc:  # a report must never break the table; the log says why (by type)
            log.error("SNEAK clue report failed for game %s: %s", finished.game_id, type(exc).__name__)
            return None
        return Outgoing(text, title=TITLE, user_text=True) if text else None

    def attach(self, tables: AiTablesPort) -> SneakService:
        """Post the report after each result of ``tables`` (the table service's ``ai_tables``)."""
        tables.add_finish_listener(self.on_finish)
        return self
