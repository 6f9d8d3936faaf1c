"""HUSHTABLE_DEAL_SEED: set, a process's deals are a fixed sequence that a second process with the same
number deals again; unset, every deal comes from the system's cryptographic source. A bad value is one
sentence at start, and a start with the seed set says so without printing the number."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.core.messages import CommandKind, Place
from bot.settings import Settings
from bot.startup import settings_errors, surface_lines
from tests.bot.core.conftest import ALICE, make_harness

HERE = Place("memory", "chan-1")


async def _deal_three(url: str, deal_seed: int | None = None) -> list[tuple[int, tuple[str, ...], tuple[str, ...]]]:
    """Three Chameleon tables started one after another by one process: each one's seed and first deal."""
    h = await make_harness(url, deal_seed=deal_seed)
    try:
        dealt = []
        for n in range(3):
            place = Place("memory", f"chan-{n}")
            assert (await h.send(CommandKind.CREATE, ALICE, place, game="chameleon", variant="classic")).ok
            assert (await h.send(CommandKind.ADD_AI, ALICE, place, agent="random", count=3)).ok
            row = await h.store.lobby_at(place.platform, place.key)
            assert row is not None and row.id is not None
            assert (await h.send(CommandKind.START, ALICE, place)).ok
            table = h.service.tables[row.id]
            secret = tuple(s.value for s in table.engine.secrets(table.state))
            dealt.append((table.seed, secret, tuple(s.name for s in table.seats)))
        return dealt
    finally:
        await h.close()


async def test_a_deal_seed_deals_the_same_sequence_in_another_process(tmp_path: Path) -> None:
    first = await _deal_three(f"sqlite+aiosqlite:///{tmp_path}/a.db", deal_seed=12345)
    again = await _deal_three(f"sqlite+aiosqlite:///{tmp_path}/b.db", deal_seed=12345)
    other = await _deal_three(f"sqlite+aiosqlite:///{tmp_path}/c.db", deal_seed=12346)
    assert first == again
    assert len({seed for seed, _, _ in first}) == 3, "each table of the session gets its own deal"
    assert {seed for seed, _, _ in other}.isdisjoint(seed for seed, _, _ in first)


async def test_unset_every_deal_is_drawn_from_the_cryptographic_source(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[int] = []

    def randbits(k: int) -> int:
        drawn.append(secrets.randbits(k))
        return drawn[-1]

    monkeypatch.setattr("bot.core.lobby.pysecrets.randbits", randbits)
    dealt = await _deal_three(f"sqlite+aiosqlite:///{tmp_path}/a.db")
    assert [seed for seed, _, _ in dealt] == drawn


@pytest.mark.parametrize(("raw", "line"), [
    ("abc", "HUSHTABLE_DEAL_SEED must be a whole number, not 'abc'; fix it or unset it"),
    ("-1", "HUSHTABLE_DEAL_SEED must be at least 0, not '-1'"),
    ("1.5", "HUSHTABLE_DEAL_SEED must be a whole number, not '1.5'; fix it or unset it"),
    (str(2**62), f"HUSHTABLE_DEAL_SEED must be at most {2**62 - 1}, not '{2**62}'"),
])
def test_a_bad_deal_seed_is_one_sentence(monkeypatch: pytest.MonkeyPatch, raw: str, line: str) -> None:
    monkeypatch.setenv("HUSHTABLE_DEAL_SEED", raw)
    with pytest.raises(ValidationError) as caught:
        Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings_errors(caught.value) == [line]


def test_a_blank_deal_seed_is_unset_and_a_set_one_is_said_at_start_without_its_number(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HUSHTABLE_DEAL_SEED", " ")
    unset = Settings(_env_file=None)  # type: ignore[call-arg]
    assert unset.deal_seed is None
    assert not any("deal" in ln for ln in surface_lines(unset, platforms=["console"], agents=["random"]))
    monkeypatch.setenv("HUSHTABLE_DEAL_SEED", " 987654321 ")
    seeded = Settings(_env_file=None)  # type: ignore[call-arg]
    assert seeded.deal_seed == 987654321
    lines = surface_lines(seeded, platforms=["console"], agents=["random"])
    said = [ln for ln in lines if ln.startswith("deals: ")]
    assert len(said) == 1 and "HUSHTABLE_DEAL_SEED" in said[0] and "987654321" not in "\n".join(lines)
