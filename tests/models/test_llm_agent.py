"""The LLM agents: prompt contents per role, privacy, strict parsing, re-prompts, shuffled label scoring.

Replies are scripted through FakeBackend behind the in-process client, or come
from the tiny random llama (real tokenizer, chat template and label scoring).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

import pytest

import games
from games.base import Choice, Option, Text, contains_word
from models.agents import AgentEntry, AgentKind, AgentRegistry
from models.agents.answers import parse_choice_answer, parse_text_answer
from models.agents.llm import AnswerRefused, LLMAgent
from models.agents.prompts import PromptBook
from models.agents.wiring import register_agents
from models.client import InProcessClient
from models.types import GenerateRequest, Inference, ScoreRequest, ScoreResult
from models.worker.batcher import Batcher
from models.worker.fake_backend import FakeBackend


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def agent_over(backend: Any, **kwargs: Any) -> tuple[LLMAgent, Callable[[], Any]]:
    client = InProcessClient.over(backend)

    async def inference_for(spec: str) -> Inference:
        await client.start()
        return client

    return LLMAgent(inference_for, **kwargs), client.aclose


def state_at(game_id: str, variant: str, seats: int, seed: int, until: Callable[[Any, Any], bool]) -> tuple[Any, Any]:
    """Play the engine's random moves until ``until(game, state)`` holds."""
    from games.base import rng
    from games.play import random_action

    g = games.get(game_id)
    s, _ = g.new(g.make_config(variant), seats, seed)
    for step in range(400):
        if until(g, s):
            return g, s
        seat = min(g.to_act(s))
        for attempt in range(50):
            try:
                legal = g.legal(s, seat)
                assert legal is not None
                s, _ = g.apply(s, seat, random_action(legal, rng(seed, step, attempt)))
                break
            except Exception:
                continue
    raise AssertionError("state not reached")


def secrets_hidden_from(g: Any, s: Any, seat: int) -> list[str]:
    out = []
    for sec in g.secrets(s):
        if seat not in sec.known_by and not sec.among:
            out.append(sec.value)
    return out


# --------------------------------------------------------------------------- prompts


def test_decrypto_prompts_give_each_role_its_information_only() -> None:
    g, s = state_at("decrypto", "benchmark", 3, 5, lambda g, s: s.phase.value == "decode" and s.round == 2)
    agent = LLMAgent(lambda spec: None, seed=1)  # type: ignore[arg-type,return-value]
    keywords = list(s.keywords[0])
    texts = {}
    for seat in (1, 2):
        msgs, _, labelled = agent.messages(g.observe(s, seat), g.legal(s, seat))
        texts[seat] = "\n".join(m.content for m in msgs)
        assert len(labelled) == 24 and all(f"{k}) " in texts[seat] for k in labelled)
        assert "Turn 1 summary" in texts[seat] and "Hint history" in texts[seat]
        for h in s.hints[0]:
            assert h in texts[seat]
    assert all(k in texts[1] for k in keywords), "the decoder sees the keywords"
    assert not any(f": {k}" in texts[2] for k in keywords), "the interceptor never does"
    assert "You are the Interceptor" in texts[2] and "You are the Decoder" in texts[1]
    # The encoder's prompt holds its code; nobody else's does.
    g, s = state_at("decrypto", "benchmark", 3, 5, lambda g, s: s.phase.value == "encode" and s.round == 2)
    enc = "\n".join(m.content for m in agent.messages(g.observe(s, 0), g.legal(s, 0))[0])
    code = "-".join(map(str, s.codes[0]))
    assert f"The code is {code}" in enc and "ANSWER: <hint for" in enc
    g2, s2 = state_at("decrypto", "benchmark", 3, 5, lambda g, s: s.phase.value == "decode" and s.round == 2)
    for seat in (1, 2):
        other = "\n".join(m.content for m in agent.messages(g2.observe(s2, seat), g2.legal(s2, seat))[0])
        assert "The code is" not in other


@pytest.mark.parametrize(("game_id", "variant", "seats"), [("spy", "classic", 5), ("chameleon", "classic", 4), ("decrypto", "teams", 4)])
def test_no_prompt_holds_another_seats_secret(game_id: str, variant: str, seats: int) -> None:
    from games.base import rng
    from games.play import random_action

    g = games.get(game_id)
    agent = LLMAgent(lambda spec: None, seed=2)  # type: ignore[arg-type,return-value]
    for seed in (1, 2, 3):
        s, _ = g.new(g.make_config(variant), seats, seed)
        for step in range(200):
            if g.result(s) is not None:
                break
            for seat in sorted(g.to_act(s)):
                spec = g.legal(s, seat)
                assert spec is not None
                msgs, _, _ = agent.messages(g.observe(s, seat), spec)
                text = "\n".join(m.content for m in msgs).lower()
                for secret in secrets_hidden_from(g, s, seat):
                    # Whole-word check: a hidden keyword or word must not appear in the prompt.
                    assert not contains_word(text, secret), (seat, secret)
            seat = min(g.to_act(s))
            for attempt in range(50):
                try:
                    legal = g.legal(s, seat)
                    assert legal is not None
                    s, _ = g.apply(s, seat, random_action(legal, rng(seed, step, attempt)))
                    break
                except Exception:
                    continue


