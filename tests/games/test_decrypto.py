"""Rule tests for the Decrypto engine (both variants) and its keyword bank."""

from __future__ import annotations

import json

import pytest

from games import decks
from games.base import Action, Choice, ConfigError, Event, IllegalAction, Text, config_to_dict, contains_word, words_of
from games.decrypto import ALL_CODES, GAME, DecryptoState, Phase, code_id
from games.decrypto.narration import sentence
from games.play import FILLER, play_random, seat_names

DECK = ("apple", "river", "music", "stone", "cloud", "tiger", "paper", "light", "ocean", "bread")
HINTS = Action("hints", ("alpha", "bravo echo", "charlie"))


# --------------------------------------------------------------------------- helpers


def guess(code: str) -> Action:
    return Action("guess", (code,))


def other_than(code: str) -> str:
    return next(code_id(c) for c in ALL_CODES if code_id(c) != code)


def act(s: DecryptoState, seat: int, a: Action) -> DecryptoState:
    return GAME.apply(s, seat, a)[0]


def bench(seed: int = 7, **options: object) -> DecryptoState:
    return GAME.new(GAME.make_config("benchmark", deck=DECK, **options), 3, seed)[0]


def teams(seats: int = 4, seed: int = 7, **options: object) -> DecryptoState:
    return GAME.new(GAME.make_config("teams", deck=DECK, **options), seats, seed)[0]


def bench_turn(s: DecryptoState, decoder_right: bool, interceptor_right: bool) -> DecryptoState:
    s = act(s, 0, HINTS)
    code = code_id(s.codes[0])
    s = act(s, 1, guess(code if decoder_right else other_than(code)))
    return act(s, 2, guess(code if interceptor_right else other_than(code)))


def teams_round(
    s: DecryptoState,
    a_right: bool = True,
    b_right: bool = True,
    a_intercepts: bool = False,
    b_intercepts: bool = False,
) -> DecryptoState:
    view = GAME.observe(s, 0).view
    enc, dec = view["encoders"], view["decoders"]
    codes = {"A": code_id(s.codes[0]), "B": code_id(s.codes[1])}
    start = s.round
    s = act(s, enc["A"], HINTS)
    s = act(s, enc["B"], HINTS)
    for team, other, right, intercepts in (("A", "B", a_right, b_intercepts), ("B", "A", b_right, a_intercepts)):
        c = codes[team]
        s = act(s, dec[team], guess(c if right else other_than(c)))
        still_open = s.phase is Phase.DECODE and s.round == start and s.decoding == "AB".index(team)
        if still_open:  # from round 2 the other team's decoder intercepts
            assert GAME.to_act(s) == frozenset({dec[other]})
            s = act(s, dec[other], guess(c if intercepts else other_than(c)))
    return s


def public_only(events: tuple[Event, ...]) -> list[Event]:
    return [e for e in events if e.audience.is_public]


def seen_text(s: DecryptoState, seat: int) -> str:
    return json.dumps(GAME.observe(s, seat).to_json())


def assert_unchanged(s: DecryptoState, seat: int, a: Action, match: str = "") -> None:
    with pytest.raises(IllegalAction, match=match):
        GAME.apply(s, seat, a)


# --------------------------------------------------------------------------- keyword bank


def test_bundled_keyword_bank_is_large_distinct_and_plain() -> None:
    words = decks.keywords()
    assert len(words) >= 500
    assert len({w.lower() for w in words}) == len(words)
    assert all(w and w == w.strip().lower() and len(w.split()) == 1 for w in words)
    bank = set(words)
    plurals = sorted(w for w in words if w.endswith("s") and (w[:-1] in bank or w[:-2] in bank))
    assert plurals == []
    # Random play writes filler words as hints; none may be a keyword.
    assert bank.isdisjoint(FILLER)


