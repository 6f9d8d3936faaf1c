"""Instances from logged games: what each game's moves become, and the same every time."""

from __future__ import annotations

from games import decks
from games.base import normalize
from models.eval.games import instances_from_log
from models.eval.games.decrypto import DECRYPTO_CATEGORY, DECRYPTO_DISTRACTORS
from models.eval.games.spy import SPY_CATEGORY, SPY_DISTRACTORS
from models.eval.instances import Instance
from storage.store import Store
from tests.eval.logging_helpers import log_random_game


async def test_chameleon_clues_map_to_the_card_and_secret(store: Store) -> None:
    gid, result = await log_random_game(store, "chameleon", "sneak", 5, seed=11, humans=(0, 2))
    assert result is not None
    (rnd,) = result.details["rounds"]
    log = await store.load_game(gid)
    got = instances_from_log(log)
    clues = [a for a in log.actions if a.kind == "clue"]
    assert [i.action_seq for i in got] == [a.seq for a in clues] and len(got) == 5
    for inst, a in zip(got, clues, strict=True):
        assert inst.category == rnd["category"] and list(inst.candidates) == rnd["card"] and len(inst.candidates) == 12
        assert inst.secret == rnd["secret"] and inst.message == a.value[0] and inst.seat == a.seat
        assert inst.bluff == (a.seat == rnd["chameleon"])
        assert inst.role == ("chameleon" if inst.bluff else "player")
        assert inst.speaker_kind == ("human" if a.seat in (0, 2) else "ai")
    assert sum(i.bluff for i in got) == 1  # the chameleon's clue is scored too, as a bluff


async def test_spy_descriptions_use_the_speakers_word_and_a_seeded_candidate_set(store: Store) -> None:
    gid, result = await log_random_game(store, "spy", "classic", 6, seed=5, options={"blank": True})
    assert result is not None
    d = result.details
    log = await store.load_game(gid)
    got = instances_from_log(log)
    assert len(got) == len(d["descriptions"]) > 0
    pair = {d["villager_word"], d["spy_word"]}
    for inst in got:
        role = d["roles"][inst.seat]
        assert inst.category == SPY_CATEGORY and inst.role == role
        assert inst.secret == (d["spy_word"] if role == "spy" else d["villager_word"])  # Mr. White: the villagers' word
        assert inst.bluff == (role == "mr_white")
        assert pair <= set(inst.candidates) and len(inst.candidates) == 2 + SPY_DISTRACTORS
        others = {normalize(w) for w in inst.candidates} - {normalize(w) for w in pair}
        deck_words = {normalize(w) for p in decks.pairs() for w in p}
        assert others <= deck_words
    assert len({i.candidates for i in got}) == 1  # one candidate set per game


async def test_decrypto_hints_map_to_the_keyword_of_their_digit(store: Store) -> None:
    gid, _ = await log_random_game(store, "decrypto", "teams", 4, seed=3, humans=(1,))
    log = await store.load_game(gid)
    got = instances_from_log(log)
    keywords = {e.data["team"]: e.data["keywords"] for e in log.events if e.kind == "keywords"}
    codes = [e for e in log.events if e.kind == "code"]
    hints = [a for a in log.actions if a.kind == "hints"]
    assert len(got) == 3 * len(hints) > 0
    for a in hints:
        mine = [i for i in got if i.action_seq == a.seq]
        assert [i.part for i in mine] == [0, 1, 2] and [i.message for i in mine] == list(a.value)
        # The encoder's latest private code before this action.
        code = [e for e in codes if e.audience == [a.seat] and e.seq < min(x.seq for x in log.events
                                                                                if x.action_seq == a.seq)][-1]
        team_kw = keywords[code.data["team"]]
        for i, digit in zip(mine, code.data["code"].split("-"), strict=True):
            assert i.secret == team_kw[digit]
            assert i.category == DECRYPTO_CATEGORY and i.role == "encoder"
            assert list(i.candidates[:4]) == [team_kw[str(k)] for k in range(1, 5)]
            assert len(i.candidates) == 4 + DECRYPTO_DISTRACTORS
            every = {normalize(w) for kw in keywords.values() for w in kw.values()}
            assert not every & {normalize(w) for w in i.candidates[4:]}  # distractors are never game keywords


async def test_instances_are_reproducible_from_the_log_alone(store: Store) -> None:
    for game, variant, seats in (("chameleon", "classic", 4), ("spy", "classic", 5), ("decrypto", "benchmark", 3)):
        gid, _ = await log_random_game(store, game, variant, seats, seed=21)
        first = instances_from_log(await store.load_game(gid))
        again = instances_from_log(await store.load_game(gid))
        assert first == again and first
        assert len({i.key for i in first}) == len(first)  # one key per move part


def test_an_instance_refuses_a_secret_outside_the_candidates() -> None:
    import pytest

    with pytest.raises(ValueError):
        Instance(game="chameleon", category="x", candidates=("a", "b"), secret="c", message="m")