def test_spy_and_chameleon_prompts_name_the_seat_and_its_word() -> None:
    agent = LLMAgent(lambda spec: None, seed=0)  # type: ignore[arg-type,return-value]
    g, s = state_at("spy", "spygame", 4, 3, lambda g, s: s.phase.value == "vote")
    seat = min(g.to_act(s))
    text = "\n".join(m.content for m in agent.messages(g.observe(s, seat), g.legal(s, seat))[0])
    assert f"You are Player {seat + 1}." in text and repr(s.word_of(seat)) in text
    for d in g.observe(s, seat).view["descriptions"]:
        assert d["text"] in text
    g, s = state_at("chameleon", "classic", 4, 3, lambda g, s: s.phase.value == "clues")
    clue = Text("clue", "Give a clue", ("Clue",))
    for seat in range(4):
        text = "\n".join(m.content for m in agent.messages(g.observe(s, seat), clue)[0])
        assert s.category in text
        if seat == s.chameleon:
            assert "you do not know the secret" in text and f"Secret word: {s.secret}" not in text
        else:
            assert f"Secret word: {s.secret}" in text


def test_a_researcher_folder_overrides_one_template(tmp_path: Any) -> None:
    (tmp_path / "spy_vote.toml").write_text('system = "RULES: $rules"\nuser = "Pick $labels for $player:\\n$options"\n')
    agent = LLMAgent(lambda spec: None, prompts=PromptBook(tmp_path))  # type: ignore[arg-type,return-value]
    g, s = state_at("spy", "spygame", 4, 3, lambda g, s: s.phase.value == "vote")
    seat = min(g.to_act(s))
    msgs, _, _ = agent.messages(g.observe(s, seat), g.legal(s, seat))
    assert msgs[0].content.startswith("RULES: You are playing") and msgs[1].content.startswith("Pick A, B, C for Player")
    (tmp_path / "spy_vote.toml").write_text('system = "$nonsense"\nuser = "x"\n')
    with pytest.raises(ValueError, match="nonsense"):
        LLMAgent(lambda spec: None, prompts=PromptBook(tmp_path)).messages(g.observe(s, seat), g.legal(s, seat))  # type: ignore[arg-type,return-value]


# --------------------------------------------------------------------------- strict parsing

ONE = Text("guess", "", ("Your guess",), max_words=3, max_chars=40)
HINTS = Text("hints", "", ("Hint for 3", "Hint for 1", "Hint for 4"), max_words=2, max_chars=30)


def test_strict_text_parsing() -> None:
    assert parse_text_answer("I think so.\nANSWER: apple", ONE) == ("apple",)
    assert parse_text_answer('ANSWER: "sea breeze" | wing | music.', HINTS) == ("sea breeze", "wing", "music")
    for bad, why in [
        ("ANSWER: not Player 1, Player 2", "one answer"),
        ("ANSWER: apple or pear", "one answer"),
        ("ANSWER: apple, pear", "one answer"),
        ("apple", "no line"),
        ("ANSWER: apple\nANSWER: pear", "exactly one"),
        ("ANSWER: a | b", "exactly 3"),
        ("ANSWER: one two three | b | c", "at most 2"),
    ]:
        spec = HINTS if "|" in bad else ONE
        with pytest.raises(ValueError, match=why):
            parse_text_answer(bad, spec)
    with pytest.raises(ValueError, match="secret"):
        parse_text_answer("ANSWER: big Apple", ONE, forbidden=("apple",))


def test_strict_choice_parsing_never_substring_matches() -> None:
    labelled = {"A": Option("0", "Player 1"), "B": Option("9", "Player 10"), "C": Option("1", "Player 2")}
    assert parse_choice_answer("ANSWER: B", labelled) == "9"
    assert parse_choice_answer("ANSWER: Player 1", labelled) == "0"
    for bad in ("ANSWER: not Player 1, Player 2", "ANSWER: player1", "ANSWER: A or C", "ANSWER: D"):
        with pytest.raises(ValueError):
            parse_choice_answer(bad, labelled)


# --------------------------------------------------------------------------- generation with re-prompts