def test_no_keyword_is_a_word_of_the_engines_own_text() -> None:
    """A keyword that is also a view key or a word of a fixed message would look leaked."""
    bank = set(decks.keywords())
    nonsense = tuple(f"zq{i}x" for i in range(40))
    for variant, seats in (("benchmark", 3), ("teams", 4), ("teams", 5)):
        cfg = GAME.make_config(variant)
        for seed in range(6):
            pt = play_random(GAME, cfg, seats, seed, vocabulary=nonsense)
            s, _ = GAME.new(cfg, seats, seed)
            for seat, action in [*pt.actions, (None, None)]:
                for viewer in range(seats):
                    view = dict(GAME.observe(s, viewer).view, keywords=None)
                    spec = GAME.legal(s, viewer)
                    fixed = json.dumps([view, s.phase.value, spec.prompt if spec else ""])
                    assert bank.isdisjoint(words_of(fixed)), sorted(bank & set(words_of(fixed)))
                if seat is None:
                    break
                assert action is not None
                s = act(s, seat, action)
            for e in s.log:
                data = {k: v for k, v in e.data.items() if k != "keywords"}
                fixed = json.dumps([e.kind, data, GAME.text(e, seat_names(seats)) if e.kind not in ("keywords", "game_over") else ""])
                assert bank.isdisjoint(words_of(fixed)), (e.kind, sorted(bank & set(words_of(fixed))))


def test_custom_deck_is_used_and_validated() -> None:
    cfg = GAME.make_config("benchmark", deck=["Apple", "river", "music", "stone"])
    assert cfg.deck == ("Apple", "river", "music", "stone")
    s, _ = GAME.new(cfg, 3, 1)
    assert set(s.keywords[0]) == set(cfg.deck)
    with pytest.raises(ConfigError, match="repeats"):
        GAME.make_config("benchmark", deck=["apple", "river", "APPLE", "stone", "cloud"])
    with pytest.raises(ConfigError, match="empty"):
        GAME.make_config("benchmark", deck=["apple", "  ", "music", "stone", "cloud"])
    with pytest.raises(ConfigError, match="at least 4"):
        GAME.make_config("benchmark", deck=["apple", "river", "music"])
    with pytest.raises(ConfigError, match="at least 8"):
        GAME.make_config("teams", deck=list(DECK[:7]))
    with pytest.raises(ConfigError, match="must be a word"):
        GAME.make_config("benchmark", deck=["apple", "river", "music", 4])


# --------------------------------------------------------------------------- config


def test_config_validation_and_round_trip() -> None:
    assert GAME.make_config().variant == "benchmark"
    cfg = GAME.make_config("teams", max_rounds=5, exclude_used_codes=True, deck=DECK)
    assert GAME.config_from_dict(json.loads(json.dumps(config_to_dict(cfg)))) == cfg
    for bad in (
        {"variant": "solo"},
        {"max_turns": 0},
        {"max_turns": 25},
        {"max_turns": True},
        {"max_interceptions": 0},
        {"exclude_used_codes": "yes"},
        {"max_rounds": 4},  # a teams option on the benchmark
        {"colour": "red"},
    ):
        with pytest.raises(ConfigError):
            GAME.make_config(**bad)
    with pytest.raises(ConfigError, match="max_rounds"):
        GAME.make_config("teams", max_turns=4)


def test_seat_counts() -> None:
    assert GAME.seat_range(GAME.make_config("benchmark")) == (3, 3)
    assert GAME.seat_range(GAME.make_config("teams")) == (4, 8)
    for variant, n in (("benchmark", 4), ("teams", 3), ("teams", 9)):
        with pytest.raises(ConfigError, match="players"):
            GAME.new(GAME.make_config(variant), n, 1)


# --------------------------------------------------------------------------- benchmark


def test_benchmark_deal_and_privacy() -> None:
    s, events = GAME.new(GAME.make_config("benchmark", deck=DECK), 3, 11)
    assert GAME.to_act(s) == frozenset({0})
    keyword_events = [e for e in events if e.kind == "keywords"]
    assert len(keyword_events) == 1 and keyword_events[0].audience.seats == frozenset({0, 1})
    code_events = [e for e in events if e.kind == "code"]
    assert code_events[0].audience.seats == frozenset({0})
    enc, dec, itc = (GAME.observe(s, i).view for i in range(3))
    assert (enc["role"], dec["role"], itc["role"]) == ("encoder", "decoder", "interceptor")
    assert enc["code"] == code_id(s.codes[0]) and dec["code"] is None and itc["code"] is None
    assert enc["keywords"] == dec["keywords"] == {str(i + 1): w for i, w in enumerate(s.keywords[0])}
    assert itc["keywords"] is None and itc["team"] is None
    assert all(not contains_word(seen_text(s, 2), w) for w in s.keywords[0])
    # The interceptor cannot see the code even after the hints are out.
    s = act(s, 0, HINTS)
    assert code_id(s.codes[0]) not in seen_text(s, 2)
    assert code_id(s.codes[0]) not in seen_text(s, 1)
    secrets = {x.value: x.known_by for x in GAME.secrets(s)}
    assert secrets[code_id(s.codes[0])] == frozenset({0})
    assert all(secrets[w] == frozenset({0, 1}) for w in s.keywords[0])


