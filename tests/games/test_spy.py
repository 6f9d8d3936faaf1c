"""Rule tests for the Who-is-Spy engine (games/spy/) and its word-pair bank.

Games are dealt from real seeds and steered with scripted moves chosen from the
dealt roles, so every end condition and tie rule is reached through ``apply``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from games import decks
from games.base import PUBLIC, Action, Choice, ConfigError, IllegalAction, Text, contains_word
from games.play import play_random, seat_names
from games.spy import GAME, Phase, Role, SpyState

# --------------------------------------------------------------------------- helpers


def deal(variant: str = "classic", seats: int = 5, seed: int = 0, **options: object) -> SpyState:
    state, _ = GAME.new(GAME.make_config(variant, **options), seats, seed)
    return state


def seats_of(s: SpyState, role: Role) -> list[int]:
    return [x for x, r in enumerate(s.roles) if r is role]


def play(s: SpyState, seat: int, action: Action) -> SpyState:
    nxt, _ = GAME.apply(s, seat, action)
    return nxt


def describe_round(s: SpyState) -> SpyState:
    """Every living player gives a fresh, legal description in the speaking order."""
    while s.phase is Phase.DESCRIBE:
        (seat,) = GAME.to_act(s)
        s = play(s, seat, Action("describe", (f"hint {s.round} {seat}",)))
    return s


def vote(s: SpyState, targets: Mapping[int, int | None]) -> SpyState:
    """Cast the given ballots (None abstains) in seat order."""
    assert s.phase in (Phase.VOTE, Phase.RUNOFF)
    for voter in sorted(targets):
        t = targets[voter]
        s = play(s, voter, Action("vote", ("abstain",) if t is None else (str(t),)))
    return s


def eliminate(s: SpyState, target: int) -> SpyState:
    """One full round in which everybody else votes ``target`` out."""
    s = describe_round(s)
    living = GAME.to_act(s)
    other = next(x for x in sorted(living) if x != target)
    return vote(s, {x: (target if x != target else other) for x in living})


def find_seed(pred, variant: str = "classic", seats: int = 5, **options: object) -> SpyState:
    for seed in range(500):
        s = deal(variant, seats, seed, **options)
        if pred(s):
            return s
    raise AssertionError("no seed matched")


def public_text(s: SpyState) -> str:
    return json.dumps([e.to_json() for e in s.log if e.audience.is_public])


# --------------------------------------------------------------------------- word-pair bank


def test_bundled_pairs_parse_and_are_plenty() -> None:
    pairs = decks.pairs()
    assert len(pairs) >= 150
    seen: set[frozenset[str]] = set()
    for a, b in pairs:
        assert a.strip() and b.strip()
        assert a.lower() != b.lower()
        key = frozenset((a.lower(), b.lower()))
        assert key not in seen, (a, b)
        seen.add(key)
        assert "," not in a + b


def test_bundled_pairs_avoid_random_play_filler() -> None:
    # Random play describes with filler words; a secret among them would leak in tests.
    from games.play import FILLER

    for a, b in decks.pairs():
        for w in (a, b):
            assert not any(contains_word(f, w) for f in FILLER), w


def test_custom_deck_is_used_and_kept_in_config() -> None:
    cfg = GAME.make_config(deck=[["Kayak", "Canoe"]])
    assert cfg.deck == (("Kayak", "Canoe"),)
    s, _ = GAME.new(cfg, 4, 7)
    assert {s.villager_word, s.spy_word} == {"Kayak", "Canoe"}
    again = GAME.config_from_dict(json.loads(json.dumps(dataclasses.asdict(cfg))))
    assert again == cfg


def test_custom_deck_as_text() -> None:
    cfg = GAME.make_config(deck="# mine\nsun, moon\nriver, lake\n")
    assert cfg.deck == (("sun", "moon"), ("river", "lake"))


@pytest.mark.parametrize(
    "deck",
    [
        [],
        [("sun", "sun")],
        [("sun", "Moon"), ("moon", "sun")],
        [("sun", " ")],
        [("sun",)],
        "sun moon\n",
        [("x" * 41, "moon")],
    ],
)
def test_bad_custom_decks_are_refused(deck: object) -> None:
    with pytest.raises(ConfigError):
        GAME.make_config(deck=deck)


# --------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    "variant,options",
    [
        ("nope", {}),
        ("classic", {"tie_rule": "coin"}),
        ("classic", {"spies": 0}),
        ("classic", {"spies": 6}),
        ("classic", {"max_words": 0}),
        ("classic", {"max_rounds": 0}),
        ("classic", {"colour": "red"}),
        ("spygame", {"spies": 2}),
        ("spygame", {"blank": True}),
        ("spygame", {"discussion": True}),
    ],
)
def test_bad_configs_are_refused(variant: str, options: dict) -> None:
    with pytest.raises(ConfigError):
        GAME.make_config(variant, **options)


def test_seat_ranges_and_default_spies() -> None:
    assert GAME.seat_range(GAME.make_config()) == (3, 12)
    assert GAME.seat_range(GAME.make_config(blank=True)) == (5, 12)
    assert GAME.seat_range(GAME.make_config("spygame")) == (4, 4)
    assert GAME.seat_range(GAME.make_config(spies=2)) == (5, 12)
    for seats, spies in [(3, 1), (6, 1), (7, 2), (10, 2), (11, 3), (12, 3)]:
        assert len(seats_of(deal(seats=seats), Role.SPY)) == spies
    with pytest.raises(ConfigError):
        GAME.new(GAME.make_config("spygame"), 5, 0)
    with pytest.raises(ConfigError):
        GAME.new(GAME.make_config(), 13, 0)
    with pytest.raises(ConfigError):
        GAME.new(GAME.make_config(blank=True), 4, 0)


def test_rules_text_mentions_the_setup() -> None:
    assert "run-off" in GAME.rules(GAME.make_config())
    assert "Mr. White" in GAME.rules(GAME.make_config(blank=True))
    assert "two players remain" in GAME.rules(GAME.make_config("spygame"))


# --------------------------------------------------------------------------- deal


def test_deal_tells_each_player_only_their_word() -> None:
    cfg = GAME.make_config(blank=True)
    s, events = GAME.new(cfg, 7, 3)
    words = [e for e in events if e.kind == "word"]
    assert len(words) == 7
    for e in words:
        (seat,) = tuple(e.audience.seats or ())
        role = s.roles[seat]
        if role is Role.MR_WHITE:
            assert e.data == {"word": None, "blank": True}
        else:
            assert e.data["word"] == (s.spy_word if role is Role.SPY else s.villager_word)
        assert "role" not in e.data
    assert len(seats_of(s, Role.SPY)) == 2 and len(seats_of(s, Role.MR_WHITE)) == 1
    assert not contains_word(public_text(s), s.villager_word)
    assert not contains_word(public_text(s), s.spy_word)


def test_deal_is_seeded_and_sides_vary() -> None:
    assert deal(seed=11) == deal(seed=11)
    deck = (("tea", "coffee"),)
    sides = {GAME.new(GAME.make_config(deck=deck), 4, seed)[0].villager_word for seed in range(30)}
    assert sides == {"tea", "coffee"}
    spies = {tuple(seats_of(deal(seed=seed), Role.SPY)) for seed in range(30)}
    assert len(spies) > 1


def test_speaking_order_is_a_fresh_shuffle_of_the_living() -> None:
    s = deal(seats=8, seed=5, tie_rule="none")
    orders = []
    for _ in range(4):
        orders.append(s.order)
        assert sorted(s.order) == list(s.living)
        s = vote(describe_round(s), {x: None for x in s.living})  # nobody out: same players
    assert len(set(orders)) > 1
    s = eliminate(s, seats_of(s, Role.VILLAGER)[0])
    assert sorted(s.order) == list(s.living) and len(s.order) == 7


# --------------------------------------------------------------------------- descriptions


def test_description_rules() -> None:
    s = deal(seats=4, seed=2)
    (speaker,) = GAME.to_act(s)
    word = s.word_of(speaker)
    assert word is not None
    other = next(x for x in range(4) if x != speaker)
    spec = GAME.legal(s, speaker)
    assert isinstance(spec, Text) and spec.max_words == 12
    assert GAME.legal(s, other) is None

    bad = [
        (other, Action("describe", ("fine words",)), "not your turn"),
        (speaker, Action("vote", ("1",)), "Expected"),
        (speaker, Action("describe", ("   ",)), "empty"),
        (speaker, Action("describe", (" ".join(["word"] * 13),)), "at most 12"),
        (speaker, Action("describe", (f"it is a {word.upper()} really",)), "your word"),
        (speaker, Action("describe", (f"many {word}s here",)), "your word"),
    ]
    for seat, action, message in bad:
        with pytest.raises(IllegalAction, match=message) as err:
            GAME.apply(s, seat, action)
        if seat == speaker and "your word" in message:
            assert word.lower() not in str(err.value).lower()

    s1 = play(s, speaker, Action("describe", ("Found in kitchens!",)))
    (nxt,) = GAME.to_act(s1)
    with pytest.raises(IllegalAction, match="already given"):
        GAME.apply(s1, nxt, Action("describe", ("found in   KITCHENS",)))
    # The failed attempt changed nothing: the same seat can still speak.
    s2 = play(s1, nxt, Action("describe", ("found in gardens",)))
    assert s2.descriptions[-1] == (1, nxt, "found in gardens")


def test_mr_white_may_say_anything_new() -> None:
    s = find_seed(lambda s: s.order[0] == seats_of(s, Role.MR_WHITE)[0], blank=True)
    white = s.order[0]
    s = play(s, white, Action("describe", (f"{s.villager_word} {s.spy_word}",)))
    assert s.descriptions[0][1] == white


# --------------------------------------------------------------------------- discussion and votes


def test_discussion_phase_waits_for_everyone_ready() -> None:
    s = describe_round(deal(seats=4, discussion=True))
    assert s.phase is Phase.DISCUSS
    assert GAME.to_act(s) == frozenset(range(4))
    spec = GAME.legal(s, 0)
    assert isinstance(spec, Choice) and spec.ids() == ("ready",)
    assert GAME.timeout_action(s, 1) == Action("ready", ("ready",))
    s = play(s, 0, Action("ready", ("ready",)))
    with pytest.raises(IllegalAction):
        GAME.apply(s, 0, Action("ready", ("ready",)))
    for seat in (1, 2, 3):
        timeout = GAME.timeout_action(s, seat)
        assert timeout is not None
        s = play(s, seat, timeout)
    assert s.phase is Phase.VOTE


def test_vote_options_privacy_and_reveal() -> None:
    s = describe_round(deal(seats=5, seed=4))
    assert s.phase is Phase.VOTE
    assert GAME.to_act(s) == frozenset(range(5))
    spec = GAME.legal(s, 2)
    assert isinstance(spec, Choice)
    assert sorted(spec.ids()) == ["0", "1", "3", "4"]
    assert GAME.timeout_action(s, 2) == Action("vote", ("abstain",))
    with pytest.raises(IllegalAction):
        GAME.apply(s, 2, Action("vote", ("2",)))
    with pytest.raises(IllegalAction):
        GAME.apply(s, 2, Action("vote", ("9",)))
    s1, evs = GAME.apply(s, 2, Action("vote", ("0",)))
    private = [e for e in evs if not e.audience.is_public]
    public = [e for e in evs if e.audience.is_public]
    assert [e.data["target"] for e in private] == [0] and private[0].audience.seats == frozenset({2})
    assert all("target" not in e.data for e in public)
    assert GAME.observe(s1, 2).view["my_vote"] == 0
    assert GAME.observe(s1, 3).view["my_vote"] is None
    with pytest.raises(IllegalAction, match="not your turn"):
        GAME.apply(s1, 2, Action("vote", ("1",)))
    s2 = vote(s1, {0: 1, 1: 0, 3: 0, 4: None})
    revealed = [e for e in s2.log if e.kind == "votes_revealed"][-1]
    assert revealed.audience == PUBLIC
    assert revealed.data["ballots"] == {"0": 1, "1": 0, "2": 0, "3": 0, "4": None}
    assert s2.eliminated == ((1, 0),)
    out = [e for e in s2.log if e.kind == "eliminated"][-1]
    assert out.data == {"round": 1, "seat": 0, "role": s2.roles[0].value}
    # The eliminated player watches but cannot act.
    if s2.phase is Phase.DESCRIBE:
        with pytest.raises(IllegalAction, match="voted out"):
            GAME.apply(s2, 0, Action("describe", ("hello there",)))
        assert 0 not in GAME.to_act(s2)


def test_vote_options_order_is_shuffled_per_voter() -> None:
    s = describe_round(deal(seats=8, seed=1))
    orders = {GAME.legal(s, v).ids() for v in range(8)}  # type: ignore[union-attr]
    assert any(list(o) != sorted(o, key=int) for o in orders)


def test_tie_goes_to_runoff_among_tied_players_then_majority() -> None:
    s = describe_round(deal(seats=5, seed=8, max_rounds=5))
    villagers = seats_of(s, Role.VILLAGER)
    a, b = villagers[0], villagers[1]
    others = [x for x in range(5) if x not in (a, b)]
    s = vote(s, {a: b, b: a, others[0]: a, others[1]: b, others[2]: None})
    assert s.phase is Phase.RUNOFF and s.candidates == (min(a, b), max(a, b))
    assert not s.eliminated
    spec = GAME.legal(s, others[0])
    assert isinstance(spec, Choice) and sorted(spec.ids()) == sorted([str(a), str(b)])
    assert GAME.legal(s, a).ids() == (str(b),)  # type: ignore[union-attr]
    with pytest.raises(IllegalAction):
        GAME.apply(s, others[0], Action("vote", (str(others[1]),)))
    s = vote(s, {a: b, b: a, others[0]: a, others[1]: a, others[2]: a})
    assert s.eliminated == ((1, a),)
    assert s.phase is Phase.DESCRIBE and s.round == 2


def test_runoff_tie_eliminates_nobody() -> None:
    s = describe_round(deal(seats=4, seed=3))
    s = vote(s, {0: 1, 1: 0, 2: 0, 3: 1})
    assert s.phase is Phase.RUNOFF
    s = vote(s, {0: 1, 1: 0, 2: 0, 3: 1})
    assert not s.eliminated and s.phase is Phase.DESCRIBE and s.round == 2
    kinds = [e.kind for e in s.log]
    assert kinds.count("tie") == 2 and "no_elimination" in kinds


def test_tie_rule_none_eliminates_nobody_at_once() -> None:
    s = describe_round(deal(seats=4, seed=3, tie_rule="none"))
    s = vote(s, {0: 1, 1: 0, 2: 0, 3: 1})
    assert s.phase is Phase.DESCRIBE and s.round == 2 and not s.eliminated
    assert len(s.votes) == 1


def test_all_abstain_eliminates_nobody() -> None:
    s = describe_round(deal(seats=4, seed=3))
    s = vote(s, {x: None for x in range(4)})
    assert s.phase is Phase.DESCRIBE and s.round == 2 and not s.eliminated


# --------------------------------------------------------------------------- end conditions


def assert_over(s: SpyState, team: str, winners: set[int]) -> None:
    assert s.phase is Phase.OVER
    assert GAME.to_act(s) == frozenset()
    assert all(GAME.legal(s, x) is None for x in range(s.seats))
    assert GAME.secrets(s) == ()
    r = GAME.result(s)
    assert r is not None and r.details["team"] == team and r.winners == frozenset(winners)
    assert all(r.scores[x] == (1.0 if x in winners else 0.0) for x in range(s.seats))
    with pytest.raises(IllegalAction, match="over"):
        GAME.apply(s, 0, Action("vote", ("1",)))
    over = [e for e in s.log if e.kind == "game_over"]
    assert len(over) == 1 and over[0].data["villager_word"] == s.villager_word


def test_villagers_win_when_last_spy_is_out_and_nothing_crashes() -> None:
    s = deal(seats=8, seed=6)
    spies = seats_of(s, Role.SPY)
    assert len(spies) == 2
    s = eliminate(s, spies[0])
    assert s.phase is Phase.DESCRIBE and GAME.result(s) is None
    s = eliminate(s, spies[1])
    assert_over(s, "villagers", set(seats_of(s, Role.VILLAGER)))
    r = GAME.result(s)
    assert r is not None
    assert r.details["eliminated"] == spies and r.details["spies"] == spies
    assert r.details["rounds"] == 2
    assert r.details["votes_received"][str(spies[0])] == [7, None]
    assert r.details["votes_received"][str(spies[1])] == [0, 6]
    assert r.details["rounds_survived"][str(spies[0])] == 1
    assert r.details["rounds_survived"][str(spies[1])] == 2


def test_spies_win_when_they_match_the_villagers() -> None:
    s = deal(seats=3, seed=0)
    villager = seats_of(s, Role.VILLAGER)[0]
    s = eliminate(s, villager)
    assert_over(s, "infiltrators", set(seats_of(s, Role.SPY)))
    assert "outnumbered" in GAME.result(s).summary  # type: ignore[union-attr]


def test_spies_win_at_round_limit() -> None:
    s = describe_round(deal(seats=5, seed=2, max_rounds=1, tie_rule="none"))
    s = vote(s, {0: 1, 1: 0, 2: 0, 3: 1, 4: None})
    assert_over(s, "infiltrators", set(seats_of(s, Role.SPY)))
    assert GAME.result(s).details["reason"] == "the infiltrators survived 1 rounds"  # type: ignore[union-attr]


def test_default_round_limit_is_the_seat_count() -> None:
    s = deal(seats=4, seed=9, tie_rule="none")
    for _ in range(4):
        assert s.phase is not Phase.OVER
        s = describe_round(s)
        s = vote(s, {x: None for x in range(4)})
    assert s.round == 4
    assert_over(s, "infiltrators", set(seats_of(s, Role.SPY)))


def test_mr_white_right_guess_wins_alone() -> None:
    s = deal(seats=6, seed=4, blank=True)
    (white,) = seats_of(s, Role.MR_WHITE)
    s = eliminate(s, white)
    assert s.phase is Phase.WHITE_GUESS and GAME.to_act(s) == frozenset({white})
    spec = GAME.legal(s, white)
    assert isinstance(spec, Text) and spec.max_words == 3
    assert GAME.timeout_action(s, white) is None
    with pytest.raises(IllegalAction):
        GAME.apply(s, white, Action("guess", ("one two three four",)))
    s = play(s, white, Action("guess", (s.villager_word.upper() + "s",)))
    assert_over(s, "mr_white", {white})
    assert GAME.result(s).details["white_guess"]  # type: ignore[union-attr]


def test_mr_white_wrong_guess_stays_private_and_game_goes_on() -> None:
    s = deal(seats=6, seed=4, blank=True)
    (white,) = seats_of(s, Role.MR_WHITE)
    s = eliminate(s, white)
    s, evs = GAME.apply(s, white, Action("guess", (s.spy_word,)))
    assert s.phase is Phase.DESCRIBE and s.round == 2
    assert not contains_word(public_text(s), s.spy_word)
    assert [e.data for e in evs if e.kind == "white_guessed"] == [{"seat": white, "correct": False}]


def test_wrong_guess_of_last_infiltrator_lets_villagers_win() -> None:
    s = deal(seats=5, seed=1, blank=True)
    (spy,) = seats_of(s, Role.SPY)
    (white,) = seats_of(s, Role.MR_WHITE)
    s = eliminate(s, spy)
    s = eliminate(s, white)
    assert s.phase is Phase.WHITE_GUESS
    s = play(s, white, Action("guess", ("nothing like it",)))
    assert_over(s, "villagers", set(seats_of(s, Role.VILLAGER)))


def test_mr_white_wins_when_two_players_are_left() -> None:
    s = deal(seats=5, seed=1, blank=True)
    (spy,) = seats_of(s, Role.SPY)
    villagers = seats_of(s, Role.VILLAGER)
    (white,) = seats_of(s, Role.MR_WHITE)
    s = eliminate(s, spy)
    s = eliminate(s, villagers[0])
    assert s.phase is Phase.DESCRIBE
    s = eliminate(s, villagers[1])
    assert_over(s, "infiltrators", {white})
    assert GAME.result(s).summary.startswith("Mr. White wins")  # type: ignore[union-attr]


def test_spies_and_living_mr_white_win_together() -> None:
    s = deal(seats=5, seed=1, blank=True)
    villagers = seats_of(s, Role.VILLAGER)
    s = eliminate(s, villagers[0])
    s = eliminate(s, villagers[1])
    assert_over(s, "infiltrators", set(seats_of(s, Role.SPY)) | set(seats_of(s, Role.MR_WHITE)))


def test_spygame_spy_voted_out_villagers_win() -> None:
    s = deal("spygame", seats=4, seed=5)
    (spy,) = seats_of(s, Role.SPY)
    s = eliminate(s, spy)
    assert_over(s, "villagers", set(range(4)) - {spy})
    assert GAME.result(s).details["rounds_survived"][str(spy)] == 1  # type: ignore[union-attr]


def test_spygame_spy_survives_to_two_players() -> None:
    s = deal("spygame", seats=4, seed=5)
    (spy,) = seats_of(s, Role.SPY)
    v = seats_of(s, Role.VILLAGER)
    s = eliminate(s, v[0])
    assert s.phase is Phase.DESCRIBE and len(s.living) == 3
    s = eliminate(s, v[1])
    assert_over(s, "infiltrators", {spy})
    assert len(s.living) == 2


# --------------------------------------------------------------------------- observation privacy


def test_observations_show_own_word_only_and_no_living_roles() -> None:
    s = deal(seats=7, seed=12, blank=True)
    spies, whites = seats_of(s, Role.SPY), seats_of(s, Role.MR_WHITE)
    villager = seats_of(s, Role.VILLAGER)[0]
    s = eliminate(s, villager)  # one revealed role on the table
    for seat in range(7):
        obs = GAME.observe(s, seat)
        raw = obs.to_json()
        blob = json.dumps({"view": raw["view"], "events": raw["events"]})
        view = obs.view
        role = s.roles[seat]
        if role is Role.VILLAGER:
            assert view["my_word"] == s.villager_word and not contains_word(blob, s.spy_word)
        elif role is Role.SPY:
            assert view["my_word"] == s.spy_word and not contains_word(blob, s.villager_word)
        else:
            assert view["my_word"] is None and view["is_blank"] is True
            assert not contains_word(blob, s.spy_word) and not contains_word(blob, s.villager_word)
        assert view["is_blank"] is (role is Role.MR_WHITE)
        assert [e["seat"] for e in view["eliminated"]] == [villager]
        assert view["eliminated"][0]["role"] == "villager"
        assert view["outcome"] is None
        assert "roles" not in view
        # No other seat's role appears as a string anywhere but for the eliminated one.
        assert blob.count('"spy"') == 0 and blob.count('"mr_white"') == 0
        assert view["living"] == [x for x in range(7) if x != villager]
    assert {x for x in spies} | {x for x in whites} <= set(s.living)
    secrets = {sec.value: sec.known_by for sec in GAME.secrets(s)}
    assert secrets[s.villager_word] == frozenset(seats_of(s, Role.VILLAGER))
    assert secrets[s.spy_word] == frozenset(spies)


def test_observation_history_keys() -> None:
    s = describe_round(deal(seats=4, seed=3))
    view = GAME.observe(s, 0).view
    assert view["phase"] == "vote" and view["round"] == 1
    assert [d["seat"] for d in view["descriptions"]] == list(s.order)
    assert view["speaking_order"] == list(s.order) and view["current_speaker"] is None
    v = seats_of(s, Role.VILLAGER)[0]
    o = next(x for x in range(4) if x != v)
    ballots = {x: (v if x != v else o) for x in range(4)}
    s = vote(s, ballots)
    view = GAME.observe(s, o).view
    assert view["votes"] == [
        {"round": 1, "stage": "vote", "ballots": {str(k): t for k, t in ballots.items()}, "eliminated": v}
    ]
    assert view["phase"] == "describe" and view["round"] == 2
    assert view["current_speaker"] == s.order[0] and v not in s.order


def test_random_play_ends_for_every_setup() -> None:
    setups: list[tuple[str, Sequence[int], dict[str, Any]]] = [
        ("classic", range(3, 13), {}),
        ("classic", range(5, 13), {"blank": True, "discussion": True}),
        ("classic", (4, 9), {"tie_rule": "none", "max_words": 2}),
        ("spygame", (4,), {}),
    ]
    for variant, seats_list, opts in setups:
        cfg = GAME.make_config(variant, **opts)
        for n in seats_list:
            for seed in range(3):
                pt = play_random(GAME, cfg, n, seed)
                assert pt.result is not None
                assert pt.result.details["rounds"] <= n
                for e in pt.events:
                    assert GAME.text(e, seat_names(n))


# --------------------------------------------------------------------------- golden transcripts


def test_a_three_way_tie_reads_as_a_list() -> None:
    from games.base import Event

    text = GAME.text(Event("tie", {"tied": [0, 2, 3], "runoff": True}, PUBLIC), ["Alice", "AI-2", "AI-3", "AI-4"])
    assert text == "Tie between Alice, AI-3 and AI-4: a run-off decides."