def test_reprompts_with_the_reason_then_accepts() -> None:
    g, s = state_at("chameleon", "classic", 4, 3, lambda g, s: s.phase.value == "clues")
    seat = min(g.to_act(s))
    replies = iter(["Let me think: ANSWER: fruit, pie", "ANSWER: orchard"])
    seen: list[GenerateRequest] = []

    def reply(req: GenerateRequest) -> str:
        seen.append(req)
        return next(replies)

    agent, close = agent_over(FakeBackend(reply=reply), seed=4)
    decision = run(agent.act(g.observe(s, seat), g.legal(s, seat)))
    assert decision.action.value == ("orchard",)
    assert [c.error is not None for c in decision.calls] == [True, False]
    assert "refused" in seen[1].messages[-1].content and seen[1].messages[-2].role == "assistant"
    assert decision.calls[0].operation == "generate" and decision.calls[1].retries == 1
    run(close())


def test_gives_up_after_the_retry_limit() -> None:
    g, s = state_at("spy", "spygame", 4, 3, lambda g, s: s.phase.value == "describe")
    seat = min(g.to_act(s))
    calls = []

    def reply(req: GenerateRequest) -> str:
        calls.append(req)
        return ""  # the model ends its reply right after the prefilled "ANSWER:"

    agent, close = agent_over(FakeBackend(reply=reply), retries=2)
    with pytest.raises(AnswerRefused):
        run(agent.act(g.observe(s, seat), g.legal(s, seat)))
    assert len(calls) == 3
    run(close())


def test_own_word_is_refused_before_the_engine_sees_it() -> None:
    g, s = state_at("spy", "spygame", 4, 3, lambda g, s: s.phase.value == "describe")
    seat = min(g.to_act(s))
    word = s.word_of(seat)
    agent, close = agent_over(FakeBackend(reply=[f"ANSWER: my {word} is nice", "ANSWER: something you hold"]), max_tokens=40)
    decision = run(agent.act(g.observe(s, seat), g.legal(s, seat)))
    assert decision.action.value == ("something you hold",)
    assert "secret word" in (decision.calls[0].error or "")
    run(close())


# --------------------------------------------------------------------------- label scoring


class RecordingScorer:
    """An Inference that prefers one option text and records what it was asked."""

    model_id = "recording"

    def __init__(self, favourite: str) -> None:
        self.favourite = favourite
        self.requests: list[ScoreRequest] = []

    async def generate(self, req: GenerateRequest) -> Any:
        raise AssertionError("choices are scored, not generated")

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        self.requests.append(req)
        text = req.messages[-1].content
        fav = next(line.split(")")[0] for line in text.splitlines() if line.endswith(f") {self.favourite}"))
        raw = [5.0 if lab == fav else 1.0 for lab in req.labels]
        z = sum(math.exp(x) for x in raw)
        return ScoreResult(tuple(math.exp(x) / z for x in raw), self.model_id)

    async def aclose(self) -> None:
        pass


def test_shuffled_labels_map_back_to_the_option() -> None:
    g, s = state_at("decrypto", "benchmark", 3, 9, lambda g, s: s.phase.value == "decode")
    scorer = RecordingScorer("2-4-1")

    async def inference_for(spec: str) -> Inference:
        return scorer

    orders = set()
    for seed in range(6):
        agent = LLMAgent(inference_for, seed=seed)
        decision = run(agent.act(g.observe(s, 1), g.legal(s, 1)))
        assert decision.action.value == ("2-4-1",)
        log = decision.calls[0]
        assert log.operation == "score" and set(log.label_probs) == set(g.legal(s, 1).ids())
        assert sum(log.label_probs.values()) == pytest.approx(1.0)
        assert max(log.label_probs, key=log.label_probs.get) == "2-4-1"
        orders.add(tuple(log.prompt["labels"].values()))
        assert scorer.requests[-1].mode == "first_token" and scorer.requests[-1].labels[0] == "A"
    assert len(orders) == 6, "each seed shuffles the options differently"


def test_more_than_26_options_are_scored_by_loglik() -> None:
    spec = Choice("guess", "which?", tuple(Option(f"w{i}", f"word{i}") for i in range(30)))
    agent = LLMAgent(lambda spec: None)  # type: ignore[arg-type,return-value]
    from games.base import Observation

    obs = Observation("chameleon", 0, "guess", {}, ())
    labelled = agent.labelled_options(obs, spec)
    assert set(labelled) == {f"word{i}" for i in range(30)}


def test_label_scoring_on_the_tiny_llama_sums_to_one(backend: Any) -> None:
    g, s = state_at("spy", "spygame", 4, 3, lambda g, s: s.phase.value == "vote")
    seat = min(g.to_act(s))

    async def go() -> Any:
        batcher = Batcher(backend)
        await batcher.start()

        async def inference_for(spec: str) -> Inference:
            return batcher

        try:
            return await LLMAgent(inference_for, seed=3).act(g.observe(s, seat), g.legal(s, seat))
        finally:
            await batcher.aclose()

    decision = run(go())
    probs = decision.calls[0].label_probs
    assert set(probs) == set(g.legal(s, seat).ids())
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-5)
    assert decision.action.value[0] == max(probs, key=probs.get)