def test_benchmark_hint_rules() -> None:
    s = bench()
    keyword = s.keywords[0][2]
    assert_unchanged(s, 0, Action("hints", ("alpha", f"big {keyword.upper()}", "charlie")), match="Hint 2 contains keyword 3")
    assert_unchanged(s, 1, HINTS, match="not your turn")
    assert_unchanged(s, 0, Action("guess", ("1-2-3",)), match="Expected a hints")
    assert_unchanged(s, 0, Action("hints", ("alpha", "bravo")), match="Expected 3")
    assert_unchanged(s, 0, Action("hints", ("alpha", "one two three", "charlie")), match="at most 2")
    assert_unchanged(s, 0, Action("hints", ("alpha", "x" * 31, "charlie")), match="30 characters")
    assert_unchanged(s, 0, Action("hints", ("alpha", "   ", "charlie")), match="empty")
    assert_unchanged(s, 5, HINTS, match="no such seat")
    spec = GAME.legal(s, 0)
    assert isinstance(spec, Text) and len(spec.fields) == 3 and spec.max_words == 2
    assert GAME.timeout_action(s, 0) is None
    # A keyword inside a longer word is read letters-only, as the Chameleon reads its secret:
    # "<keyword>ish" names it. A word that merely shares its first letters does not.
    assert_unchanged(s, 0, Action("hints", ("alpha", f"{keyword}ish", "charlie")), match="Hint 2 contains keyword 3")
    s2, events = GAME.apply(s, 0, Action("hints", ("alpha", f"{keyword[:3]}ish", "charlie")))
    assert s2.phase is Phase.DECODE and [e.kind for e in events] == ["hints"] and events[0].audience.is_public


def test_benchmark_guesses_are_simultaneous_and_private() -> None:
    s = act(bench(), 0, HINTS)
    assert GAME.to_act(s) == frozenset({1, 2})
    spec = GAME.legal(s, 2)
    assert isinstance(spec, Choice) and len(spec.options) == 24 and "3-1-4" in spec.ids()
    assert GAME.legal(s, 0) is None
    code = code_id(s.codes[0])
    s, events = GAME.apply(s, 2, guess(code))
    private = [e for e in events if not e.audience.is_public]
    assert [e.audience.seats for e in private] == [frozenset({2})]
    assert all(code not in json.dumps(e.to_json()) for e in public_only(events))
    assert code not in seen_text(s, 1)
    assert GAME.observe(s, 2).view["your_guess"] == code
    assert_unchanged(s, 2, guess(code), match="not your turn")
    assert_unchanged(s, 1, guess("1-1-2"), match="not one of the options")
    s, events = GAME.apply(s, 1, guess(other_than(code)))
    reveal = next(e for e in events if e.kind == "reveal")
    assert reveal.audience.is_public and reveal.data["code"] == code
    assert reveal.data["miscommunication"] and reveal.data["interception"]
    view = GAME.observe(s, 2).view
    assert view["code_history"] == [code]
    digits = code.split("-")
    assert view["hint_history"][digits[0]] == ["alpha"] and view["hint_history"][digits[1]] == ["bravo echo"]
    assert view["tokens"] == {"interceptions": 1, "miscommunications": 1}
    assert view["round"] == 2 and GAME.to_act(s) == frozenset({0})


def test_benchmark_two_interceptions_win_for_the_interceptor() -> None:
    s = bench_turn(bench(), True, True)
    assert GAME.result(s) is None
    s = bench_turn(s, True, True)
    r = GAME.result(s)
    assert r is not None and r.winners == frozenset({2}) and r.details["reason"] == "interceptions"
    assert r.details["turns"] == 2 and r.details["interceptions"] == 2 and r.details["miscommunications"] == 0
    assert GAME.to_act(s) == frozenset() and GAME.secrets(s) == ()
    assert_unchanged(s, 0, HINTS, match="over")


def test_benchmark_two_miscommunications_win_for_the_interceptor() -> None:
    s = bench_turn(bench(), False, False)
    s = bench_turn(s, True, False)
    s = bench_turn(s, False, False)
    r = GAME.result(s)
    assert r is not None and r.winners == frozenset({2}) and r.details["reason"] == "miscommunications"
    assert r.details["turns"] == 3 and r.scores == {0: 0.0, 1: 0.0, 2: 1.0}


