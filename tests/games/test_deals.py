"""Deals as data: a given deal is the dealt state, a deal the rules
could not produce is refused with its reason, and records carrying their deal replay without a seed."""

from __future__ import annotations

import json
from typing import Any

import pytest

import games
from games import decks
from games.base import Action, ConfigError, Game, Text, config_to_dict
from games.chameleon import GAME as CHAMELEON
from games.decrypto import GAME as DECRYPTO
from games.play import Playthrough, play_random
from games.record import parse, replay_record, to_lines
from games.spy import GAME as SPY
from games.spy import Role

KEYWORDS = [["lock", "river", "music", "stool"]]
HINTS = Action("hints", ("alpha", "bravo", "charlie"))


def round_trip(game: Game, cfg: object) -> None:
    assert game.config_from_dict(json.loads(json.dumps(config_to_dict(cfg)))) == cfg


# --------------------------------------------------------------------------- Decrypto


def test_decrypto_deal_fixes_keywords_and_codes() -> None:
    cfg = DECRYPTO.make_config("benchmark", deal={"keywords": KEYWORDS, "codes": {"A:1": [3, 4, 1], "A:2": "2-1-4"}})
    round_trip(DECRYPTO, cfg)
    for seed in (1, 2, 3):
        s, events = DECRYPTO.new(cfg, 3, seed)
        assert s.keywords == (tuple(KEYWORDS[0]),) and s.codes == ((3, 4, 1),)
        s, _ = DECRYPTO.apply(s, 0, HINTS)
        s, _ = DECRYPTO.apply(s, 1, Action("guess", ("3-4-1",)))
        s, _ = DECRYPTO.apply(s, 2, Action("guess", ("1-2-3",)))
        assert s.codes == ((2, 1, 4),)


def test_decrypto_teams_deal_and_partial_deals() -> None:
    kw = [["apple", "river", "music", "stone"], ["cloud", "tiger", "paper", "light"]]
    s, _ = DECRYPTO.new(DECRYPTO.make_config("teams", deal={"keywords": kw, "codes": {"B:1": "421"}}), 4, 9)
    assert s.keywords == tuple(tuple(k) for k in kw) and s.codes[1] == (4, 2, 1)
    # Codes only: the keywords are drawn from the seed as without a deal.
    plain, _ = DECRYPTO.new(DECRYPTO.make_config("teams"), 4, 9)
    dealt, _ = DECRYPTO.new(DECRYPTO.make_config("teams", deal={"codes": {"A:2": [1, 2, 3]}}), 4, 9)
    assert dealt.keywords == plain.keywords


def test_a_code_fixed_for_a_later_turn_is_never_drawn_earlier() -> None:
    for seed in range(30):
        plain = play_random(DECRYPTO, DECRYPTO.make_config("benchmark"), 3, seed)
        codes = [c for c in (r.code for r in plain.state.history)]
        if len(codes) >= 2:
            late = codes[0]  # the code seed draws first, now reserved for turn 8
            cfg = DECRYPTO.make_config("benchmark", deal={"codes": {"A:8": list(late)}})
            pt = play_random(DECRYPTO, cfg, 3, seed)
            drawn = [r.code for r in pt.state.history if r.round < 8]
            assert late not in drawn
            return
    pytest.fail("no game with two turns")