def test_temperature_samples_but_stays_seeded() -> None:
    g, s = state_at("decrypto", "benchmark", 3, 9, lambda g, s: s.phase.value == "decode")

    async def go() -> tuple[list[Any], list[Any]]:
        client = InProcessClient.over(FakeBackend())
        await client.start()

        async def inference_for(spec: str) -> Inference:
            return client

        async def picks() -> list[Any]:
            return [(await LLMAgent(inference_for, seed=sd, temperature=5.0).act(g.observe(s, 1), g.legal(s, 1))).action for sd in range(12)]

        try:
            return await picks(), await picks()
        finally:
            await client.aclose()

    first, again = run(go())
    assert first == again and len(set(first)) > 1


# --------------------------------------------------------------------------- wiring


def test_register_agents_builds_both_kinds_lazily() -> None:
    asked: list[str] = []
    built: list[str] = []

    async def connect(spec: str, api_key: str | None) -> Inference:
        asked.append(spec)
        raise AssertionError("building an agent must not reach for a model")

    def embedder_for(name: str) -> Any:
        built.append(name)
        return object()

    # Locations and options come from configured entries (player-typed specs are refused:
    # tests/models/test_registry.py).
    reg = AgentRegistry([
        AgentEntry("llm:x", AgentKind.LLM, "openai:http://host:8000/v1#model-x", {"temperature": "0.6", "retries": "1"}),
        AgentEntry("llm:w", AgentKind.LLM, "http://127.0.0.1:9000"),
        AgentEntry("embed:k8", AgentKind.EMBED, "minilm", {"k": "8"}),
        AgentEntry("llm:typo", AgentKind.LLM, "default", {"temprature": "1"}),
        AgentEntry("embed:lots", AgentKind.EMBED, "minilm", {"k": "lots"}),
    ])
    register_agents(reg, connect=connect, embedder_for=embedder_for)
    llm = reg("llm:x", 3)
    assert isinstance(llm, LLMAgent) and llm.temperature == 0.6 and llm.retries == 1
    assert llm.model_spec == "openai:http://host:8000/v1#model-x" and asked == []
    assert reg("llm:w", 1).model_spec == "http://127.0.0.1:9000"  # type: ignore[attr-defined]
    e1, e2 = reg("embed:k8", 1), reg("embed:minilm", 2)
    # The llm entries' strategy reads with the association model; both embed entries share MiniLM's index.
    assert e1.index is e2.index and e1.k == 8 and built == ["assoc", "minilm"]  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        reg("llm:typo", 0)
    with pytest.raises(ValueError):
        reg("embed:lots", 0)


def test_worked_example_precedes_the_request_unless_turned_off() -> None:
    from models.agents.llm import agent_from_params

    g, s = state_at("chameleon", "classic", 4, 3, lambda g, s: s.phase.value == "clues")
    seat = min(g.to_act(s))

    async def never(_: str) -> Inference:  # building prompts needs no model
        raise AssertionError("no model call expected")

    with_example = agent_from_params(never, "default", {}, 1)
    plain = agent_from_params(never, "default", {"examples": "0"}, 1)
    msgs, _, _ = with_example.messages(g.observe(s, seat), g.legal(s, seat))
    assert [m.role for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[2].content.startswith("ANSWER: ")
    # The example is about another card: the real secret never appears in it.
    secret = s.secret
    assert secret.lower() not in (msgs[1].content + msgs[2].content).lower()
    msgs, _, _ = plain.messages(g.observe(s, seat), g.legal(s, seat))
    assert [m.role for m in msgs] == ["system", "user"]


def test_example_is_left_out_when_the_turn_shares_its_words() -> None:
    from models.agents.prompts import example_overlaps

    table = PromptBook().table("chameleon_clue")
    assert example_overlaps(table, "Category: Fruits\nCandidate words: Lemon, Lime")
    assert not example_overlaps(table, "Category: Tools\nCandidate words: Hammer, Saw")


def test_answers_copied_from_the_instructions_are_refused() -> None:
    from models.agents.answers import refuse_copied_instructions
    from models.types import Message

    chat = [Message("system", "Rules."), Message("user", "Describe your word in at most 12 words.")]
    with pytest.raises(ValueError, match="copied"):
        refuse_copied_instructions(["at most 12 words"], chat)
    refuse_copied_instructions(["it rolls on green felt"], chat)
    refuse_copied_instructions(["words"], chat)  # a single word may well appear in the prompt
