"""The SNEAK human study as a members' pastime: one item at a time, in chat or at the console.

``HumanStudy`` is what ``/judge`` (Discord), ``/hushtable judge`` (Slack) and
``hushtable sneak judge`` (the operator's console) call: ``turn(member, scope, answer)``
shows the member's open item, or records their answer to it (a number among its
options; anything else is one sentence and changes nothing), says whether it was
right with their running score, and shows the next. Each prompt names the way to
answer that the member's platform accepts (``command``).

Items come from the stored evaluations of the configured evaluators (informed
clues of finished games, ``models/eval/human.py``) and from benchmark instances
added with ``hushtable sneak human --add-bench``. They are kept incrementally: a
game's items are added when its clue report scores it (``add_game``), and a turn
reads only the evaluations stored since the last one (by id; a process's first
turn catches up on games without items), never the whole log.

Who sees what (``storage.annotations.Scope`` and ``serve``): a logged clue only to
members of its game's tenant who can read its channel, never to its players or its
host, never to a member who saw the other role of the same clue; each item until it
has ``ANNOTATIONS_PER_ITEM`` answers. A logged clue is shown only while its author's
words may go into research under ``HUSHTABLE_RESEARCH_CONSENT`` at the time it is
served (opt-in: the author said ``research on``; notice: they have not said
``research off``; off: always), so a later ``research off`` hides it at once and
``research on`` brings it back; an AI seat's clue is always shown. Each item records
its author (``storage.annotations.NewItem.author``) when it is added. A member may take ``CALLS`` turns per
``WINDOW`` seconds. All text is the members' own: no other member is named.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from typing import Any

import storage.annotations as store_notes
from games.text import typed_number
from models.eval import deep_study
from models.eval.human import ANNOTATIONS_PER_ITEM, Item, item_from_rows, prompt_text, running_score
from storage.annotations import Scope
from storage.ports import UnitsOfWork

HOW = "Answer with the option's number"
RATE = "Answer with a rating"
LAPSED = ("Your last item waited more than 30 minutes and other members completed it meanwhile; nothing was "
          "recorded. Here is a new one.")
CONSOLE = "type N and press Enter"  # how an answer is given at the console (``hushtable sneak judge``)
CALLS, WINDOW = 20, 60.0  # a member's turns per window (seconds): a person reads an item in more than 3 s
SLOW_DOWN = "You are going faster than anyone reads an item: wait a few seconds and ask again; nothing was recorded."


def _answer_with(command: str, n: int) -> str:
    """How to answer, in the words the member's platform accepts (``command`` names N, the option's number)."""
    return command.replace("N", f"N (1-{n})", 1) if "N" in command else f"{command} (1-{n})"


class HumanStudy:
    """Items for members and their answers (``storage/annotations.py``); ``specs``: the evaluators whose stored
    probabilities the items carry; ``consent``: ``HUSHTABLE_RESEARCH_CONSENT``, which decides whose logged
    clues may be shown (opt-in, the default, the safe one). ``calls`` turns per ``window`` seconds a member may take (``clock``: seconds)."""

    def __init__(self, store: Any, specs: Sequence[str], *, per_item: int = ANNOTATIONS_PER_ITEM,
                 consent: str = "opt-in", calls: int = CALLS, window: float = WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if consent not in store_notes.CONSENT_MODES:
            raise ValueError(f"research consent must be one of {', '.join(store_notes.CONSENT_MODES)}")
        self.store = store
        self.consent = consent  # HUSHTABLE_RESEARCH_CONSENT: whose logged clues may be shown (``serve``)
        self.specs = tuple(specs)
        self.per_item = per_item
        self._mark: int | None = None  # the highest evaluation id already turned into items by this process
        self._refreshing = asyncio.Lock()
        self.calls, self.window, self.clock = calls, window, clock
        self._turns: dict[str, deque[float]] = {}

    async def _add(self, scored: store_notes.Scored) -> int:
        groups: dict[tuple[int, int, int], list[Any]] = defaultdict(list)
        for r in scored.rows:
            if r.settings_json.get("kind") != "tom":
                groups[(r.game_id, r.action_seq, r.part)].append(r)
        new = [store_notes.NewItem(i.key, i.task.value, i.source, i.game_id, scored.tenants.get(key[0], ""), i.to_json(),
                                   scored.authors.get((key[0], key[1])))
               for key, rs in sorted(groups.items()) for i in item_from_rows(rs)]
        return await store_notes.add_items(self.store, new)

    async def refresh(self) -> int:
        """Turn stored evaluations not seen yet into items; how many were added. Incremental: a process's first
        call catches up on games without items, later ones read only evaluations stored since (by id)."""
        async with self._refreshing:
            scored = await store_notes.scored_since(self.store, self._mark, self.specs)
            added = await self._add(scored)
            self._mark = scored.mark
            return added

    async def add_game(self, game_id: int) -> int:
        """The items of one game just scored (the clue report calls this after scoring it)."""
        return await self._add(await store_notes.scored_since(self.store, self._mark, self.specs, [game_id]))

    def _too_fast(self, member: str) -> bool:
        now = self.clock()
        if len(self._turns) > 10_000:  # forget members idle for a whole window, so this stays small
            self._turns = {m: q for m, q in self._turns.items() if q and q[-1] > now - self.window}
        q = self._turns.setdefault(member, deque())
        while q and q[0] <= now - self.window:
            q.popleft()
        if len(q) >= self.calls:
            return True
        q.append(now)
        return False

    async def _show(self, member: str, scope: Scope, command: str, lead: str = "") -> str:
        served = await store_notes.serve(self.store, member, scope, per_item=self.per_item, consent=self.consent)
        if served is None:
            return (lead + "No item to judge right now: every item you may see is done, is from a game you played "
                    "or watched, or you judged it or the same clue already. Finished games with scored clues bring "
                    "new ones.").strip()
        if served.lapsed and not lead:
            lead = LAPSED + "\n"
        if served.item.get("task") == deep_study.TASK:
            d = deep_study.DeepItem.from_json(served.item)
            return (lead + f"DEEP human rating:\n{deep_study.prompt_text(d)}\n"
                    f"{RATE}: {_answer_with(command, 5)}.").strip()
        item = Item.from_json(served.item)
        return (lead + f"SNEAK human study, {item.task.value} task:\n{prompt_text(item)}\n"
                f"{HOW}: {_answer_with(command, len(item.options))}.").strip()

    async def turn(self, member: str, scope: Scope, answer: str | None = None, *, command: str = CONSOLE) -> str:
        """One step for a member: show their item, or take their answer and show the next. ``scope``: the items
        they may see; ``command``: how they answer on their platform, N standing for the number."""
        if self._too_fast(member):
            return SLOW_DOWN
        await self.refresh()
        if answer is None or not answer.strip():
            return await self._show(member, scope, command)
        served = await store_notes.serve(self.store, member, scope, per_item=self.per_item, consent=self.consent)
        if served is None:
            return await self._show(member, scope, command)
        if served.item.get("task") == deep_study.TASK:
            return await self._rate(member, scope, command, served, answer)
        item = Item.from_json(served.item)
        text = answer.strip()
        number = typed_number(text)
        if number is None or not 1 <= number <= len(item.options):
            return f"{HOW}, from 1 to {len(item.options)}; nothing was recorded."
        choice = number - 1
        right = choice == item.gold
        if served.fresh or await store_notes.answer(self.store, member, choice, right) is None:
            # The item was only just shown (a new one): an answer typed before seeing it is not counted.
            why = (LAPSED if served.lapsed else "That answer came before this item was shown; nothing was "
                   "recorded.")
            return await self._show(member, scope, command, why + "\n")
        score = running_score(await store_notes.record(self.store, member))
        said = "Right!" if right else f"Not this time: it was {item.gold + 1}. {item.options[item.gold]}."
        return await self._show(member, scope, command, f"{said} Your score: {score}.\n\n")

    async def _rate(self, member: str, scope: Scope, command: str, served: store_notes.Served, answer: str) -> str:
        """A member's 1-5 rating of a DEEP description; the judge's rating is shown only after theirs."""
        rating = deep_study.parse(answer)
        if rating is None:
            return f"{RATE}, from 1 to 5; nothing was recorded."
        if served.fresh or await store_notes.answer(self.store, member, rating - 1, None) is None:
            why = LAPSED if served.lapsed else "That answer came before this item was shown; nothing was recorded."
            return await self._show(member, scope, command, why + "\n")
        d = deep_study.DeepItem.from_json(served.item)
        judge = f"the judge gave {d.judge_rating}" if d.judge_rating is not None else "the judge gave no rating"
        n = await store_notes.answered(self.store, member)
        return await self._show(member, scope, command, f"Recorded {rating} ({judge}). Items you have judged: {n}.\n\n")


async def add_deep_items(store: UnitsOfWork, run: dict[str, Any]) -> int:
    """Items from ``hushtable deep --out``'s JSON (every tenant's members may rate them); how many were added."""
    items = deep_study.items_from_run(run)
    return await store_notes.add_items(store, [store_notes.NewItem(i.key, deep_study.TASK, "deep", None, "",
                                                                   i.to_json()) for i in items])


async def add_items(store: UnitsOfWork, items: Sequence[Item]) -> int:
    """Store benchmark items (every tenant's members may judge them)."""
    return await store_notes.add_items(store, [store_notes.NewItem(i.key, i.task.value, i.source, i.game_id, "",
                                                                   i.to_json()) for i in items])


async def add_bench_items(store: UnitsOfWork, deck: Sequence[tuple[str, Sequence[str]]] | None, count: int, *,
                          generator: str, evaluators: Sequence[str], client_for: Any, embedder_for: Any,
                          seed: int = 0) -> int:
    """Benchmark items, as the paper's study sampled one instance per category: a seeded secret of each of the
    first ``count`` cards, the generator's message, WordNet decoys, judged by every evaluator; stored for every
    tenant. How many items were added (two per instance: ally and chameleon)."""
    from games import decks
    from games.base import rng
    from models.embeddings import VocabIndex
    from models.eval.bench import make_generator
    from models.eval.decoys import WordNetDecoys
    from models.eval.evaluators import load_evaluators
    from models.eval.human import item_from_evaluations
    from models.eval.instances import bench_instances
    from models.eval.score import evaluate
    from models.eval.wordnet import wordnet

    cards = list(deck) if deck is not None else [(c, tuple(w)) for c, w in decks.cards()]
    chosen = []
    for cat, words in cards[:count]:
        insts = bench_instances([(cat, words)], 12)
        chosen.append(insts[rng(seed, "sneak-human-secret", cat).randrange(len(insts))])
    gen = await make_generator(generator, refine=False, client_for=client_for,
                               index=VocabIndex(embedder_for("minilm")), seed=seed, embedder_for=embedder_for)
    evs = await load_evaluators(evaluators, client_for=client_for, embedder_for=embedder_for)
    items: list[Item] = []
    decoys = WordNetDecoys(wordnet())
    for inst in chosen:
        made = await gen(inst)
        if made.message is None:
            continue
        import dataclasses

        scored = await evaluate([dataclasses.replace(inst, message=made.message)], evs, decoys)
        items += item_from_evaluations(f"{generator}:{seed}:{inst.category}:{inst.secret}", scored)
    return await add_items(store, items)


def leaks(answered: Sequence[store_notes.Answered], watchers: dict[int, set[str]]) -> list[str]:
    """Why answers may not be counted, one line per kind (empty: none): a member who answered both roles of
    one clue (the ally item told them the chameleon item's answer), or a clue of a game they played or watched."""
    roles: dict[tuple[str, str], set[str]] = defaultdict(set)
    own: set[tuple[str, str]] = set()
    for a in answered:
        roles[(a.annotator, store_notes.clue_of(a.key))].add(a.task)
        if a.game_id is not None and a.annotator in watchers.get(a.game_id, set()):
            own.add((a.annotator, a.key))
    both = [k for k, tasks in roles.items() if {"ally", "chameleon"} <= tasks]
    out = []
    if both:
        out.append(f"{len({m for m, _ in both})} member(s) answered both roles of {len(both)} clue(s)")
    if own:
        out.append(f"{len({m for m, _ in own})} member(s) answered {len(own)} item(s) of games they played or watched")
    return out


def per_member(answered: Sequence[store_notes.Answered]) -> str:
    """How many items each member answered, per task (members numbered, never named)."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for a in answered:
        counts[a.annotator][a.task] += 1
    tasks = sorted({a.task for a in answered})
    lines = [f"Answers per member and task ({len(counts)} member(s), numbered by their first answer):",
             "  " + f"{'member':<10}" + "".join(f"{t:>12}" for t in tasks)]
    for n, (_, c) in enumerate(counts.items(), 1):
        lines.append("  " + f"{'#' + str(n):<10}" + "".join(f"{c.get(t, 0):>12}" for t in tasks))
    return "\n".join(lines)


async def study_report(store: UnitsOfWork) -> str:
    """Tables 6 and 7 (and DEEP's ratings) with the answers per member and task; the tables are refused while
    any member's answers overlap (``leaks``): their accuracy would not be the clues'."""
    from models.eval.human import render, report

    answered, watchers = await store_notes.audit(store)
    head = per_member(answered) if answered else "No answers yet."
    bad = leaks(answered, watchers)
    if bad:
        return (head + "\n\nTables 6 and 7 are not printed: " + "; ".join(bad) + ". Such answers know more than "
                "the clue says, so the accuracies would be too high (answers given before each member was kept to "
                "one role per clue, away from their own games).")
    raw, votes = await store_notes.study(store)
    text = head + "\n\n" + render(report([Item.from_json(d) for d in raw if d.get("task") != deep_study.TASK], votes))
    deep = [deep_study.DeepItem.from_json(d) for d in raw if d.get("task") == deep_study.TASK]
    if deep:
        ratings = [deep_study.Vote(k, a, c + 1) for k, a, c in await store_notes.votes_of(store, deep_study.TASK)]
        text += "\n\n" + deep_study.render(deep_study.report(deep, ratings))
    return text
