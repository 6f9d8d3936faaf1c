"""Just One's rules: clues written at once, identical and invalid clues removed before the guesser
sees them, one try per card, a wrong guess costs the next card, the deal as data."""

from __future__ import annotations

import pytest

from games.base import Action, ConfigError, IllegalAction, replay
from games.justone import GAME, PASS
from games.justone.state import JustOneState, Outcome, Why

WORDS = ["volcano", "piano", "rabbit", "castle", "anchor", "pizza", "rocket", "tiger", "bridge", "candle",
         "garden", "whale", "kite"]


def start(seats: int = 4, first: int = 0, cards: int = 13) -> JustOneState:
    cfg = GAME.make_config(cards=cards, deal={"words": WORDS[:cards], "first": first})
    s, _ = GAME.new(cfg, seats, 1)
    return s


def clues(s: JustOneState, *texts: str) -> tuple[JustOneState, list]:
    events: list[object] = []
    for seat, text in zip(s.givers, texts, strict=True):
        s, evs = GAME.apply(s, seat, Action.say("clue", text))
        events += evs
    return s, events


def test_clues_are_written_at_once_and_hidden_until_all_are_in() -> None:
    s = start()
    assert GAME.to_act(s) == frozenset({1, 2, 3}) and GAME.legal(s, 0) is None
    s, evs = GAME.apply(s, 2, Action.say("clue", "lava"))
    assert [e.kind for e in evs] == ["clue_written", "clue_in"] and evs[0].audience.seats == frozenset({2})
    assert "lava" not in str(evs[1].to_json())
    assert GAME.observe(s, 0).view["clues"] == [] and GAME.observe(s, 1).view["my_clue"] is None
    with pytest.raises(IllegalAction, match="already written"):
        GAME.apply(s, 2, Action.say("clue", "magma"))


def test_identical_and_invalid_clues_are_removed_before_the_guesser_sees_them() -> None:
    s = start(seats=5)
    s, evs = clues(s, "Lava", "lavas", "VOLCANOES", "eruption")
    shown = next(e for e in evs if e.kind == "clues_shown")
    assert shown.data["clues"] == [{"seat": 4, "clue": "eruption"}] and shown.data["removed"] == [1, 2, 3]
    why = {c.seat: c.removed for c in s.clues}
    assert why == {1: Why.DUPLICATE, 2: Why.DUPLICATE, 3: Why.INVALID, 4: None}
    guesser = GAME.observe(s, 0).view
    assert guesser["word"] is None and guesser["checked"] == [] and guesser["clues"] == [{"seat": 4, "clue": "eruption"}]
    assert "volcano" not in str(guesser).lower() and "lava" not in str(guesser).lower()
    assert {c["seat"]: c["removed"] for c in GAME.observe(s, 1).view["checked"]} == {1: "duplicate", 2: "duplicate",
                                                                                       3: "invalid", 4: None}


def test_a_clue_is_one_word() -> None:
    s = start()
    with pytest.raises(IllegalAction, match="at most 1 word"):
        GAME.apply(s, 1, Action.say("clue", "hot mountain"))


def test_found_passed_and_wrong_guesses() -> None:
    s = start()
    s, _ = clues(s, "lava", "magma", "eruption")
    s, evs = GAME.apply(s, 0, Action.say("guess", "Volcanoes"))
    assert s.history[-1].outcome is Outcome.FOUND and s.score == 1 and s.guesser == 1
    assert next(e for e in evs if e.kind == "guessed").data["word"] == "volcano"
    s, _ = clues(s, "keys", "keyboard", "concert")
    s, _ = GAME.apply(s, 1, Action.say("guess", PASS))
    assert s.history[-1].outcome is Outcome.PASSED and s.card == 2 and s.guesser == 2
    s, _ = clues(s, "bunny", "carrot", "ears")
    s, evs = GAME.apply(s, 2, Action.say("guess", "hare"))
    assert [r.outcome for r in s.history[-2:]] == [Outcome.WRONG, Outcome.DISCARDED]
    assert s.card == 4 and s.guesser == 3, "the discarded card is skipped; the guesser moves on by cards played"
    assert "castle" not in str([e.to_json() for e in evs]), "a discarded card is never shown"


def test_a_wrong_guess_on_the_last_card_costs_a_found_card_and_the_game_ends() -> None:
    s = start(cards=2)
    s, _ = clues(s, "lava", "magma", "eruption")
    s, _ = GAME.apply(s, 0, Action.say("guess", "volcano"))
    s, _ = clues(s, "keys", "keyboard", "concert")
    s, _ = GAME.apply(s, 1, Action.say("guess", "organ"))
    result = GAME.result(s)
    assert result is not None and s.score == 0 and result.details["penalty"] == 1
    assert result.winners == frozenset() and not GAME.to_act(s)


def test_the_timeout_of_a_guess_is_a_pass_and_a_clue_has_none() -> None:
    s = start()
    assert GAME.timeout_action(s, 1) is None
    s, _ = clues(s, "lava", "magma", "eruption")
    assert GAME.timeout_action(s, 0) == Action.say("guess", PASS)


def test_a_won_game_names_every_seat_and_replays_from_its_deal() -> None:
    s = start(cards=1, first=2)
    s, _ = clues(s, "lava", "magma", "eruption")
    s, _ = GAME.apply(s, 2, Action.say("guess", "volcano"))
    result = GAME.result(s)
    assert result is not None and result.winners == frozenset(range(4)) and result.details["won"]
    actions = [(0, Action.say("clue", "lava")), (1, Action.say("clue", "magma")), (3, Action.say("clue", "eruption")),
               (2, Action.say("guess", "volcano"))]
    cfg = GAME.with_deal(GAME.make_config(cards=1, target=1), result.details["deal"])
    again, _ = replay(GAME, cfg, 4, 999, actions)
    assert GAME.result(again) == result


@pytest.mark.parametrize(("options", "message"), [
    ({"cards": 14}, "cards must be between 1 and 13"),
    ({"cards": 3, "target": 4}, "target must be between 0 and 3"),
    ({"cards": 2, "deal": {"words": ["apple", "apple"]}}, "dealt twice"),
    ({"cards": 2, "deal": {"words": ["apple", "pass"]}}, "single word of letters"),
    ({"deck": ["one", "two"]}, "custom deck"),
])
def test_bad_options_are_one_sentence(options: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        GAME.make_config(**options)


def test_a_table_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ConfigError, match="Just One .* needs 3 to 7 players, not 8"):
        GAME.new(GAME.make_config(), 8, 1)
