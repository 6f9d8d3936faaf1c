"""Rule tests for the Chameleon engine: deck, config, clues, votes, every end and tie rule, privacy."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from games import decks
from games.base import Action, Choice, ConfigError, IllegalAction, Result, Text, normalize, replay
from games.chameleon import GAME, ChameleonConfig, ChameleonState, Outcome, Phase
from games.play import play_random, seat_names

NUMBERS = (
    "one", "two", "three", "four", "five", "six", "seven", "eight",
    "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
)
# Clue words that cannot clash with the number words above.
CLUES = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")
TEST_DECK = tuple((f"Set {k}", NUMBERS) for k in range(30))


def cfg(variant: str = "classic", **options: Any) -> ChameleonConfig:
    options.setdefault("deck", TEST_DECK)
    return GAME.make_config(variant, **options)


def start(n: int = 4, seed: int = 0, **options: Any) -> ChameleonState:
    state, _ = GAME.new(cfg(**options), n, seed)
    return state


def result(s: ChameleonState) -> Result:
    r = GAME.result(s)
    assert r is not None, "the game is over"
    return r


def choice(s: ChameleonState, seat: int) -> Choice:
    spec = GAME.legal(s, seat)
    assert isinstance(spec, Choice), spec
    return spec


def give_clues(s: ChameleonState, clues: tuple[str, ...] = CLUES) -> ChameleonState:
    for i, seat in enumerate(s.order):
        s, _ = GAME.apply(s, seat, Action.say("clue", clues[i]))
    return s


def vote(s: ChameleonState, ballots: dict[int, int | None]) -> ChameleonState:
    for voter, target in ballots.items():
        s, _ = GAME.apply(s, voter, Action.choose("vote", "abstain" if target is None else str(target)))
    return s


def others(s: ChameleonState) -> list[int]:
    return [i for i in range(s.seats) if i != s.chameleon]


def everyone_votes_for(s: ChameleonState, target: int) -> dict[int, int | None]:
    """Everyone votes for ``target``; ``target`` itself votes for the next seat."""
    return {v: (target if v != target else (target + 1) % s.seats) for v in range(s.seats)}


# --------------------------------------------------------------------------- deck


def test_bundled_deck_has_enough_distinct_cards() -> None:
    cards = decks.cards()
    assert len(cards) >= 80
    categories = [normalize(c) for c, _ in cards]
    assert len(set(categories)) == len(categories)
    for category, words in cards:
        assert len(words) == 16, category
        assert all(w.strip() and normalize(w) for w in words), category
        assert len({normalize(w) for w in words}) == 16, category
        # The sneak variant plays the first 12: they must be distinct under the engine's looser key too.
        assert len({"".join(normalize(w).split()) for w in words[:12]}) == 12, category


def test_bundled_deck_is_accepted_by_make_config_as_custom_deck() -> None:
    c = GAME.make_config("classic", deck=decks.cards())
    assert c.deck == decks.cards()


# --------------------------------------------------------------------------- config


def test_variant_defaults() -> None:
    classic = GAME.make_config()
    assert classic.variant == "classic" and classic.card_size == 16 and classic.deck is None
    assert classic.mode == "single" and classic.tie_rule == "runoff" and classic.target_points == 5
    sneak = GAME.make_config("sneak")
    assert sneak.card_size == 12
    assert GAME.make_config("sneak", card_size=16).card_size == 16


@pytest.mark.parametrize(
    "variant, options, fragment",
    [
        ("nope", {}, "unknown variant"),
        ("classic", {"mode": "tournament"}, "mode"),
        ("classic", {"tie_rule": "coin"}, "tie_rule"),
        ("classic", {"card_size": 17}, "card_size"),
        ("classic", {"card_size": 3}, "card_size"),
        ("classic", {"target_points": 0}, "target_points"),
        ("classic", {"max_rounds": 0}, "max_rounds"),
        ("classic", {"discussion": "yes"}, "discussion"),
        ("classic", {"colour": "blue"}, "unknown option"),
        ("classic", {"deck": ()}, "deck"),
        ("classic", {"deck": (("Short", ("a", "b")),)}, "has 2 words"),
        ("classic", {"deck": (("Dup", NUMBERS[:15] + ("One",)),)}, "repeats a word"),
        ("classic", {"deck": (("Same", NUMBERS), ("same", NUMBERS))}, "repeats card"),
        ("classic", {"deck": (("Empty", NUMBERS[:15] + (" ",)),)}, "empty word"),
        ("classic", {"mode": "match", "max_rounds": 20, "deck": TEST_DECK[:5]}, "needs at least 20 cards"),
    ],
)
def test_bad_configs_are_refused(variant: str, options: dict, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        GAME.make_config(variant, **options)


def test_config_round_trips_through_json() -> None:
    c = cfg("sneak", mode="match", tie_rule="chameleon_escapes", discussion=True, max_rounds=10)
    raw = json.loads(json.dumps(dataclasses.asdict(c)))
    assert GAME.config_from_dict(raw) == c
    assert GAME.config_from_dict({"variant": "sneak"}).card_size == 12
    with pytest.raises(ConfigError, match="unknown option"):
        GAME.config_from_dict({"variant": "classic", "colour": "red"})


def test_custom_deck_text_and_play() -> None:
    text = "# my cards\nPets: " + ", ".join(NUMBERS) + "\n"
    c = GAME.make_config("classic", deck=text)
    assert c.deck == (("Pets", NUMBERS),)
    s, events = GAME.new(c, 3, 7)
    assert s.category == "Pets" and s.card == NUMBERS
    assert events[0].data["card"] == list(NUMBERS)
    with pytest.raises(ConfigError, match="custom deck"):
        GAME.make_config("classic", deck="Pets: one, two")


def test_sneak_plays_the_first_twelve_words() -> None:
    s = start(5, 3, variant="sneak")
    assert s.card == NUMBERS[:12]
    assert s.secret in NUMBERS[:12]
    bundled, _ = GAME.new(GAME.make_config("sneak"), 5, 3)
    full = dict(decks.cards())[bundled.category]
    assert bundled.card == full[:12]


def test_seat_count_is_checked() -> None:
    assert GAME.seat_range(cfg()) == (3, 10)
    for n in (2, 11):
        with pytest.raises(ConfigError):
            GAME.new(cfg(), n, 0)


# --------------------------------------------------------------------------- deal and privacy


def test_deal_is_public_card_and_private_roles() -> None:
    s, events = GAME.new(cfg(), 5, 11)
    start_event = events[0]
    assert start_event.kind == "round_start" and start_event.audience.is_public
    assert start_event.data["card"] == list(NUMBERS)
    roles = [e for e in events if e.kind == "role"]
    assert len(roles) == 5
    for e in roles:
        # Each role event goes to exactly one seat, so no audience hints at the chameleon.
        assert e.audience.seats is not None
        (seat,) = e.audience.seats
        if seat == s.chameleon:
            assert e.data == {"round": 1, "role": "chameleon", "secret": None}
        else:
            assert e.data["secret"] == s.secret and e.data["role"] == "player"
    assert s.order[0] == start_event.data["first"]
    assert sorted(s.order) == list(range(5))


def test_observations_hide_the_secret_from_the_chameleon_and_the_chameleon_from_others() -> None:
    s = start(5, 2)
    cham = s.chameleon
    v = GAME.observe(s, cham).view
    assert v["is_chameleon"] and v["role"] == "chameleon" and v["secret"] is None and v["chameleon"] == cham
    assert all(e.data.get("secret") is None for e in GAME.observe(s, cham).events)
    for seat in others(s):
        obs = GAME.observe(s, seat)
        assert obs.view["secret"] == s.secret
        assert obs.view["is_chameleon"] is False and obs.view["chameleon"] is None
        for e in obs.events:
            assert e.audience.is_public or e.audience.seats == frozenset({seat})
            assert e.data.get("role") != "chameleon"
    # Clue prompts are the same for the chameleon and everyone else.
    s2 = s
    for seat in s.order:
        spec = GAME.legal(s2, seat)
        assert spec is not None
        assert spec == Text("clue", spec.prompt, ("Clue",), max_words=1, max_chars=30)
        s2, _ = GAME.apply(s2, seat, Action.say("clue", CLUES[seat]))


def test_chameleon_is_revealed_to_everyone_only_after_the_vote() -> None:
    s = give_clues(start(4, 5))
    for seat in others(s):
        assert GAME.observe(s, seat).view["chameleon"] is None
    s = vote(s, everyone_votes_for(s, s.chameleon))
    assert s.phase is Phase.GUESS
    for seat in range(4):
        assert GAME.observe(s, seat).view["chameleon"] == s.chameleon
        assert GAME.observe(s, seat).view["accused"] == s.chameleon
    # The secret is still hidden from the chameleon while it guesses.
    assert GAME.observe(s, s.chameleon).view["secret"] is None
    assert all(s.secret not in json.dumps(e.data) for e in s.log if e.audience.is_public and e.kind != "round_start")


def test_secrets_listed_until_the_end() -> None:
    s = start(4, 1)
    (secret,) = GAME.secrets(s)
    assert secret.value == s.secret and secret.known_by == frozenset(others(s))
    s = vote(give_clues(s), everyone_votes_for(s, others(s)[0]))
    assert s.phase is Phase.OVER and GAME.secrets(s) == ()


# --------------------------------------------------------------------------- clues


def test_clue_rules() -> None:
    s = start(4, 9)
    speaker, nxt = s.order[0], s.order[1]
    with pytest.raises(IllegalAction, match="not your turn"):
        GAME.apply(s, nxt, Action.say("clue", "alpha"))
    with pytest.raises(IllegalAction):
        GAME.apply(s, speaker, Action.choose("vote", "1"))
    with pytest.raises(IllegalAction, match="at most 1 word"):
        GAME.apply(s, speaker, Action.say("clue", "two words"))
    with pytest.raises(IllegalAction, match="empty"):
        GAME.apply(s, speaker, Action.say("clue", "  "))
    s, events = GAME.apply(s, speaker, Action.say("clue", "Alpha"))
    assert events[0].kind == "clue" and events[0].audience.is_public and events[0].data["clue"] == "Alpha"
    with pytest.raises(IllegalAction, match="already given"):
        GAME.apply(s, nxt, Action.say("clue", "ALPHA"))


def test_a_seat_that_knows_the_secret_cannot_say_it_or_contain_it() -> None:
    deck = (("Fruits", ("Apple", "Banana", "Cherry", "Grape", "Lemon", "Lime", "Mango", "Melon",
                        "Olive", "Peach", "Pear", "Plum", "Kiwi", "Fig", "Date", "Ice cream")),)
    c = GAME.make_config("classic", deck=deck)
    for seed in range(200):
        s, _ = GAME.new(c, 3, seed)
        if s.order[0] != s.chameleon and s.secret == "Ice cream":
            break
    else:
        pytest.fail("no seed deals 'Ice cream' to a first speaker who knows it")
    seat = s.order[0]
    for bad in ("ice-cream", "IceCream", "icecreams"):
        with pytest.raises(IllegalAction, match="secret"):
            GAME.apply(s, seat, Action.say("clue", bad))
    GAME.apply(s, seat, Action.say("clue", "dessert"))
    # Containing it inside a longer word ("Apples", "Pineapple") is refused for longer secrets.
    for seed in range(200):
        s, _ = GAME.new(c, 3, seed)
        if s.order[0] != s.chameleon and s.secret == "Apple":
            break
    for bad in ("apples", "Pineapple", "APPLE"):
        with pytest.raises(IllegalAction):
            GAME.apply(s, s.order[0], Action.say("clue", bad))


def test_the_chameleon_may_say_the_secret_unknowingly() -> None:
    for seed in range(100):
        s = start(4, seed)
        if s.order[1] == s.chameleon:
            break
    else:
        pytest.fail("no seed where the chameleon speaks second")
    s, _ = GAME.apply(s, s.order[0], Action.say("clue", "alpha"))
    # The chameleon may not repeat a clue already given...
    with pytest.raises(IllegalAction, match="already given"):
        GAME.apply(s, s.chameleon, Action.say("clue", "Alpha"))
    # ...but saying the secret is accepted: refusing it would reveal it.
    s2, events = GAME.apply(s, s.chameleon, Action.say("clue", s.secret))
    assert events[0].data["clue"] == s.secret
    assert s2.clues[-1] == (s.chameleon, s.secret)


def test_illegal_actions_leave_state_unchanged() -> None:
    s = start(4, 4)
    before = s
    for seat, action in [
        (s.order[1], Action.say("clue", "alpha")),
        (s.order[0], Action.say("clue", "a b")),
        (s.order[0], Action.choose("guess", "one")),
        (9, Action.say("clue", "alpha")),
    ]:
        with pytest.raises(IllegalAction):
            GAME.apply(s, seat, action)
    assert s == before and s.log == before.log


# --------------------------------------------------------------------------- votes


def test_votes_are_secret_until_the_last_one() -> None:
    s = give_clues(start(4, 6))
    spec = choice(s, 0)
    assert "0" not in spec.ids() and sorted(spec.ids()) == ["1", "2", "3"]
    with pytest.raises(IllegalAction):
        GAME.apply(s, 0, Action.choose("vote", "0"))
    s, events = GAME.apply(s, 0, Action.choose("vote", "2"))
    private, public = events
    assert private.audience.seats == frozenset({0}) and private.data["target"] == 2
    assert public.audience.is_public and "target" not in public.data
    with pytest.raises(IllegalAction, match="already voted"):
        GAME.apply(s, 0, Action.choose("vote", "1"))
    assert GAME.observe(s, 0).view["ballot"]["my_vote"] == 2
    assert GAME.observe(s, 1).view["ballot"] == {"ballot": "first", "candidates": [0, 1, 2, 3], "voted": [0], "my_vote": None}
    assert GAME.to_act(s) == frozenset({1, 2, 3})


def test_vote_options_are_shuffled_per_voter_but_stable() -> None:
    s = give_clues(start(8, 6))
    orders = {tuple(choice(s, seat).ids()) for seat in range(8)}
    assert len({tuple(sorted(o)) for o in orders}) == 8  # each voter misses only itself
    assert any(list(o) != sorted(o, key=int) for o in orders)
    assert GAME.legal(s, 3) == GAME.legal(s, 3)


def _single(n: int = 4, seed: int = 0, **options: object) -> ChameleonState:
    return give_clues(start(n, seed, **options))


def test_end_accused_innocent_chameleon_escapes() -> None:
    s = _single()
    innocent = others(s)[0]
    s = vote(s, everyone_votes_for(s, innocent))
    assert s.phase is Phase.OVER
    r = result(s)
    assert r.winners == frozenset({s.chameleon})
    assert r.scores[s.chameleon] == 2 and sum(r.scores.values()) == 2
    (rnd,) = r.details["rounds"]
    assert rnd["outcome"] == "escaped" and rnd["accused"] == innocent and not rnd["caught"]


def test_end_caught_then_guesses_right() -> None:
    s = _single(seed=1)
    s = vote(s, everyone_votes_for(s, s.chameleon))
    assert s.phase is Phase.GUESS and GAME.to_act(s) == frozenset({s.chameleon})
    spec = choice(s, s.chameleon)
    assert spec.kind == "guess" and spec.ids() == NUMBERS
    assert GAME.timeout_action(s, s.chameleon) is None
    s, events = GAME.apply(s, s.chameleon, Action.choose("guess", s.secret))
    assert events[0].data["correct"] is True
    r = result(s)
    assert r.winners == frozenset({s.chameleon})
    assert r.scores[s.chameleon] == 1 and sum(r.scores.values()) == 1
    assert r.details["rounds"][0]["outcome"] == "guessed" and r.details["rounds"][0]["guessed"] is True


def test_end_caught_and_wrong() -> None:
    s = _single(seed=2)
    s = vote(s, everyone_votes_for(s, s.chameleon))
    wrong = next(w for w in s.card if w != s.secret)
    s, _ = GAME.apply(s, s.chameleon, Action.choose("guess", wrong))
    r = result(s)
    assert r.winners == frozenset(others(s))
    assert r.scores[s.chameleon] == 0 and all(r.scores[o] == 2 for o in others(s))
    assert r.details["rounds"][0]["outcome"] == "caught" and r.details["rounds"][0]["guess"] == wrong
    with pytest.raises(IllegalAction, match="over"):
        GAME.apply(s, 0, Action.say("clue", "alpha"))


def _tie_votes(s: ChameleonState, a: int, b: int) -> dict[int, int | None]:
    """Two votes each for a and b (4 seats): a and b vote for each other, the rest split."""
    rest = [x for x in range(s.seats) if x not in (a, b)]
    return {a: b, b: a, rest[0]: a, rest[1]: b}


def test_tie_runoff_then_chameleon_caught() -> None:
    s = _single(seed=3)
    a, b = s.chameleon, others(s)[0]
    s = vote(s, _tie_votes(s, a, b))
    assert s.phase is Phase.RUNOFF
    assert set(s.ballots[-1].candidates) == {a, b}
    result_event = [e for e in s.log if e.kind == "vote_result"][-1]
    assert result_event.data["runoff"] and sorted(result_event.data["tied"]) == sorted([a, b])
    # In the run-off a tied seat may only vote for the other tied seat.
    assert choice(s, a).ids() == (str(b),)
    with pytest.raises(IllegalAction):
        GAME.apply(s, 0 if 0 not in (a, b) else 3, Action.choose("vote", str(next(x for x in range(4) if x not in (a, b)))))
    s = vote(s, {v: (a if v != a else b) for v in range(4)})
    assert s.phase is Phase.GUESS and s.accused == a


def test_tie_runoff_tied_again_chameleon_escapes() -> None:
    s = _single(seed=4)
    a, b = s.chameleon, others(s)[0]
    s = vote(s, _tie_votes(s, a, b))
    s = vote(s, _tie_votes(s, a, b))
    assert s.phase is Phase.OVER
    r = result(s)
    assert r.winners == frozenset({s.chameleon})
    rnd = r.details["rounds"][0]
    assert rnd["accused"] is None and [v["ballot"] for v in rnd["votes"]] == ["first", "runoff"]
    assert r.details["metrics"]["runoffs"] == 1


def test_tie_rule_chameleon_escapes_skips_the_runoff() -> None:
    s = _single(seed=4, tie_rule="chameleon_escapes")
    a, b = s.chameleon, others(s)[0]
    s = vote(s, _tie_votes(s, a, b))
    assert s.phase is Phase.OVER
    assert result(s).winners == frozenset({s.chameleon})
    assert len(s.history[0].ballots) == 1


def test_everyone_abstains_nobody_accused() -> None:
    s = _single(seed=5)
    for seat in range(4):
        assert GAME.timeout_action(s, seat) == Action.choose("vote", "abstain")
    s = vote(s, {v: None for v in range(4)})
    assert s.phase is Phase.OVER and s.history[0].accused is None
    assert s.history[0].outcome is Outcome.ESCAPED


def test_abstentions_count_for_nobody() -> None:
    s = _single(n=5, seed=6)
    target = s.chameleon
    ballots: dict[int, int | None] = {v: None for v in range(5)}
    ballots[others(s)[0]] = target
    s = vote(s, ballots)
    assert s.phase is Phase.GUESS and s.accused == target


# --------------------------------------------------------------------------- discussion


def test_discussion_waits_for_everyone_ready() -> None:
    s = give_clues(start(4, 7, discussion=True))
    assert s.phase is Phase.DISCUSSION and GAME.to_act(s) == frozenset(range(4))
    assert choice(s, 2).ids() == ("ready",)
    assert GAME.timeout_action(s, 2) == Action.choose("ready", "ready")
    s, _ = GAME.apply(s, 2, Action.choose("ready", "ready"))
    with pytest.raises(IllegalAction, match="already"):
        GAME.apply(s, 2, Action.choose("ready", "ready"))
    for seat in (0, 1, 3):
        timeout = GAME.timeout_action(s, seat)
        assert timeout is not None
        s, _ = GAME.apply(s, seat, timeout)
    assert s.phase is Phase.VOTE
    assert GAME.timeout_action(give_clues(start(4, 7)), 0) is not None
    assert GAME.timeout_action(start(4, 7), start(4, 7).order[0]) is None  # a clue has no neutral value


# --------------------------------------------------------------------------- match


def _play_round(s: ChameleonState, outcome: Outcome) -> ChameleonState:
    s = give_clues(s)
    if outcome is Outcome.ESCAPED:
        return vote(s, everyone_votes_for(s, others(s)[0]))
    s = vote(s, everyone_votes_for(s, s.chameleon))
    guess = s.secret if outcome is Outcome.GUESSED else next(w for w in s.card if w != s.secret)
    s, _ = GAME.apply(s, s.chameleon, Action.choose("guess", guess))
    return s


def test_match_ends_with_a_single_leader_at_target() -> None:
    s = start(4, 8, mode="match", target_points=4)
    rounds = 0
    while s.phase is not Phase.OVER:
        s = _play_round(s, Outcome.CAUGHT)  # every round: all non-chameleons +2
        rounds += 1
        assert rounds < 20
    r = result(s)
    top = max(s.scores)
    assert top >= 4 and list(s.scores).count(top) == 1
    assert r.winners == frozenset({s.scores.index(top)})
    # Earlier rounds had no single leader at the target.
    running = [0] * 4
    for rec in s.history[:-1]:
        running = [a + b for a, b in zip(running, rec.points, strict=False)]
        best = max(running)
        assert best < 4 or running.count(best) > 1
    cats = [rec.category for rec in s.history]
    assert len(set(cats)) == len(cats)  # no card twice
    assert r.details["rounds_played"] == len(s.history) == s.round
    assert r.details["chameleons"] == [rec.chameleon for rec in s.history]


def test_match_escape_points_and_scores_in_view() -> None:
    s = start(4, 9, mode="match", target_points=3)
    cham = s.chameleon
    s = _play_round(s, Outcome.ESCAPED)
    assert s.phase is Phase.CLUES and s.round == 2
    assert s.scores[cham] == 2 and sum(s.scores) == 2
    view = GAME.observe(s, 0).view
    assert view["scores"] == list(s.scores) and view["round"] == 2
    assert view["previous_rounds"][0]["chameleon"] == cham and view["clues"] == []
    cham2 = s.chameleon
    s = _play_round(s, Outcome.GUESSED)
    assert s.scores[cham2] == (3 if cham2 == cham else 1)


def test_match_stops_at_max_rounds_with_shared_winners() -> None:
    s = start(4, 10, mode="match", target_points=50, max_rounds=2)
    s = _play_round(s, Outcome.ESCAPED)
    s = _play_round(s, Outcome.ESCAPED)
    assert s.phase is Phase.OVER and s.round == 2
    r = result(s)
    top = max(s.scores)
    assert r.winners == frozenset(i for i, v in enumerate(s.scores) if v == top)
    assert "2 round" in r.summary


def test_single_mode_reports_scores_too() -> None:
    s = _play_round(start(5, 12), Outcome.CAUGHT)
    assert result(s).scores == {i: (0.0 if i == s.history[0].chameleon else 2.0) for i in range(5)}


# --------------------------------------------------------------------------- results, text, random play


def test_result_details_carry_every_clue_for_evaluation() -> None:
    s = _play_round(start(4, 13), Outcome.CAUGHT)
    d = result(s).details
    inst = d["clue_instances"]
    assert len(inst) == 4
    for item, (seat, clue) in zip(inst, s.history[0].clues, strict=False):
        assert item["seat"] == seat and item["clue"] == clue
        assert item["secret"] == s.history[0].secret and item["card"] == list(NUMBERS)
        assert item["is_chameleon"] == (seat == s.history[0].chameleon)
    json.dumps(result(s).to_json())
    assert {"category", "card", "secret", "chameleon", "clues", "votes", "caught", "guessed", "points"} <= set(d["rounds"][0])


def test_every_event_has_a_sentence() -> None:
    seen: set[str] = set()
    for seed in range(40):
        c = cfg(discussion=seed % 2 == 0, mode="match" if seed % 3 == 0 else "single", max_rounds=5)
        pt = play_random(GAME, c, 3 + seed % 4, seed)
        for e in pt.events:
            sentence = GAME.text(e, seat_names(pt.state.seats))
            assert not sentence.startswith(f"{e.kind}:"), e
            seen.add(e.kind)
    assert seen >= {"round_start", "role", "clue", "discussion_start", "ready", "vote_start",
                    "vote_cast", "voted", "vote_result", "reveal", "round_end", "game_over", "guess"}
    assert "run-off" in GAME.rules(GAME.make_config()) and "12 words" in GAME.rules(GAME.make_config("sneak"))


@pytest.mark.parametrize("variant", GAME.variants)
@pytest.mark.parametrize("mode", ["single", "match"])
def test_random_play_ends_and_replays(variant: str, mode: str) -> None:
    for n in range(3, 11):
        for seed in range(4):
            c = GAME.make_config(variant, mode=mode, discussion=seed % 2 == 1, tie_rule=("runoff", "chameleon_escapes")[seed % 2])
            pt = play_random(GAME, c, n, seed)
            assert pt.result is not None and GAME.to_act(pt.state) == frozenset()
            state, log = replay(GAME, c, n, seed, pt.actions)
            assert state == pt.state and tuple(log) == pt.events == state.log


# --------------------------------------------------------------------------- non-interference
#
# The card is public, so "the secret word never appears" cannot be checked by
# word matching here. What must hold instead: a seat's observation is the same
# whichever way the hidden fact is set. Two deals that differ only in the
# hidden fact are played with the same actions and compared seat by seat.

NONSENSE = tuple(f"zq{i}x" for i in range(40))


def _rewrite_roles(s: ChameleonState, chameleon: int, secret: str) -> ChameleonState:
    log = []
    for e in s.log:
        if e.kind == "role":
            assert e.audience.seats is not None
            (seat,) = e.audience.seats
            data = {"round": 1, "role": "chameleon", "secret": None} if seat == chameleon else {
                "round": 1, "role": "player", "secret": secret}
            e = dataclasses.replace(e, data=data)
        log.append(e)
    return dataclasses.replace(s, chameleon=chameleon, secret=secret, log=tuple(log))


def _twins_agree(a: ChameleonState, b: ChameleonState, seats: list[int], actions, until: set[Phase]) -> int:
    compared = 0
    for seat, action in actions:
        if a.phase in until or b.phase in until:
            break
        for viewer in seats:
            assert GAME.observe(a, viewer).to_json() == GAME.observe(b, viewer).to_json()
            assert GAME.legal(a, viewer) == GAME.legal(b, viewer)
            compared += 1
        assert GAME.to_act(a) == GAME.to_act(b)
        a, ev_a = GAME.apply(a, seat, action)
        b, ev_b = GAME.apply(b, seat, action)
        if a.phase not in until:
            assert [e.to_json() for e in ev_a if e.audience.is_public] == [e.to_json() for e in ev_b if e.audience.is_public]
    return compared


@pytest.mark.parametrize("seed", range(6))
def test_the_chameleon_cannot_tell_which_word_is_the_secret(seed: int) -> None:
    c = cfg(discussion=seed % 2 == 0)
    n = 3 + seed % 4
    s, _ = GAME.new(c, n, seed)
    other = next(w for w in s.card if w != s.secret)
    twin = _rewrite_roles(s, s.chameleon, other)
    actions = play_random(GAME, c, n, seed, vocabulary=NONSENSE).actions
    assert _twins_agree(s, twin, [s.chameleon], actions, {Phase.OVER}) > 0


@pytest.mark.parametrize("seed", range(6))
def test_other_seats_cannot_tell_who_the_chameleon_is_before_the_reveal(seed: int) -> None:
    c = cfg(discussion=seed % 2 == 1, tie_rule=("runoff", "chameleon_escapes")[seed % 2])
    n = 4 + seed % 4
    s, _ = GAME.new(c, n, seed)
    swap = next(x for x in range(n) if x != s.chameleon)
    twin = _rewrite_roles(s, swap, s.secret)
    viewers = [x for x in range(n) if x not in (s.chameleon, swap)]
    actions = play_random(GAME, c, n, seed, vocabulary=NONSENSE).actions
    assert _twins_agree(s, twin, viewers, actions, {Phase.GUESS, Phase.OVER}) > 0
