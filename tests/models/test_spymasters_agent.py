"""The AI players' Spymasters knowledge: embedding baseline games end with legal moves only, the
spymaster aims at its own words and away from the assassin, guessers follow the clue, prompts
give each role its own information (real all-MiniLM-L6-v2, bundled and offline)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from games.base import Action, Choice, Text
from games.spymasters import GAME
from games.spymasters.state import STOP, SpymastersState
from games.text import reveals_secret
from models.agents.embed import EmbeddingAgent
from models.agents.games import game_agent
from models.agents.games.spymasters import clue_scores, hidden_by_card, view_of
from models.agents.prompts import PromptBook, build_messages
from models.embeddings import VocabIndex
from models.worker.embedding_backend import embedder_for

RED = ("apple", "banana", "cherry", "grape", "lemon", "eagle", "forest", "guitar", "hammer")
BLUE = ("jacket", "kettle", "pencil", "mirror", "needle", "ocean", "piano", "rocket")
BYSTANDERS = ("saddle", "tiger", "umbrella", "violin", "wagon", "yacht", "zebra")
ASSASSIN = "snow"
WORDS = (*RED, *BLUE, *BYSTANDERS, ASSASSIN)
DEAL = {"words": list(WORDS),
        "key": ["red"] * 9 + ["blue"] * 8 + ["bystander"] * 7 + ["assassin"], "starting": "red", "spymasters": [0, 1]}


@pytest.fixture(scope="module")
def index() -> VocabIndex:
    return VocabIndex(embedder_for("minilm"))


def act(agent: EmbeddingAgent, s: SpymastersState, seat: int) -> Action:
    spec = GAME.legal(s, seat)
    assert spec is not None
    return asyncio.run(agent.act(GAME.observe(s, seat), spec)).action


def play(seats: int, seed: int, index: VocabIndex, **options: Any) -> tuple[SpymastersState, list[Action]]:
    s, _ = GAME.new(GAME.make_config(**options), seats, seed)
    agents = [EmbeddingAgent(index, seed=seed * 10 + i) for i in range(seats)]
    actions = []
    for _ in range(400):
        if GAME.result(s) is not None:
            break
        seat = min(GAME.to_act(s))
        action = act(agents[seat], s, seat)
        s, _ = GAME.apply(s, seat, action)  # raises IllegalAction on an illegal answer
        actions.append(action)
    assert GAME.result(s) is not None, "the game must end"
    return s, actions


@pytest.mark.parametrize(("seats", "seed"), [(4, 1), (5, 2), (8, 3)])
def test_embedding_agents_play_whole_games_with_legal_moves(seats: int, seed: int, index: VocabIndex) -> None:
    s, actions = play(seats, seed, index)
    result = GAME.result(s)
    assert result is not None
    clues = [a.value[0] for a in actions if a.kind == "clue"]
    assert clues and all(c.isalpha() for c in clues)
    # Better than chance: the baseline's guessers find words of their own more often than not.
    found = sum(int(c["found"]) for c in result.details["clues"])
    assert found >= len(result.details["clues"]) * 0.5, result.details["clues"]


def test_the_spymaster_aims_at_its_words_and_away_from_the_assassin(index: VocabIndex) -> None:
    s, _ = GAME.new(GAME.make_config(deal=DEAL), 4, 0)
    agent = EmbeddingAgent(index, seed=1)
    clue = act(agent, s, 0)
    assert clue.kind == "clue"
    v = view_of(GAME.observe(s, 0))
    scores, numbers = clue_scores(index, index.vec(clue.value[0])[None, :], v)
    sims = {w: float(index.vec(w) @ index.vec(clue.value[0])) for w in WORDS}
    nearest = sorted(sims, key=sims.__getitem__, reverse=True)[: int(numbers[0])]
    assert all(w in RED for w in nearest), (clue, nearest)
    assert sims[ASSASSIN] < max(sims[w] for w in RED)
    s, _ = GAME.apply(s, 0, clue)
    number = act(agent, s, 0)
    assert number == Action.choose("number", str(int(numbers[0])))


def test_a_guesser_picks_the_word_nearest_the_clue_and_stops_at_the_number(index: VocabIndex) -> None:
    s, _ = GAME.new(GAME.make_config(deal=DEAL), 4, 0)
    s, _ = GAME.apply(s, 0, Action.say("clue", "fruit"))
    s, _ = GAME.apply(s, 0, Action.choose("number", "1"))
    agent = EmbeddingAgent(index, seed=2)
    first = act(agent, s, 2)
    assert first.value[0] in RED[:5], first
    s, _ = GAME.apply(s, 2, first)
    assert act(agent, s, 2) == Action.choose("guess", STOP)


def test_prompts_give_the_key_to_spymasters_only() -> None:
    book = PromptBook()
    s, _ = GAME.new(GAME.make_config(deal=DEAL), 6, 0)
    spec = GAME.legal(s, 0)
    assert isinstance(spec, Text)
    messages, prompt = build_messages(book, GAME.observe(s, 0), spec, {})
    text = "\n".join(m.content for m in messages)
    assert f"The assassin: {ASSASSIN}" in text and "Your team's hidden words: apple" in text
    assert set(prompt.forbidden) == set(WORDS)
    s, _ = GAME.apply(s, 0, Action.say("clue", "fruit"))
    number = GAME.legal(s, 0)
    assert isinstance(number, Choice)
    messages, _ = build_messages(book, GAME.observe(s, 0), number, {chr(65 + i): o for i, o in enumerate(number.options)})
    assert "Your clue is: fruit" in messages[-1].content
    s, _ = GAME.apply(s, 0, Action.choose("number", "2"))
    for guesser in (2, 4):
        guess = GAME.legal(s, guesser)
        assert isinstance(guess, Choice)
        labelled = {chr(65 + i): o for i, o in enumerate(guess.options)}
        messages, prompt = build_messages(book, GAME.observe(s, guesser), guess, labelled)
        text = "\n".join(m.content for m in messages)
        assert "assassin:" not in text.lower() and "hidden words" not in text and prompt.forbidden == ()
        assert "Your spymaster's clue: fruit, 2" in text


def test_strategy_knowledge_ranks_clues_and_guesses(index: VocabIndex) -> None:
    agent = game_agent("spymasters")
    s, _ = GAME.new(GAME.make_config(deal=DEAL), 4, 0)
    obs = GAME.observe(s, 0)
    spec = GAME.legal(s, 0)
    assert isinstance(spec, Text)
    (words,) = agent.candidates(index, obs, spec, 5)
    assert len(words) == 5 and not set(words) & set(WORDS)
    good = agent.text_score(index, None, obs, Action.say("clue", "fruit"))  # type: ignore[arg-type]
    bad = agent.text_score(index, None, obs, Action.say("clue", "winter"))  # type: ignore[arg-type]
    assert good > bad
    assert hidden_by_card(view_of(obs))["assassin"] == [ASSASSIN]
    s, _ = GAME.apply(s, 0, Action.say("clue", "fruit"))
    s, _ = GAME.apply(s, 0, Action.choose("number", "2"))
    guess = GAME.legal(s, 2)
    assert isinstance(guess, Choice)
    scores = agent.evidence(index, GAME.observe(s, 2), guess)
    assert scores is not None and max(scores, key=scores.__getitem__) in RED[:5]
    assert np.isfinite(list(scores.values())).all()


# --------------------------------------------------------------------------- the LLM agent


def test_llm_agents_play_a_whole_game_on_the_fake_model() -> None:
    """Every seat an LLM agent over the deterministic fake model: clues by generation (a board word
    is refused before the engine sees it and the model is asked again), numbers and guesses by
    label scoring; every move the engine accepts."""
    from models.agents.llm import LLMAgent
    from models.client import InProcessClient
    from models.types import GenerateRequest
    from models.worker.fake_backend import FakeBackend

    asked: list[str] = []

    def reply(req: GenerateRequest) -> str:
        asked.append(req.messages[-1].content)
        # First a board word (refused by the agent), then a clue of its own.
        return "ANSWER: apple" if len(asked) % 2 else f"ANSWER: zorquin{'abcdefghij'[len(asked) // 2 % 10]}"

    client = InProcessClient.over(FakeBackend(reply=reply))

    async def inference_for(spec: str):
        await client.start()
        return client

    async def game() -> SpymastersState:
        s, _ = GAME.new(GAME.make_config(deal=DEAL), 5, 0)
        agents = [LLMAgent(inference_for, seed=i) for i in range(5)]
        for _ in range(300):
            if GAME.result(s) is not None:
                break
            seat = min(GAME.to_act(s))
            spec = GAME.legal(s, seat)
            assert spec is not None
            decision = await agents[seat].act(GAME.observe(s, seat), spec)
            s, _ = GAME.apply(s, seat, decision.action)
        await client.aclose()
        return s

    s = asyncio.run(game())
    result = GAME.result(s)
    assert result is not None
    assert any("Your team's hidden words:" in a for a in asked), "the spymaster's prompt shows its words"
    assert all(c["clue"].startswith("zorquin") for c in result.details["clues"])
    assert any("refused" in a for a in asked), "the board word was sent back with the reason"


# --------------------------------------------------------------------------- the strategic agent (llm:default)


def strategic_game(index: VocabIndex, seed: int, seats: int = 4, **options: Any) -> tuple[SpymastersState, list[Any]]:
    """A whole game, every seat the strategic agent with its default settings (no model use; the fake
    backend is there to prove it is never asked), each move checked by the engine as it comes."""
    from models.agents.llm import LLMAgent, Mode
    from models.agents.propose import Strategy
    from models.client import InProcessClient
    from models.worker.fake_backend import FakeBackend

    client = InProcessClient.over(FakeBackend())

    async def inference_for(spec: str):
        await client.start()
        return client

    async def game() -> tuple[SpymastersState, list[Any]]:
        s, _ = GAME.new(GAME.make_config(**options), seats, seed)
        agents = [LLMAgent(inference_for, seed=seed * 10 + i, mode=Mode.STRATEGIC, strategy=Strategy(index=index))
                  for i in range(seats)]
        decisions = []
        for _ in range(300):
            if GAME.result(s) is not None:
                break
            seat = min(GAME.to_act(s))
            spec = GAME.legal(s, seat)
            assert spec is not None
            decision = await agents[seat].act(GAME.observe(s, seat), spec)
            s, _ = GAME.apply(s, seat, decision.action)  # legal on the first try, or this raises
            decisions.append(decision)
        await client.aclose()
        return s, decisions

    return asyncio.run(game())


def test_the_strategic_spymaster_links_its_words_away_from_the_assassin(index: VocabIndex) -> None:
    agent = game_agent("spymasters")
    s, _ = GAME.new(GAME.make_config(deal=DEAL), 4, 0)
    obs = GAME.observe(s, 0)
    spec = GAME.legal(s, 0)
    assert isinstance(spec, Text)
    (words,) = agent.candidates(index, obs, spec, 5)
    best = max(words, key=lambda w: agent.text_score(index, None, obs, Action.say("clue", w)))  # type: ignore[arg-type]
    s, _ = GAME.apply(s, 0, Action.say("clue", best))
    number_spec = GAME.legal(s, 0)
    assert isinstance(number_spec, Choice)
    number_ev = agent.evidence(index, GAME.observe(s, 0), number_spec)
    assert number_ev is not None
    number = int(max(number_ev, key=number_ev.__getitem__))
    assert number >= 2, (best, number)  # nine fruit, tools and places: there is a link to make
    sims = {w: float(index.vec(w) @ index.vec(best)) for w in WORDS}
    nearest = sorted(sims, key=sims.__getitem__, reverse=True)[:number]
    assert all(w in RED for w in nearest), (best, nearest)
    assert sims[ASSASSIN] < min(sims[w] for w in nearest)


def test_the_strategic_guessers_stop_at_the_number_and_when_unsure(index: VocabIndex) -> None:
    agent = game_agent("spymasters")
    s, _ = GAME.new(GAME.make_config(deal=DEAL), 4, 0)
    s, _ = GAME.apply(s, 0, Action.say("clue", "fruit"))
    s, _ = GAME.apply(s, 0, Action.choose("number", "2"))
    for _ in range(2):
        spec = GAME.legal(s, 2)
        assert isinstance(spec, Choice)
        scores = agent.evidence(index, GAME.observe(s, 2), spec)
        assert scores is not None
        pick = max(scores, key=scores.__getitem__)
        assert pick in RED[:5], pick
        s, _ = GAME.apply(s, 2, Action.choose("guess", pick))
    spec = GAME.legal(s, 2)
    assert isinstance(spec, Choice)
    scores = agent.evidence(index, GAME.observe(s, 2), spec)
    assert scores is not None and max(scores, key=scores.__getitem__) == STOP  # no bonus guess risked
    # A clue that points nowhere on the board: one guess (the rules ask for it), then stop.
    s, _ = GAME.new(GAME.make_config(deal=DEAL), 4, 0)
    s, _ = GAME.apply(s, 0, Action.say("clue", "quantum"))
    s, _ = GAME.apply(s, 0, Action.choose("number", "3"))
    s, _ = GAME.apply(s, 2, Action.choose("guess", "apple"))
    spec = GAME.legal(s, 2)
    assert isinstance(spec, Choice)
    scores = agent.evidence(index, GAME.observe(s, 2), spec)
    assert scores is not None and max(scores, key=scores.__getitem__) == STOP


def test_strategic_self_play_links_words_with_no_variant_clue_and_replays_exactly(index: VocabIndex) -> None:
    s, decisions = strategic_game(index, 5)
    result = GAME.result(s)
    assert result is not None
    clues = list(s.history)
    assert clues and max(c.number for c in clues) >= 2
    for c in clues:
        assert not any(reveals_secret(c.clue, w) or reveals_secret(w, c.clue) for w in s.words), c.clue
    assert {d.source.value for d in decisions} <= {"specialist", "rules"}, {d.source for d in decisions}  # never the model
    again, _ = strategic_game(index, 5)
    assert [(c.clue, c.number, [g.word for g in c.guesses]) for c in again.history] == \
        [(c.clue, c.number, [g.word for g in c.guesses]) for c in s.history]
