"""Rule tests for Spymasters: word bank, config and deals, clues, guesses, every ending, turn
switching, the number + 1 limit, votes of several guessers, timeouts, privacy, metrics."""

from __future__ import annotations

import json
from typing import Any

import pytest

from games.base import Action, Choice, ConfigError, IllegalAction, Text, config_to_dict, replay
from games.play import play_random, seat_names, transcript
from games.spymasters import DESCRIPTOR, GAME
from games.spymasters.config import BOARD_SIZE, Team, bundled_words, parse_words
from games.spymasters.metrics import game_metrics, seat_roles
from games.spymasters.rules import CLUE_PROBLEM
from games.spymasters.state import PASS, STOP, Ending, Phase, SpymastersState, TurnEnd
from games.text import mentions_secret

RED = ("apple", "bear", "castle", "drum", "eagle", "forest", "guitar", "hammer", "island")
BLUE = ("jacket", "kettle", "lemon", "mirror", "needle", "ocean", "piano", "rocket")
BYSTANDERS = ("saddle", "tiger", "umbrella", "violin", "wagon", "yacht", "zebra")
ASSASSIN = "snow"
WORDS = (*RED, *BLUE, *BYSTANDERS, ASSASSIN)
KEY = ("red",) * 9 + ("blue",) * 8 + ("bystander",) * 7 + ("assassin",)
DEAL = {"words": list(WORDS), "key": list(KEY), "starting": "red", "spymasters": [0, 1]}


def start(seats: int = 4, **options: Any) -> SpymastersState:
    options.setdefault("deal", DEAL)
    state, _ = GAME.new(GAME.make_config(**options), seats, 0)
    return state


def clue(s: SpymastersState, word: str, number: int) -> SpymastersState:
    (master,) = GAME.to_act(s)
    s, _ = GAME.apply(s, master, Action.say("clue", word))
    s, _ = GAME.apply(s, master, Action.choose("number", str(number)))
    return s


def guess(s: SpymastersState, word: str) -> SpymastersState:
    """Every guesser who votes picks ``word``."""
    for seat in sorted(GAME.to_act(s)):
        s, _ = GAME.apply(s, seat, Action.choose("guess", word))
    return s


# --------------------------------------------------------------------------- word bank, config, deals


def test_word_bank_is_large_distinct_and_clue_safe() -> None:
    words = bundled_words()
    assert len(words) >= 400
    assert all(w.isalpha() and w == w.lower() for w in words)
    assert not {"red", "blue", "bystander", "assassin"} & set(words)
    # No word is a form or a part of another: a clue refused for one is refused for its own reason.
    for a in words:
        clash = [b for b in words if b != a and mentions_secret(a, b, compounds=True)]
        assert not clash, (a, clash)


def test_custom_words_and_options_are_checked() -> None:
    cfg = GAME.make_config(deck=[f"word{c}" for c in "abcdefghijklmnopqrstuvwxyz"][:25])
    assert cfg.deck is not None and len(cfg.deck) == 25
    s, _ = GAME.new(cfg, 4, 1)
    assert sorted(s.words) == sorted(cfg.deck)
    with pytest.raises(ConfigError, match="at least 25"):
        GAME.make_config(deck=["apple", "pear"])
    with pytest.raises(ConfigError, match="single word of letters"):
        GAME.make_config(deck=["ice cream", *bundled_words()[:30]])
    with pytest.raises(ConfigError, match="guessing must be one of vote, captain"):
        GAME.make_config(guessing="loudest")
    with pytest.raises(ConfigError, match="unknown option"):
        GAME.make_config(board=5)
    with pytest.raises(ValueError, match="letters"):
        parse_words("apple\nice-cream\n", minimum=1)


@pytest.mark.parametrize("seats", [3, 9])
def test_seat_counts_outside_four_to_eight_are_refused(seats: int) -> None:
    with pytest.raises(ConfigError, match="4 to 8 players"):
        GAME.new(GAME.make_config(), seats, 1)