def test_benchmark_both_limits_on_one_turn_go_to_the_interceptor() -> None:
    s = bench_turn(bench(), False, True)
    s = bench_turn(s, False, True)
    r = GAME.result(s)
    assert r is not None and r.winners == frozenset({2}) and r.details["reason"] == "both"


def test_benchmark_team_wins_after_eight_turns_with_metrics() -> None:
    s = bench()
    for i in range(8):
        assert GAME.result(s) is None
        s = bench_turn(s, i != 3, i == 5)
    r = GAME.result(s)
    assert r is not None and r.winners == frozenset({0, 1}) and r.details["reason"] == "survived"
    d = r.details
    assert (d["turns"], d["miscommunications"], d["interceptions"], d["team_won"]) == (8, 1, 1, True)
    assert len(d["codes"]) == len(set(d["codes"])) == 8 and len(d["hints"]) == 8
    assert d["decoder_guesses"][0] == d["codes"][0] and d["decoder_guesses"][3] != d["codes"][3]
    assert d["interceptor_guesses"][5] == d["codes"][5]
    assert set(d["keywords"].values()) == set(s.keywords[0])
    json.dumps(r.to_json())


def test_benchmark_codes_never_repeat_and_used_codes_can_be_hidden() -> None:
    s = bench(max_turns=24)
    for _ in range(24):
        s = bench_turn(s, True, False)
    assert len({code_id(r.code) for r in s.history}) == 24
    plain = act(bench_turn(bench(), True, False), 0, HINTS)
    spec = GAME.legal(plain, 1)
    assert isinstance(spec, Choice) and len(spec.options) == 24
    hidden = act(bench_turn(bench(exclude_used_codes=True), True, False), 0, HINTS)
    spec = GAME.legal(hidden, 1)
    used = code_id(hidden.history[0].code)
    assert isinstance(spec, Choice) and len(spec.options) == 23 and used not in spec.ids()
    assert_unchanged(hidden, 1, guess(used), match="not one of the options")


def test_benchmark_max_turns_option() -> None:
    s = bench(max_turns=2)
    s = bench_turn(bench_turn(s, True, False), True, False)
    r = GAME.result(s)
    assert r is not None and r.winners == frozenset({0, 1}) and r.details["turns"] == 2


def test_benchmark_play_on_keeps_the_later_turns_and_the_decided_result() -> None:
    """play_on (the benchmark's human-play loop): decided on turn 2, played to turn 8, measured at turn 2."""
    s = bench_turn(bench(play_on=True), True, True)
    s, events = GAME.apply(act(act(s, 0, HINTS), 1, guess(code_id(s.codes[0]))), 2, guess(code_id(s.codes[0])))
    decided = next(e for e in events if e.kind == "decided")
    assert decided.data["turn"] == 2 and "Play goes on to turn 8" in sentence(decided)
    assert GAME.result(s) is None and GAME.to_act(s) == frozenset({0})
    for i in range(6):
        s = bench_turn(s, i != 0, True)  # a miscommunication and more interceptions change nothing now
    r = GAME.result(s)
    assert r is not None and r.winners == frozenset({2}) and r.details["reason"] == "interceptions"
    d = r.details
    assert (d["turns"], d["interceptions"], d["miscommunications"], d["played_on"]) == (2, 2, 0, 6)
    assert len(d["codes"]) == len(d["hints"]) == 8 and "on turn 2" in r.summary
    assert bench_turn(bench_turn(bench(), True, True), True, True).history[-1].round == 2  # without it: over at 2
    with pytest.raises(ConfigError, match="play_on belongs to the benchmark"):
        GAME.make_config("teams", play_on=True)


def test_abstaining_guess_is_a_miss() -> None:
    s = act(bench(), 0, HINTS)
    timeout = GAME.timeout_action(s, 1)
    assert timeout == Action("guess", ("abstain",))
    assert "abstain" not in GAME.legal(s, 1).ids()  # type: ignore[union-attr]
    s = act(s, 1, timeout)
    s = act(s, 2, GAME.timeout_action(s, 2))  # type: ignore[arg-type]
    rec = s.history[0]
    assert rec.miscommunication and not rec.interception
    assert_unchanged(s, 0, Action("hints", ("abstain",)), match="Expected 3")


# --------------------------------------------------------------------------- teams


