"""The human study cannot leak: simulated members who remember everything they were shown (the secret and
the right message of every ally item, the answer of every item) still judge each chameleon item from its clue
alone, because no member is served both roles of a clue; and the report refuses its tables when answers overlap."""

from __future__ import annotations

import re

import sqlalchemy as sa

from models.eval.decoys import FixedDecoys
from models.eval.evaluators import EmbeddingEvaluator
from models.eval.human import Item, Task
from models.eval.live import score_games
from models.eval.study import HumanStudy, study_report
from models.worker.embedding_backend import embedder_for
from storage import annotations as notes
from storage.store import Store
from storage.tables import AnnotationRow, table_of
from tests.eval.logging_helpers import log_random_game

DECOYS = FixedDecoys(["outdoors", "everyday", "colourful", "household", "popular", "classic"])
SCOPE = notes.Scope("console", frozenset({"tty"}))


def _card(text: str) -> str:
    found = re.search(r"^Candidates: (.*)$", text, re.M)
    assert found is not None
    return ", ".join(sorted(found.group(1).split(", ")))


class Member:
    """Answers 1 unless memory says better: a chameleon item whose message they saw as an ally's answer."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.secret_of: dict[tuple[str, str], str] = {}  # (card, message) -> the secret, learned from ally items
        self.used_memory = 0

    def answer(self, text: str) -> str:
        options = re.findall(r"^(\d+)\. (.*)$", text, re.M)
        message = re.search(r"^Message: \u201c(.*)\u201d$", text, re.M)
        if message and (_card(text), message.group(1)) in self.secret_of:
            self.used_memory += 1
            return next(n for n, o in options if o == self.secret_of[(_card(text), message.group(1))])
        return "1"

    def learn(self, shown: str, reply: str) -> None:
        secret = re.search(r"^Secret: (.*)$", shown, re.M)
        if secret is None:
            return
        right = re.search(r"^1\. (.*)$", shown, re.M) if reply.startswith("Right!") else \
            re.search(r"Not this time: it was \d+\. (.*?)\.\s", reply)
        assert right is not None
        self.secret_of[(_card(shown), right.group(1))] = secret.group(1)


async def test_members_who_remember_everything_judge_chameleon_items_from_the_clue_alone(db_url: str) -> None:
    async with await Store.open(db_url) as store:
        for seed in (3, 4):
            await log_random_game(store, "chameleon", "sneak", 4, seed=seed, humans=(), agent="random",
                                  tenant="console")
        await score_games(store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")], DECOYS)
        study = HumanStudy(store, ["embed:minilm"])
        members = [Member(f"console:m{k}") for k in range(13)]
        for m in members:
            text = await study.turn(m.key, SCOPE)
            while "No item to judge" not in text:
                reply = await study.turn(m.key, SCOPE, m.answer(text))
                m.learn(text, reply)
                text = reply
        raw, votes = await notes.study(store)
        items = [Item.from_json(d) for d in raw]
        assert len(items) == 12 and all(len(votes[i.key]) == 5 for i in items)  # six clues, both roles, complete
        # Memory never helped: every chameleon answer is the clue-only guess (1), so the chameleon accuracy is
        # that of the guess, not 100%.
        assert sum(m.used_memory for m in members) == 0
        cham = [i for i in items if i.task is Task.CHAMELEON]
        assert all(v == [0] * 5 for i in cham for v in [votes[i.key]])
        accuracy = sum(i.gold == 0 for i in cham) / len(cham)
        assert accuracy < 1
        report = await study_report(store)
        assert "Table 6" in report and "Answers per member and task (10 member(s)" in report
        table6 = report.split("Table 6")[1].split("Table 7")[0]
        row = next(line.split() for line in table6.splitlines() if line.strip().startswith("chameleon"))
        assert row[4] == f"{100 * accuracy:.1f}%"  # worker accuracy, as the clue-only guess scores it

        # An old answer that knew the secret (both roles of one clue by one member): the tables are refused.
        ally = next(i for i in items if i.task is Task.ALLY)
        seen = (await notes.shown(store))
        who = next(m for m, keys in seen.items() if ally.key in keys)
        twin = notes.sibling(ally.key)
        assert twin is not None
        async with store.write() as conn:
            await conn.execute(sa.insert(table_of(AnnotationRow)).values(item_key=twin, annotator=who, tenant="console",
                                                                          choice=0, correct=True))
        refused = await study_report(store)
        assert "Tables 6 and 7 are not printed: 1 member(s) answered both roles of 1 clue(s)" in refused
        assert "Table 6:" not in refused and "Answers per member and task" in refused