@pytest.mark.parametrize(
    ("deal", "reason"),
    [
        ({"codes": {"A:1": [1, 2, 3], "A:4": "123"}}, "never gets the same code twice"),
        ({"codes": {"A:1": [1, 1, 2]}}, "three different digits"),
        ({"codes": {"A:1": [1, 2, 5]}}, "three different digits"),
        ({"codes": {"B:1": [1, 2, 3]}}, "team A"),
        ({"codes": {"A:9": [1, 2, 3]}}, "turn 1 to 8"),
        ({"codes": {"A:0": [1, 2, 3]}}, "turn 1 to 8"),
        ({"keywords": [["a", "b", "c"]]}, "exactly 4 keywords"),
        ({"keywords": [["lock", "river", "Lock", "stool"]]}, "dealt twice"),
        ({"keywords": [["lock", "river", "music", ""]]}, "must be a word"),
        ({"keys": []}, "unknown key"),
        (["lock"], "a deal is a mapping"),
    ],
)
def test_decrypto_deals_the_rules_could_not_produce_are_refused(deal: object, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        DECRYPTO.make_config("benchmark", deal=deal)


# --------------------------------------------------------------------------- Who-is-Spy


def test_spy_deal_fixes_pair_roles_and_orders() -> None:
    deal = {"pair": ["stool", "bench"], "spies": [3], "blank": [1], "order": [[4, 3, 2, 1, 0], [0, 1, 2, 3, 4]]}
    cfg = SPY.make_config("classic", blank=True, deal=deal)
    round_trip(SPY, cfg)
    s, events = SPY.new(cfg, 5, 77)
    assert (s.villager_word, s.spy_word) == ("stool", "bench")
    assert s.roles[3] is Role.SPY and s.roles[1] is Role.MR_WHITE and s.roles.count(Role.VILLAGER) == 3
    assert s.order == (4, 3, 2, 1, 0)
    assert SPY.deal_of(s) == {"pair": ["stool", "bench"], "spies": [3], "blank": [1], "order": [[4, 3, 2, 1, 0]]}


def test_spy_later_orders_skip_players_already_out() -> None:
    cfg = SPY.make_config("classic", deal={"spies": [0], "order": [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0]]})
    s, _ = SPY.new(cfg, 5, 1)
    for seat in (0, 1, 2, 3, 4):
        s, _ = SPY.apply(s, seat, Action("describe", (f"zq{seat}x talk",)))
    for voter in range(5):  # everyone votes seat 2 out (seat 2 votes seat 3)
        s, _ = SPY.apply(s, voter, Action("vote", ("3" if voter == 2 else "2",)))
    assert s.round == 2 and s.order == (4, 3, 1, 0)


