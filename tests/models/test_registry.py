"""Agents by configured name only: URLs, paths and keys come from configuration, never from a player.

The hostile specs of the hardening issue (item 1) are refused with UnknownAgent, and a
local HTTP server standing in for the attacker proves nothing was sent to it. A key
configured for one endpoint reaches that endpoint and no other.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.settings import Settings
from models.agents import AgentEntry, AgentKind, AgentRegistry, UnknownAgent
from models.agents.llm import LLMAgent
from models.agents.registry import BUILTIN, entries_from_json
from models.agents.wiring import build_registry, register_agents
from models.client import ClientOptions, ClientPool
from models.types import GenerateRequest, Message
from tests.models.fake_openai import FakeOpenAI

KEY = "sk-test-0123456789"


@pytest.fixture
async def attacker() -> AsyncIterator[FakeOpenAI]:
    f = await FakeOpenAI().start()
    yield f
    await f.close()


@pytest.fixture
async def pool() -> AsyncIterator[ClientPool]:
    p = ClientPool(ClientOptions(openai_api_key=KEY))
    yield p
    await p.aclose()


def settings(**kw: Any) -> Settings:
    # _env_file=None: a developer's .env must not change what these tests configure.
    return Settings(_env_file=None, **kw)  # type: ignore[call-arg]  # pydantic-settings' init-only argument


def no_embedder(name: str) -> Any:  # noqa: ANN401
    """Stands in for embedder_for: the real one is lazy too, and building agents never embeds."""
    return object()


def registry_over(pool: ClientPool, configured: Settings | None = None) -> AgentRegistry:
    return build_registry(configured or settings(), pool.get, no_embedder)


def test_the_builtin_names_resolve_and_nothing_else(pool: ClientPool) -> None:
    reg = registry_over(pool)
    assert set(reg.names()) == {e.name for e in BUILTIN}
    assert isinstance(reg("strategist", 1), LLMAgent) and reg("llm:plain", 1).spec == "llm:plain"
    assert reg.choices(["strategist", "llm:evil", "random"]) == ["strategist", "random"]
    with pytest.raises(UnknownAgent, match="choose one of: .*strategist"):
        reg("llm:gpt", 0)


def test_the_old_name_of_the_default_player_is_read_as_its_new_one(pool: ClientPool) -> None:
    """``llm:default`` (its name when it was thought a language model) still works wherever a name is read."""
    reg = registry_over(pool)
    assert "llm:default" not in reg.names()  # listed once, by its name
    assert reg("llm:default", 1).spec == "strategist"
    assert reg.choices(["llm:default", "random"]) == ["strategist", "random"]
    old = settings(default_agent="llm:default", fallback_agent="llm:default", agent_choices="llm:default,random")
    assert (old.default_agent, old.fallback_agent, old.agent_list) == ("strategist", "strategist", ["strategist", "random"])
    # Typed in chat or at the console ("ai llm:default"), and as a tournament's entrant.
    from bot.core.commands import AddAiArgs, parse_args
    from bot.core.messages import Command, CommandKind, Place, UserRef

    cmd = Command(CommandKind.ADD_AI, UserRef("console", "you"), Place("console", "table"),
                  {"agent": "llm:default", "count": 1}, tenant="console")
    args = parse_args(cmd, max_text_chars=100)
    assert isinstance(args, AddAiArgs) and args.agent == "strategist"
    # An operator who defines an entry of that name keeps their own entry.
    own = registry_over(pool, settings(agents='{"llm:default": {"model": "default", "params": {"mode": "plain"}}}'))
    assert own("llm:default", 1).spec == "llm:default" and "strategist" in own.names()


async def test_hostile_specs_are_refused_and_never_contacted(attacker: FakeOpenAI, pool: ClientPool) -> None:
    reg = registry_over(pool, settings(openai_api_key=KEY))
    url = attacker.base_url
    for spec in (
        f"llm:openai:{url}#m",
        f"llm:openai:{url}#m?temperature=0",
        f"llm:{url}",
        "llm:/etc/passwd",
        "embed:../..",
        "llm:default?prompts=/tmp",  # parameters are configuration too
        "llm:default?mode=plain",
        "LLM:DEFAULT ",
        "",
    ):
        with pytest.raises(UnknownAgent):
            reg(spec, 0)
    assert attacker.requests == [] and attacker.auth == []
    assert pool.specs() == [], "no client was even built"
    # The service catches ValueError for a bad agent: UnknownAgent is one.
    assert issubclass(UnknownAgent, ValueError)


async def test_a_key_goes_only_to_its_own_endpoint(pool: ClientPool) -> None:
    keyed, plain = await FakeOpenAI(reply="ANSWER: one").start(), await FakeOpenAI(reply="ANSWER: two").start()
    try:
        entries = {
            "llm:big": {"model": f"openai:{keyed.base_url}#big", "api_key": KEY, "params": {"mode": "plain"}},
            "llm:small": {"model": f"openai:{plain.base_url}#small"},
        }
        reg = registry_over(pool, settings(agents=json.dumps(entries)))
        req = GenerateRequest((Message("user", "hello"),), max_tokens=4)
        for name in ("llm:big", "llm:small", "llm:big"):
            agent = reg(name, 3)
            assert isinstance(agent, LLMAgent)
            await (await agent.client()).generate(req)
        assert keyed.auth == [f"Bearer {KEY}"] * 2
        assert plain.auth == [None], "the other endpoint never sees the key"
        # One client per configured endpoint, shared by every agent of that entry.
        a, b = reg("llm:big", 1), reg("llm:big", 2)
        assert isinstance(a, LLMAgent) and isinstance(b, LLMAgent)
        assert await a.client() is await b.client()
        assert sorted(pool.specs()) == sorted([f"openai:{keyed.base_url}#big", f"openai:{plain.base_url}#small"])
        assert KEY not in repr(reg.entry("llm:big")) and KEY not in " ".join(pool.specs())
    finally:
        await keyed.close()
        await plain.close()


def test_openai_url_setting_defines_llm_openai_with_the_key() -> None:
    configured = settings(openai_url="https://api.example.com/v1#m", openai_api_key=KEY)
    reg = build_registry(configured, ClientPool().get, no_embedder)
    entry = reg.entry("llm:openai")
    assert entry.model == "openai:https://api.example.com/v1#m" and entry.api_key == KEY
    # Without a URL the key defines nothing.
    assert "llm:openai" not in build_registry(settings(openai_api_key=KEY), ClientPool().get, no_embedder).names()


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ("{", "not valid JSON"),
        ("[]", "JSON object"),
        ('{"llm:x?a=1": {"model": "default"}}', "plain agent name"),
        ('{"shell:x": {"model": "default"}}', "start with llm:"),
        ('{"llm:x": {"model": ""}}', "model location"),
        ('{"llm:x": {"model": "default", "url": "http://x"}}', "unknown field"),
        ('{"llm:x": {"model": "http://worker:1", "api_key": "sk-secret-value"}}', "only sent to an openai"),
        ('{"llm:x": {"model": "default", "params": ["a"]}}', "params"),
    ],
)
def test_bad_operator_entries_are_refused_with_a_clear_message(raw: str, needle: str) -> None:
    with pytest.raises(ValueError, match=needle) as info:
        entries_from_json(raw)
    assert "sk-secret-value" not in str(info.value)


def test_a_misconfigured_entry_stops_the_start_not_a_game() -> None:
    bad = json.dumps({"llm:hot": {"model": "default", "params": {"temperature": "very"}}})
    with pytest.raises(ValueError, match="llm:hot"):
        build_registry(settings(agents=bad), ClientPool().get, no_embedder)
    bad = json.dumps({"embed:wide": {"model": "minilm", "params": {"k": "lots"}}})
    with pytest.raises(ValueError, match="embed:wide"):
        build_registry(settings(agents=bad), ClientPool().get, lambda name: object())


def test_operator_entries_may_redefine_a_builtin() -> None:
    asked: list[str] = []

    async def connect(location: str, api_key: str | None) -> Any:
        asked.append(location)
        raise AssertionError("building an agent must not reach for a model")

    reg = AgentRegistry([AgentEntry("llm:default", AgentKind.LLM, "fake", {"mode": "plain"})])
    register_agents(reg, connect=connect, embedder_for=no_embedder)
    agent = reg("llm:default", 0)
    assert isinstance(agent, LLMAgent) and agent.model_spec == "fake"
    assert reg("llm:plain", 0).spec == "llm:plain" and asked == []
    e1, e2 = reg("embed:minilm", 1), reg("embed:minilm", 2)
    assert e1.index is e2.index  # type: ignore[attr-defined]
    # Without builders only the random player exists.
    assert AgentRegistry().names() == ["random"]
    with pytest.raises(UnknownAgent):
        AgentRegistry()("llm:default", 0)


def test_the_app_keeps_embedded_vocabularies_in_its_model_cache(tmp_path: Any) -> None:
    reg = build_registry(settings(model_cache=tmp_path), ClientPool().get, no_embedder)
    agent = reg("embed:minilm", 0)
    assert agent.index.cache == tmp_path / "vocab"  # type: ignore[attr-defined]