def test_teams_seating_and_rotation() -> None:
    s = teams(6)
    view = GAME.observe(s, 0).view
    assert view["teams"] == {"A": [0, 2, 4], "B": [1, 3, 5]}
    assert (view["encoders"], view["decoders"]) == ({"A": 0, "B": 1}, {"A": 2, "B": 3})
    assert [GAME.observe(s, i).view["role"] for i in range(6)] == ["encoder", "encoder", "decoder", "decoder", "teammate", "teammate"]
    s = teams_round(s)
    view = GAME.observe(s, 0).view
    assert (view["encoders"], view["decoders"]) == ({"A": 2, "B": 3}, {"A": 4, "B": 5})
    s = teams_round(teams_round(s))
    view = GAME.observe(s, 0).view
    assert view["round"] == 4 and (view["encoders"], view["decoders"]) == ({"A": 0, "B": 1}, {"A": 2, "B": 3})
    five = teams(5)
    assert GAME.observe(five, 0).view["teams"] == {"A": [0, 2, 4], "B": [1, 3]}


def test_teams_privacy_and_hidden_hints() -> None:
    s, events = GAME.new(GAME.make_config("teams", deck=DECK), 4, 3)
    a_words, b_words = s.keywords
    assert set(a_words).isdisjoint(b_words)
    assert GAME.to_act(s) == frozenset({0, 1})
    for seat in range(4):
        own, other = (a_words, b_words) if seat % 2 == 0 else (b_words, a_words)
        text = seen_text(s, seat)
        assert all(contains_word(text, w) for w in own)
        assert not any(contains_word(text, w) for w in other)
    assert GAME.observe(s, 2).view["code"] is None and GAME.observe(s, 0).view["code"] == code_id(s.codes[0])
    # Team B writes first; its hints stay with its encoder until team A's are resolved.
    s, evs = GAME.apply(s, 1, Action("hints", ("zulu", "yankee", "xray")))
    assert s.phase is Phase.ENCODE and GAME.to_act(s) == frozenset({0})
    assert all("zulu" not in json.dumps(e.to_json()) for e in public_only(evs))
    assert GAME.observe(s, 1).view["your_hints"] == ["zulu", "yankee", "xray"]
    s = act(s, 0, HINTS)
    assert s.phase is Phase.DECODE and s.decoding == 0
    for seat in (0, 2, 3):
        assert "zulu" not in seen_text(s, seat)
    assert GAME.observe(s, 3).view["current_hints"]["hints"] == list(HINTS.value)
    # Round 1: no interception, only team A's decoder guesses.
    assert GAME.to_act(s) == frozenset({2})
    s = act(s, 2, guess(code_id(s.codes[0])))
    assert GAME.observe(s, 0).view["current_hints"]["hints"] == ["zulu", "yankee", "xray"]
    assert GAME.to_act(s) == frozenset({3})
    assert {x.value for x in GAME.secrets(s)} >= set(a_words) | set(b_words)


def test_teams_interception_from_round_two() -> None:
    s = teams_round(teams(), a_intercepts=True, b_intercepts=True)
    assert not any(r.interception for r in s.history)
    s = act(act(s, 2, HINTS), 3, HINTS)
    assert GAME.to_act(s) == frozenset({0, 1})  # A's decoder (0) and B's decoder (1) intercepting
    spec = GAME.legal(s, 1)
    assert isinstance(spec, Choice) and spec.prompt.startswith("Intercept Team A's code")
    assert GAME.observe(s, 1).view["task"] == "intercept Team A's code"


def test_teams_two_interceptions_win() -> None:
    s = teams_round(teams())
    s = teams_round(s, a_intercepts=True)
    assert GAME.result(s) is None
    s = teams_round(s, a_intercepts=True)
    r = GAME.result(s)
    assert r is not None and r.winners == frozenset({0, 2}) and r.details["reason"] == "tokens"
    assert r.details["tokens"]["A"]["interceptions"] == 2 and r.details["rounds"] == 3


def test_teams_two_miscommunications_lose() -> None:
    s = teams_round(teams(), b_right=False)
    s = teams_round(s, b_right=False)
    r = GAME.result(s)
    assert r is not None and r.winners == frozenset({0, 2}) and r.details["winning_team"] == "A"
    assert "Team B made 2 miscommunications" in r.summary


def test_teams_both_reaching_limits_goes_to_score() -> None:
    s = teams_round(teams(), a_right=False, b_right=False)
    s = teams_round(s, a_right=False, b_right=False, a_intercepts=True)
    r = GAME.result(s)
    assert r is not None and r.details["reason"] == "score" and r.winners == frozenset({0, 2})
    assert r.details["team_scores"] == {"A": -1, "B": -2}