def test_a_deal_fixes_board_key_starting_team_and_spymasters() -> None:
    s = start(6)
    assert s.words == WORDS and [c.value for c in s.key] == list(KEY)
    assert s.starting is Team.RED and s.turn is Team.RED and s.spymasters == (0, 1)
    assert GAME.deal_of(s) == DEAL
    # The complete deal of a drawn game replays it without its seed.
    drawn, _ = GAME.new(GAME.make_config(), 5, 42)
    again, _ = GAME.new(GAME.make_config(deal=GAME.deal_of(drawn)), 5, 7)
    assert (again.words, again.key, again.starting, again.spymasters) == (drawn.words, drawn.key, drawn.starting, drawn.spymasters)


def test_a_key_names_the_starting_team_by_its_nine_words() -> None:
    blue_first = ["blue"] * 9 + ["red"] * 8 + ["bystander"] * 7 + ["assassin"]
    s, _ = GAME.new(GAME.make_config(deal={"key": blue_first}), 4, 3)
    assert s.starting is Team.BLUE and GAME.to_act(s) == {s.spymasters[1]}


@pytest.mark.parametrize(("deal", "message"), [
    ({"key": ["red"] * 25}, "a key with red starting holds 9 red, 8 blue, 7 bystander, 1 assassin"),
    ({"key": list(KEY), "starting": "blue"}, "a key with blue starting holds"),
    ({"key": list(KEY[:24])}, "key must be a list of 25 cards"),
    ({"key": ["green", *KEY[1:]]}, "key entry 1 must be one of red, blue, bystander, assassin"),
    ({"words": list(WORDS[:24])}, "words must be a list of 25 words"),
    ({"words": [*WORDS[:24], "apple"]}, "word 25 ('apple') is on the board twice"),
    ({"words": [*WORDS[:24], "ice cream"]}, "single word of letters"),
    ({"spymasters": [1, 0]}, "seat 1 sits on the blue team"),
    ({"spymasters": [0]}, "a list of two seats"),
    ({"starting": "green"}, "starting must be red or blue"),
    ({"colour": "red"}, "unknown key"),
])
def test_bad_deals_are_refused_with_the_reason(deal: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        GAME.make_config(deal=deal)


def test_dealt_spymasters_must_sit_at_the_table() -> None:
    cfg = GAME.make_config(deal={"spymasters": [6, 1]})
    with pytest.raises(ConfigError, match="seats 0 to 3"):
        GAME.new(cfg, 4, 0)


def test_config_with_a_deal_survives_json() -> None:
    cfg = GAME.make_config(deal=DEAL, guessing="captain")
    assert GAME.config_from_dict(json.loads(json.dumps(config_to_dict(cfg)))) == cfg


# --------------------------------------------------------------------------- clues


@pytest.mark.parametrize(("word", "reason"), [
    ("apple", CLUE_PROBLEM),  # a board word
    ("Apples", CLUE_PROBLEM),  # a form of one
    ("snowman", CLUE_PROBLEM),  # contains one (the assassin, and says nothing about it)
    ("rock", CLUE_PROBLEM),  # a part of one (rocket)
    ("ＯＣＥＡＮ", CLUE_PROBLEM),  # full-width letters are still the word
    ("3", "A clue is a word, not a number."),
    ("fruit!", "A clue is one word, letters only."),
    ("red fruit", "at most 1 word"),
])
def test_clues_that_break_the_rules_are_refused_and_change_nothing(word: str, reason: str) -> None:
    s = start()
    with pytest.raises(IllegalAction, match=reason.replace("(", r"\(").replace(".", r"\.")) as info:
        GAME.apply(s, 0, Action.say("clue", word))
    assert not any(w in str(info.value).lower() for w in WORDS), "a refusal never names a board word"
    assert GAME.to_act(s) == {0} and s.phase is Phase.CLUE


def test_a_revealed_word_may_be_used_again_as_a_clue() -> None:
    s = guess(clue(start(), "fruit", 2), "apple")
    s = guess(s, "tiger")  # a bystander: blue's turn
    s = clue(s, "kitchen", 1)
    s = guess(s, "saddle")
    assert s.turn is Team.RED
    s, _ = GAME.apply(s, 0, Action.say("clue", "apples"))  # apple is no longer on the board
    assert s.phase is Phase.NUMBER and s.pending == "apples"


def test_the_number_is_one_to_the_words_still_hidden_and_the_clue_is_public_only_then() -> None:
    s = start()
    s, events = GAME.apply(s, 0, Action.say("clue", "fruit"))
    assert [(e.kind, e.audience.seats) for e in events] == [("clue_written", frozenset({0}))]
    assert GAME.observe(s, 0).view["pending_clue"] == "fruit"
    assert GAME.observe(s, 2).view["pending_clue"] is None
    spec = GAME.legal(s, 0)
    assert spec is not None and not isinstance(spec, Text)
    assert spec.ids() == tuple(str(n) for n in range(1, 10))
    with pytest.raises(IllegalAction):
        GAME.apply(s, 0, Action.choose("number", "10"))
    s, events = GAME.apply(s, 0, Action.choose("number", "2"))
    assert [(e.kind, dict(e.data), e.audience.is_public) for e in events] == [
        ("clue", {"turn": 1, "team": "red", "seat": 0, "clue": "fruit", "number": 2}, True)]
    assert s.phase is Phase.GUESS and GAME.to_act(s) == {2}


# --------------------------------------------------------------------------- guesses and turns


def test_own_words_continue_up_to_the_number_plus_one_then_the_turn_switches() -> None:
    s = clue(start(), "music", 2)
    spec = GAME.legal(s, 2)
    assert isinstance(spec, Choice) and STOP not in spec.ids(), "a team makes at least one guess"
    s = guess(s, "drum")
    spec = GAME.legal(s, 2)
    assert isinstance(spec, Choice) and STOP in spec.ids() and "drum" not in spec.ids()
    s = guess(s, "guitar")
    assert s.turn is Team.RED and GAME.observe(s, 2).view["clue"]["guesses_left"] == 1
    s = guess(s, "hammer")  # the third guess on a 2: the number + 1 limit
    assert s.turn is Team.BLUE and s.phase is Phase.CLUE and GAME.to_act(s) == {1} and s.turn_no == 2
    assert s.history[-1].ended is TurnEnd.LIMIT and s.history[-1].found == 3
    assert GAME.observe(s, 3).view["remaining"] == {"red": 6, "blue": 8}


def test_stop_ends_the_turn() -> None:
    s = guess(clue(start(), "music", 2), "drum")
    s = guess(s, STOP)
    assert s.turn is Team.BLUE and s.history[-1].ended is TurnEnd.STOPPED and s.history[-1].found == 1


def test_a_bystander_ends_the_turn() -> None:
    s = guess(clue(start(), "music", 2), "violin")
    assert s.turn is Team.BLUE and s.history[-1].ended is TurnEnd.BYSTANDER


def test_the_other_teams_word_counts_for_them_and_ends_the_turn() -> None:
    s = guess(clue(start(), "music", 2), "piano")
    assert s.turn is Team.BLUE and s.history[-1].ended is TurnEnd.OPPONENT
    view = GAME.observe(s, 2).view
    assert view["remaining"] == {"red": 9, "blue": 7} and view["revealed"][WORDS.index("piano")] == "blue"


def test_the_assassin_loses_the_game_for_the_guessing_team() -> None:
    s = guess(clue(start(6), "weather", 1), ASSASSIN)
    assert s.phase is Phase.OVER and s.winner is Team.BLUE and s.ending is Ending.ASSASSIN
    result = GAME.result(s)
    assert result is not None and result.winners == {1, 3, 5}
    assert result.details["metrics"]["assassin"] is True and "assassin" in result.summary
    assert GAME.to_act(s) == frozenset() and GAME.secrets(s) == ()
    with pytest.raises(IllegalAction, match="over"):
        GAME.apply(s, 0, Action.say("clue", "again"))


def test_revealing_all_your_words_wins() -> None:
    s = start()
    for first in range(0, 9, 3):
        s = clue(s, "things", 3)
        for w in RED[first : first + 3]:
            s = guess(s, w)
        if s.phase is Phase.OVER:
            break
        s = guess(s, STOP)
        s = guess(clue(s, "quiet", 1), BYSTANDERS[first // 3])  # blue meets a bystander
    assert s.phase is Phase.OVER and s.winner is Team.RED and s.ending is Ending.ALL_FOUND
    result = GAME.result(s)
    assert result is not None and result.winners == {0, 2}
    assert result.details["metrics"]["clue_accuracy"] == pytest.approx((1 + 0 + 1 + 0 + 1) / 5)
    assert result.details["metrics"]["clues_met"] == 3


def test_revealing_the_other_teams_last_word_makes_them_win() -> None:
    blue_first = {"words": list(WORDS), "starting": "blue", "spymasters": [0, 1],
                  "key": ["blue"] * 9 + ["red"] * 8 + ["bystander"] * 7 + ["assassin"]}
    s = start(deal=blue_first)
    s = clue(s, "stuff", 8)
    for w in WORDS[:8]:
        s = guess(s, w)  # blue's own eight
    s = guess(s, STOP)
    s = clue(s, "oops", 1)
    s = guess(s, WORDS[8])  # red reveals blue's ninth and last word
    assert s.phase is Phase.OVER and s.winner is Team.BLUE and s.ending is Ending.ALL_FOUND
    assert s.history[-1].team is Team.RED and s.history[-1].ended is TurnEnd.FINISHED


# --------------------------------------------------------------------------- several guessers


def test_several_guessers_vote_and_the_majority_pick_is_played() -> None:
    s = clue(start(8), "music", 1)  # red guessers 2, 4, 6
    assert GAME.to_act(s) == {2, 4, 6}
    s, events = GAME.apply(s, 4, Action.choose("guess", "drum"))
    assert [(e.kind, e.audience.is_public) for e in events] == [("guess_vote", False), ("voted", True)]
    assert GAME.observe(s, 2).view["ballot"] == {"voters": [2, 4, 6], "voted": [4], "my_vote": None}
    assert GAME.observe(s, 4).view["ballot"]["my_vote"] == "drum"
    with pytest.raises(IllegalAction, match="already voted"):
        GAME.apply(s, 4, Action.choose("guess", "piano"))
    s, _ = GAME.apply(s, 2, Action.choose("guess", "piano"))
    s, events = GAME.apply(s, 6, Action.choose("guess", "drum"))
    assert [e.kind for e in events][:4] == ["guess_vote", "voted", "votes", "guess"]
    assert s.clue is not None and [g.word for g in s.clue.guesses] == ["drum"]


def test_a_tie_goes_to_the_first_guesser_else_to_the_board_order() -> None:
    s = clue(start(8), "music", 3)
    for seat, pick in ((2, "guitar"), (4, "drum"), (6, "hammer")):
        s, _ = GAME.apply(s, seat, Action.choose("guess", pick))
    assert s.clue is not None and s.clue.guesses[-1].word == "guitar"  # seat 2 leads red's guessers
    for seat, pick in ((2, PASS), (4, "hammer"), (6, "eagle")):
        s, _ = GAME.apply(s, seat, Action.choose("guess", pick))
    assert s.clue is not None and s.clue.guesses[-1].word == "eagle"  # eagle comes before hammer on the board


def test_nobody_voting_for_a_word_stops_and_the_captain_rule_has_one_voter() -> None:
    s = clue(start(6), "music", 1)
    for seat in (2, 4):
        s, _ = GAME.apply(s, seat, GAME.timeout_action(s, seat) or Action.choose("guess", "x"))
    assert s.turn is Team.BLUE and s.history[-1].ended is TurnEnd.STOPPED and s.history[-1].guesses == ()
    s = clue(start(6, guessing="captain"), "music", 1)
    assert GAME.to_act(s) == {2} and GAME.legal(s, 4) is None
    s = guess(s, "drum")
    assert s.clue is not None and s.clue.guesses[-1].votes == ()


def test_timeouts() -> None:
    s = start()
    assert GAME.timeout_action(s, 0) is None, "a clue has no neutral value: an AI writes it"
    assert GAME.timeout_action(s, 2) is None, "not this seat's turn"
    s, _ = GAME.apply(s, 0, Action.say("clue", "music"))
    assert GAME.timeout_action(s, 0) == Action.choose("number", "1")
    s, _ = GAME.apply(s, 0, Action.choose("number", "1"))
    action = GAME.timeout_action(s, 2)
    assert action == Action.choose("guess", PASS)
    s, _ = GAME.apply(s, 2, action)
    assert s.turn is Team.BLUE and s.history[-1].ended is TurnEnd.STOPPED


# --------------------------------------------------------------------------- privacy and records


@pytest.mark.parametrize("seats", [4, 7])
def test_only_spymasters_see_the_key_and_guessers_only_revealed_cards(seats: int) -> None:
    cfg = GAME.make_config()
    pt = play_random(GAME, cfg, seats, 5)
    state, events = GAME.new(cfg, seats, 5)
    key_events = [e for e in events if e.kind == "key"]
    assert len(key_events) == 1 and key_events[0].audience.seats == frozenset(state.spymasters)
    for seat, action in pt.actions:
        for viewer in range(seats):
            view = GAME.observe(state, viewer).view
            if viewer in state.spymasters:
                assert view["key"] == [c.value for c in state.key]
            else:
                assert view["key"] is None and view["pending_clue"] is None
                shown = {i for i, card in enumerate(view["revealed"]) if card is not None}
                assert shown == set(state.revealed)
        state, _ = GAME.apply(state, seat, action)
    assert GAME.observe(state, 2).view["key"] == [c.value for c in state.key], "the key is shown at the end"


def test_random_games_replay_and_their_results_carry_the_deal_and_clue_instances() -> None:
    cfg = GAME.make_config()
    pt = play_random(GAME, cfg, 6, 9)
    assert pt.result is not None
    state, _ = replay(GAME, GAME.make_config(deal=pt.result.details["deal"]), 6, 12345, pt.actions)
    assert GAME.result(state) == pt.result
    instance = pt.result.details["clue_instances"][0]
    assert len(instance["board"]) == BOARD_SIZE and instance["assassin"] == pt.result.details["cards"]["assassin"]
    assert len(instance["team_words"]) == 9 and len(instance["opponent_words"]) == 8
    assert json.loads(json.dumps(pt.result.to_json())) == pt.result.to_json()
    text = transcript(GAME, pt.events, seat_names(6), pt.result)
    assert "The key, for the spymasters only" in text and "RESULT" in text


def test_metrics_over_games() -> None:
    results = [play_random(GAME, GAME.make_config(), n, seed).result for n, seed in ((4, 1), (5, 2), (8, 3))]
    details = [r.details for r in results if r is not None]
    m = game_metrics(details)
    assert m["games"] == 3 and sum(m["win_rate"].values()) == pytest.approx(1.0)
    assert m["assassin_hits"] == sum(1 for d in details if d["ending"] == "assassin")
    assert m["clues"] == sum(len(d["clues"]) for d in details)
    assert 0.0 <= m["clue_accuracy"] <= 1.0
    roles = seat_roles(details[2], 8)
    assert set(m) == set(DESCRIPTOR.labels())
    assert sum(1 for role, _ in roles if role.value == "spymaster") == 2
    assert {team for _, team in roles} == {Team.RED, Team.BLUE}
