"""The SNEAK human study as a members' pastime: one item at a time, in chat or at the console.

``HumanStudy`` is what ``/judge`` (Discord), ``/hushtable judge`` (Slack) and
``hushtable sneak judge`` (the console) call: ``turn(member, tenant, answer)``
shows the member's open item, or records their answer to it (a number among its
options; anything else is one sentence and changes nothing), says whether it was
right with their running score, and shows the next. Items come from the stored
evaluations of the configured evaluators (informed clues of finished games,
``models/eval/human.py``), refreshed on each turn, and from benchmark instances
added with ``hushtable sneak human --add-bench``. A member is never shown an item
from a game they sat in, nor the same item twice; each item is served until it has
``ANNOTATIONS_PER_ITEM`` answers. All text is the members' own: no other member
is named.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import storage.annotations as store_notes
from games.text import typed_number
from models.eval import deep_study
from models.eval.human import ANNOTATIONS_PER_ITEM, Item, item_from_rows, prompt_text, running_score
from storage.evaluations import evaluations
from storage.ports import UnitsOfWork
from storage.tables import GameStatus

HOW = "Answer with the option's number"
RATE = "Answer with a rating"
LAPSED = ("Your last item waited more than 30 minutes and other members completed it meanwhile; nothing was "
          "recorded. Here is a new one.")


class HumanStudy:
    """Items for members and their answers (``storage/annotations.py``); ``specs``: the evaluators whose stored
    probabilities the items carry."""

    def __init__(self, store: Any, specs: Sequence[str], *, per_item: int = ANNOTATIONS_PER_ITEM) -> None:
        self.store = store
        self.specs = tuple(specs)
        self.per_item = per_item
        self._done: set[int] = set()  # games whose clues were turned into items by this process

    async def refresh(self) -> int:
        """Turn the stored evaluations of finished games not seen yet into items; how many were added."""
        rows = await self.store.games(status=GameStatus.FINISHED)
        todo = {r.id: r.tenant for r in rows if r.id is not None and r.id not in self._done}
        if not todo:
            return 0
        found = await evaluations(self.store, game_ids=sorted(todo), evaluators=self.specs)
        groups: dict[tuple[int, int, int], list[Any]] = defaultdict(list)
        for r in found:
            if r.settings_json.get("kind") != "tom":
                groups[(r.game_id, r.action_seq, r.part)].append(r)
        new = [store_notes.NewItem(i.key, i.task.value, i.source, i.game_id, todo[key[0]] or "", i.to_json())
               for key, rs in sorted(groups.items()) for i in item_from_rows(rs)]
        added = await store_notes.add_items(self.store, new)
        self._done |= set(todo)
        return added

    async def _show(self, member: str, tenant: str, lead: str = "") -> str:
        served = await store_notes.serve(self.store, member, tenant, per_item=self.per_item)
        if served is None:
            return (lead + "No item to judge right now: every item is done, is one you played, or you judged it "
                    "already. Finished games with scored clues bring new ones.").strip()
        if served.lapsed and not lead:
            lead = LAPSED + "\n"
        if served.item.get("task") == deep_study.TASK:
            d = deep_study.DeepItem.from_json(served.item)
            return (lead + f"DEEP human rating:\n{deep_study.prompt_text(d)}\n"
                    f"{RATE}: judge 1-5.").strip()
        item = Item.from_json(served.item)
        return (lead + f"SNEAK human study, {item.task.value} task:\n{prompt_text(item)}\n"
                f"{HOW}: judge 1-{len(item.options)}.").strip()

    async def turn(self, member: str, tenant: str | None, answer: str | None = None) -> str:
        """One step for a member: show their item, or take their answer and show the next."""
        place = tenant or ""
        await self.refresh()
        if answer is None or not answer.strip():
            return await self._show(member, place)
        served = await store_notes.serve(self.store, member, place, per_item=self.per_item)
        if served is None:
            return await self._show(member, place)
        if served.item.get("task") == deep_study.TASK:
            return await self._rate(member, place, served, answer)
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
            return await self._show(member, place, why + "\n")
        score = running_score(await store_notes.record(self.store, member))
        said = "Right!" if right else f"Not this time: it was {item.gold + 1}. {item.options[item.gold]}."
        return await self._show(member, place, f"{said} Your score: {score}.\n\n")


    async def _rate(self, member: str, place: str, served: store_notes.Served, answer: str) -> str:
        """A member's 1-5 rating of a DEEP description; the judge's rating is shown only after theirs."""
        rating = deep_study.parse(answer)
        if rating is None:
            return f"{RATE}, from 1 to 5; nothing was recorded."
        if served.fresh or await store_notes.answer(self.store, member, rating - 1, None) is None:
            why = LAPSED if served.lapsed else "That answer came before this item was shown; nothing was recorded."
            return await self._show(member, place, why + "\n")
        d = deep_study.DeepItem.from_json(served.item)
        judge = f"the judge gave {d.judge_rating}" if d.judge_rating is not None else "the judge gave no rating"
        n = await store_notes.answered(self.store, member)
        return await self._show(member, place, f"Recorded {rating} ({judge}). Items you have judged: {n}.\n\n")


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


async def study_report(store: UnitsOfWork) -> str:
    from models.eval.human import render, report

    raw, votes = await store_notes.study(store)
    text = render(report([Item.from_json(d) for d in raw if d.get("task") != deep_study.TASK], votes))
    deep = [deep_study.DeepItem.from_json(d) for d in raw if d.get("task") == deep_study.TASK]
    if deep:
        ratings = [deep_study.Vote(k, a, c + 1) for k, a, c in await store_notes.votes_of(store, deep_study.TASK)]
        text += "\n\n" + deep_study.render(deep_study.report(deep, ratings))
    return text
