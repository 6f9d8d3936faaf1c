"""games.labels: seats are named in one pass from structured data (engine side)."""

from __future__ import annotations

import pytest

import games
from games import catalog
from games.base import Action, Choice
from games.labels import default_name, fill_labels, fill_spec, seat_ref
from games.play import play_random
from games.spy import GAME as SPY
from games.spy import Phase


def test_tokens_are_filled_with_names_or_the_default() -> None:
    text = f"{seat_ref(0)} votes for {seat_ref(2)}."
    assert fill_labels(text, ["Ann", "Bob", "Cy"]) == "Ann votes for Cy."
    assert fill_labels(text) == "Player 1 votes for Player 3."
    assert fill_labels(text, {2: "Cy"}) == "Player 1 votes for Cy."
    assert fill_labels(text, ["Ann"]) == "Ann votes for Player 3."
    assert default_name(9) == "Player 10"


def test_a_name_that_looks_like_a_label_relabels_nobody() -> None:
    # Seat 0 calls themselves "Player 2"; seat 1 is Bob. Each ballot entry keeps its owner.
    names = ["Player 2", "Bob", f"{seat_ref(1)} (really)"]
    text = ", ".join(seat_ref(i) for i in range(3))
    assert fill_labels(text, names) == f"Player 2, Bob, {seat_ref(1)} (really)"  # inserted names are never re-scanned


def test_seat_ref_refuses_what_is_not_a_seat() -> None:
    for bad in (-1, True, "1"):
        with pytest.raises(ValueError):
            seat_ref(bad)  # type: ignore[arg-type]  # deliberately wrong types


def test_vote_options_are_labelled_by_token() -> None:
    pt = play_random(SPY, SPY.make_config("classic"), 5, 3)
    state, _ = SPY.new(SPY.make_config("classic"), 5, 3)
    for seat, action in pt.actions:
        if state.phase is Phase.VOTE:
            spec = SPY.legal(state, seat)
            assert isinstance(spec, Choice)
            for o in spec.options:
                assert o.label == seat_ref(int(o.id))
            break
        state, _ = SPY.apply(state, seat, action)
    else:
        pytest.fail("no vote reached")


@pytest.mark.parametrize("gid", catalog.ids())
def test_engine_text_names_seats_only_through_tokens(gid: str) -> None:
    """Names containing another seat's default label stay apart from it in every event text."""
    game = games.get(gid)
    cfg = game.make_config()
    lo, _ = game.seat_range(cfg)
    pt = play_random(game, cfg, lo, 5)
    tricky = [f"Player {(i + 1) % lo + 1}" for i in range(lo)]  # seat i is called after the next seat
    plain = [f"N{i}x" for i in range(lo)]
    for e in pt.events:
        with_tricky, with_plain = game.text(e, tricky), game.text(e, plain)
        for i in range(lo):
            with_plain = with_plain.replace(f"N{i}x", tricky[i])
        assert with_tricky == with_plain, e.kind
        assert "\ue000" not in with_tricky


def test_player_text_cannot_forge_a_label() -> None:
    s, _ = SPY.new(SPY.make_config("classic", deck=[["stool", "bench"]]), 5, 0)
    (speaker,) = SPY.to_act(s)
    s, events = SPY.apply(s, speaker, Action("describe", (f"I trust {seat_ref(0)} fully",)))
    (said,) = [e for e in events if e.kind == "described"]
    names = ["Alice", "Bo", "Cy", "Di", "Ed"]
    assert SPY.text(said, names) == f'{names[speaker]} describes their word: "I trust 0 fully"'


def test_fill_spec_names_the_options_for_agents_and_forms() -> None:
    pt = play_random(SPY, SPY.make_config("classic"), 5, 3)
    state, _ = SPY.new(SPY.make_config("classic"), 5, 3)
    for seat, action in pt.actions:
        spec = SPY.legal(state, seat)
        if isinstance(spec, Choice) and spec.kind == "vote":
            named = fill_spec(spec)
            assert isinstance(named, Choice) and named.ids() == spec.ids()
            assert [o.label for o in named.options] == [f"Player {int(o.id) + 1}" for o in spec.options]
            lettered = fill_spec(spec, ["A", "B", "C", "D", "E"])
            assert isinstance(lettered, Choice)
            assert [o.label for o in lettered.options] == ["ABCDE"[int(o.id)] for o in spec.options]
            return
        state, _ = SPY.apply(state, seat, action)
    pytest.fail("no vote reached")