def test_teams_round_limit_scores() -> None:
    s = teams_round(teams(max_rounds=1), b_right=False)
    r = GAME.result(s)
    assert r is not None and r.details["reason"] == "score" and r.winners == frozenset({1, 3}) ^ frozenset({0, 1, 2, 3})


def tied_at_tiebreak(seed: int = 7) -> DecryptoState:
    s = teams_round(teams(seed=seed, max_rounds=2))
    s = teams_round(s)
    assert s.phase is Phase.TIEBREAK and GAME.result(s) is None
    return s


def test_teams_tiebreak_more_keywords_wins() -> None:
    s = tied_at_tiebreak()
    a_words, b_words = s.keywords
    # Round 2's decoders guess: seat 0 for team A, seat 1 for team B.
    assert GAME.to_act(s) == frozenset({0, 1})
    spec = GAME.legal(s, 0)
    assert isinstance(spec, Text) and len(spec.fields) == 4
    a_guess = Action("keywords", (b_words[0].upper(), b_words[1], b_words[2], "zulu"))  # 3 right, in order
    s, evs = GAME.apply(s, 0, a_guess)
    assert all(b_words[1] not in json.dumps(e.to_json()) for e in public_only(evs))
    assert not contains_word(seen_text(s, 2), b_words[1])  # seat 0's teammate does not see the guess
    secrets = {x.value: x.known_by for x in GAME.secrets(s)}
    assert secrets[b_words[1]] == frozenset({1, 3, 0})  # seat 0 typed it itself
    # Right words under the wrong numbers do not count.
    s = act(s, 1, Action("keywords", (a_words[1], a_words[0], a_words[3], a_words[3])))
    r = GAME.result(s)
    assert r is not None and r.details["reason"] == "tiebreak" and r.winners == frozenset({0, 2})
    assert r.details["tiebreak"] == {
        "A": {"guesses": [b_words[0].upper(), b_words[1], b_words[2], "zulu"], "correct": 3},
        "B": {"guesses": [a_words[1], a_words[0], a_words[3], a_words[3]], "correct": 1},
    }


def test_teams_tiebreak_tie_is_a_draw() -> None:
    s = tied_at_tiebreak()
    timeout = GAME.timeout_action(s, 1)
    assert timeout == Action("keywords", ("abstain",))
    s = act(s, 1, timeout)
    assert_unchanged(s, 1, timeout, match="not your turn")
    s = act(s, 0, Action("keywords", ("zulu", "yankee", "xray", "whiskey")))
    r = GAME.result(s)
    assert r is not None and r.winners == frozenset() and r.details["reason"] == "tie"
    assert r.scores == {0: 0.5, 1: 0.5, 2: 0.5, 3: 0.5}
    assert GAME.secrets(s) == ()
    over = next(e for e in s.log if e.kind == "game_over")
    assert over.audience.is_public and set(over.data["keywords"]["A"].values()) == set(s.keywords[0])


def test_teams_codes_never_repeat_per_team() -> None:
    s = teams(max_rounds=24)
    for _ in range(24):
        s = teams_round(s)
    for team in (0, 1):
        codes = [code_id(r.code) for r in s.history if r.team == team]
        assert len(codes) == len(set(codes)) == 24


# --------------------------------------------------------------------------- random play and transcripts


@pytest.mark.parametrize(("variant", "seats"), [("benchmark", 3), *(("teams", n) for n in range(4, 9))])
def test_random_play_terminates_and_never_leaks(variant: str, seats: int) -> None:
    cfg = GAME.make_config(variant)
    for seed in range(8):
        pt = play_random(GAME, cfg, seats, seed)
        assert pt.result is not None and pt.state.phase is Phase.OVER
        s, _ = GAME.new(cfg, seats, seed)
        for seat, action in pt.actions:
            for secret in GAME.secrets(s):
                for viewer in range(seats):
                    if viewer not in secret.known_by:
                        assert not contains_word(seen_text(s, viewer), secret.value), (secret, viewer)
            s = act(s, seat, action)
        assert s == pt.state


def test_rules_text_mentions_the_limits() -> None:
    assert "8 turns" in GAME.rules(GAME.make_config("benchmark"))
    assert "5 rounds" in GAME.rules(GAME.make_config("teams", max_rounds=5))