@pytest.mark.parametrize(
    ("options", "deal", "seats", "reason"),
    [
        ({}, {"pair": ["stool", "Stool"]}, 5, "must differ"),
        ({}, {"spies": [0, 1]}, 5, "plays with 1 spies"),
        ({}, {"spies": [7]}, 5, "table has seats 0 to 4"),
        ({}, {"blank": [2]}, 5, "blank must name no seat"),
        ({"blank": True}, {"spies": [2], "blank": [2]}, 7, "cannot also be a spy"),
        ({}, {"order": [[0, 1, 2, 3]]}, 5, "every seat 0 to 4 once"),
        ({}, {"order": [[0, 1, 1, 3, 4]]}, 5, "names a seat twice"),
        ({"spies": 2}, {"spies": [1]}, 7, "asks for 2 spies"),
    ],
)
def test_spy_deals_the_rules_could_not_produce_are_refused(options: dict, deal: dict, seats: int, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        SPY.new(SPY.make_config("classic", **options, deal=deal), seats, 1)


# --------------------------------------------------------------------------- Chameleon


def test_chameleon_deal_fixes_card_secret_chameleon_and_first() -> None:
    category, words = decks.cards()[3]
    cfg = CHAMELEON.make_config("sneak", deal={"card": category.upper(), "secret": words[5].lower(), "chameleon": 2, "first": 4})
    round_trip(CHAMELEON, cfg)
    s, _ = CHAMELEON.new(cfg, 5, 123)
    assert (s.category, s.card, s.secret, s.chameleon, s.order[0]) == (category, words[:12], words[5], 2, 4)
    listed = CHAMELEON.make_config("classic", deal={"card": ["Odd", [f"w{i}" for i in "abcdefghijklmnop"]], "secret": "wc"})
    s, _ = CHAMELEON.new(listed, 4, 1)
    assert s.category == "Odd" and s.secret == "wc"


def test_chameleon_match_deals_each_round_and_never_draws_a_dealt_card() -> None:
    cards = decks.cards()
    deal = [{"card": cards[0][0]}, {}, {"card": cards[1][0], "chameleon": 0}]
    cfg = CHAMELEON.make_config("classic", mode="match", max_rounds=20, deal=deal)
    pt = play_random(CHAMELEON, cfg, 4, 5)
    rounds = pt.state.history
    assert rounds[0].category == cards[0][0]
    if len(rounds) > 2:
        assert rounds[2].category == cards[1][0] and rounds[2].chameleon == 0
    assert all(r.category not in (cards[0][0], cards[1][0]) for r in rounds[1:2])
    assert len({r.category for r in rounds}) == len(rounds)


@pytest.mark.parametrize(
    ("options", "deal", "reason"),
    [
        ({}, {"card": "No Such Card"}, "no card"),
        ({}, {"card": decks.cards()[0][0], "secret": "definitely-not-there"}, "not a word of the"),
        ({"variant": "sneak"}, {"card": decks.cards()[0][0], "secret": decks.cards()[0][1][14]}, "not a word of the"),
        ({}, [{}, {}], "single-round game"),
        ({"mode": "match"}, [{"card": decks.cards()[0][0]}, {"card": decks.cards()[0][0].lower()}], "never reuses a card"),
        ({}, {"card": ["Short", ["a", "b"]]}, "has 2 words"),
        ({}, {"chameleon": -1}, "seat number"),
        ({}, {"colour": "red"}, "unknown key"),
    ],
)
def test_chameleon_deals_the_rules_could_not_produce_are_refused(options: dict, deal: object, reason: str) -> None:
    variant = options.pop("variant", "classic")
    with pytest.raises(ConfigError, match=reason):
        CHAMELEON.make_config(variant, **options, deal=deal)


def test_chameleon_seats_and_drawn_cards_are_checked_when_dealt() -> None:
    with pytest.raises(ConfigError, match="table has seats 0 to 3"):
        CHAMELEON.new(CHAMELEON.make_config("classic", deal={"chameleon": 4}), 4, 1)
    drawn, _ = CHAMELEON.new(CHAMELEON.make_config("classic"), 4, 1)
    not_on_it = next(w for c, ws in decks.cards() for w in ws if w not in drawn.card)
    with pytest.raises(ConfigError, match="not a word of the"):
        CHAMELEON.new(CHAMELEON.make_config("classic", deal={"secret": not_on_it}), 4, 1)
    dealt, _ = CHAMELEON.new(CHAMELEON.make_config("classic", deal={"secret": drawn.card[7].upper()}), 4, 1)
    assert dealt.secret == drawn.card[7] and dealt.card == drawn.card


# --------------------------------------------------------------------------- records

CASES = [("decrypto", "benchmark", 3), ("decrypto", "teams", 5), ("spy", "classic", 6), ("spy", "spygame", 4),
         ("chameleon", "classic", 4), ("chameleon", "sneak", 5)]


def _record(gid: str, variant: str, seats: int, seed: int, **options: Any) -> tuple[list[dict[str, Any]], Playthrough]:
    game = games.get(gid)
    cfg = game.make_config(variant, **options)
    pt = play_random(game, cfg, seats, seed)
    return to_lines(game, cfg, seats, seed, pt.actions, pt.events, pt.result), pt


@pytest.mark.parametrize(("gid", "variant", "seats"), CASES)
def test_records_carry_the_deal_and_replay_without_a_seed(gid: str, variant: str, seats: int) -> None:
    lines, pt = _record(gid, variant, seats, 31)
    assert pt.result is not None
    header = lines[0]
    assert header["deal"] == games.get(gid).deal_of(pt.state)
    for change in ({"seed": None}, {"seed": 999}):
        edited = [dict(header, **change), *lines[1:]]
        if change["seed"] is None:
            del edited[0]["seed"]
        rec = parse(json.dumps(x) for x in edited)
        _, events, result = replay_record(rec)
        assert [e.to_json() for e in events] == [e.to_json() for e in pt.events]
        assert result is not None and result.to_json() == pt.result.to_json()


def test_chameleon_match_records_replay_without_a_seed() -> None:
    lines, pt = _record("chameleon", "classic", 4, 8, mode="match", max_rounds=20)
    header = {k: v for k, v in lines[0].items() if k != "seed"}
    _, events, result = replay_record(parse(json.dumps(x) for x in [header, *lines[1:]]))
    assert [e.to_json() for e in events] == [e.to_json() for e in pt.events]


@pytest.mark.parametrize(("gid", "variant", "seats"), CASES)
def test_records_without_a_deal_still_replay_from_their_seed(gid: str, variant: str, seats: int) -> None:
    lines, pt = _record(gid, variant, seats, 32)
    old = {k: v for k, v in lines[0].items() if k != "deal"}  # the format before deals
    _, events, result = replay_record(parse(json.dumps(x) for x in [old, *lines[1:]]))
    assert [e.to_json() for e in events] == [e.to_json() for e in pt.events]
    old.pop("seed")
    with pytest.raises(ValueError, match="seed"):
        parse(json.dumps(x) for x in [old, *lines[1:]])


def test_an_exported_game_with_a_deal_replays_without_its_seed() -> None:
    lines, pt = _record("spy", "classic", 5, 4)
    exported = {
        "schema": "hushtable.game/1", "game": "spy", "variant": "classic", "config": lines[0]["config"],
        "deal": lines[0]["deal"], "seats": 5,
        "actions": [{"seat": x["seat"], **x["action"]} for x in lines if x["type"] == "action"],
    }  # fmt: skip
    _, events, _ = replay_record(parse([json.dumps(exported)]))
    assert [e.to_json() for e in events] == [e.to_json() for e in pt.events]


def test_decrypto_code_keys_may_name_the_team_by_index() -> None:
    by_label = DECRYPTO.make_config("teams", deal={"codes": {"A:1": [1, 2, 3], "B:2": "432"}})
    by_index = DECRYPTO.make_config("teams", deal={"codes": {"0:1": [1, 2, 3], "1:2": "432"}})
    assert by_label == by_index
    with pytest.raises(ConfigError, match="never gets the same code twice"):
        DECRYPTO.make_config("benchmark", deal={"codes": {"A:1": [1, 2, 3], "0:2": [1, 2, 3]}})


def test_raised_hint_limits_reach_the_spec_and_the_rules() -> None:
    cfg = DECRYPTO.make_config("benchmark", hint_max_words=5, hint_max_chars=60, deal={"keywords": KEYWORDS})
    s, _ = DECRYPTO.new(cfg, 3, 1)
    spec = DECRYPTO.legal(s, 0)
    assert isinstance(spec, Text) and (spec.max_words, spec.max_chars) == (5, 60)
    assert "at most 5 words and 60 characters" in spec.prompt
    DECRYPTO.apply(s, 0, Action("hints", ("a very long hint indeed", "bravo", "charlie")))
    for bad in ({"hint_max_words": 0}, {"hint_max_chars": 301}, {"hint_max_words": True}):
        with pytest.raises(ConfigError):
            DECRYPTO.make_config("benchmark", **bad)


@pytest.mark.parametrize(("gid", "variant", "seats"), CASES)
def test_every_result_carries_the_deal_so_an_exported_game_replays_without_its_seed(gid: str, variant: str, seats: int) -> None:
    lines, pt = _record(gid, variant, seats, 6)
    assert pt.result is not None
    assert pt.result.details["deal"] == games.get(gid).deal_of(pt.state)
    exported = {
        "schema": "hushtable.game/1", "game": gid, "variant": variant, "config": lines[0]["config"], "seats": seats,
        "result": pt.result.to_json(),  # what the export writes, from the stored result
        "actions": [{"seat": x["seat"], **x["action"]} for x in lines if x["type"] == "action"],
    }  # fmt: skip
    _, events, result = replay_record(parse([json.dumps(exported)]))
    assert [e.to_json() for e in events] == [e.to_json() for e in pt.events]
