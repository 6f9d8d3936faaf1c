"""The shared suite, run over every registered game and variant.

Random play always ends; the same seed gives the same game; replaying the recorded
actions rebuilds the live state; no public event and no seat's observation reveals
a secret that seat may not know; an illegal action raises IllegalAction and leaves
the state as it was.
"""

from __future__ import annotations

import json
import random
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import games
from games.base import Action, Choice, Event, Game, IllegalAction, Observation, Secret, Text, contains_word, normalize, replay
from games.catalog import descriptors
from games.play import play_random, random_action
from games.text import tokens

# Nonsense vocabulary that can never collide with a real secret word.
from tests.vocabulary import NONSENSE  # one made-up vocabulary for the suite


def variants() -> list[tuple[str, str]]:
    """Every registered game's variants (a newly registered game joins the suite by itself)."""
    return [(d.id, str(v)) for d in sorted(descriptors(), key=lambda d: d.id) for v in d.variants]


def seat_counts(game: Game, variant: str) -> list[int]:
    lo, hi = game.seat_range(game.make_config(variant))
    return sorted({lo, min(hi, lo + 1), min(hi, 6), hi})


CASES = [(gid, v, n) for gid, v in variants() for n in seat_counts(games.get(gid), v)]


def test_registry_has_all_games() -> None:
    assert descriptors(), "the catalog registers no game"
    assert set(games.registry()) == {d.id for d in descriptors()}
    assert all(games.get(d.id) is d.engine for d in descriptors())
    assert games.get("decrypto").variants[:2] == ("benchmark", "teams")


@pytest.mark.parametrize(("gid", "variant", "seats"), CASES)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**62))
def test_random_play_ends_and_replays(gid: str, variant: str, seats: int, seed: int) -> None:
    game = games.get(gid)
    cfg = game.make_config(variant)
    pt = play_random(game, cfg, seats, seed, vocabulary=NONSENSE)
    assert pt.result is not None
    assert not game.to_act(pt.state)
    # Same seed, same game.
    again = play_random(game, cfg, seats, seed, vocabulary=NONSENSE)
    assert [e.to_json() for e in again.events] == [e.to_json() for e in pt.events]
    # Replaying the actions rebuilds the live state and the same events.
    state, events = replay(game, cfg, seats, seed, pt.actions)
    assert state == pt.state
    assert [e.to_json() for e in events] == [e.to_json() for e in pt.events]
    # Config and events survive a JSON round trip (they are logged as JSON).
    assert game.config_from_dict(json.loads(json.dumps(_asdict(cfg)))) == cfg
    json.dumps([e.to_json() for e in pt.events])
    assert pt.result.to_json() == json.loads(json.dumps(pt.result.to_json()))


def _asdict(cfg: object) -> dict:
    from games.base import config_to_dict

    return config_to_dict(cfg)


def _values(obj: object, among: tuple[str, ...] = ()) -> str:
    """The text a seat reads in a JSON-able object: its values, not its keys (a view key such as
    ``current_speaker`` says nothing about a secret "Speaker"). A list equal to the public
    candidates the secret hides among is left out: seeing the whole card is fine."""
    if isinstance(obj, dict):
        return " ; ".join(_values(v, among) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        if among and list(obj) == list(among):
            return ""
        return " ; ".join(_values(v, among) for v in obj)
    return "" if obj is None else str(obj)


def _leaks(obj: object, secret: Secret) -> bool:
    """``contains_word(_values(obj, secret.among), secret.value)``, read value by value: the " ; " between
    values is no word, so the joined text's words are each value's words in turn, and a value met at
    an earlier step (a description, a vote, every logged event) is not normalised again. Normalising
    every seat's whole observation at every step made a 12-seat game take a minute;
    ``test_the_leak_check_reads_values_as_contains_word_reads_the_text`` holds the two equal."""
    return _found(_tokens(obj, secret.among), secret.value)


def _found(hay: list[str], word: str) -> bool:
    """``contains_word``'s test on words already read."""
    needle = tokens(word)
    if not needle:
        return False
    n, i = len(needle), -1
    while True:  # from one place the needle's first word is at to the next (list.index: no loop in Python)
        try:
            i = hay.index(needle[0], i + 1)
        except ValueError:
            return False
        if hay[i : i + n] == needle:
            return True


@lru_cache(maxsize=1 << 16)
def _value_tokens(value: str) -> tuple[str, ...]:
    return tuple(tokens(value))


def _tokens(obj: object, among: tuple[str, ...] = ()) -> list[str]:
    """The words of ``_values(obj, among)``, each value's read once per run."""
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _tokens(v, among)]
    if isinstance(obj, (list, tuple)):
        if among and list(obj) == list(among):
            return []
        return [t for v in obj for t in _tokens(v, among)]
    return [] if obj is None else list(_value_tokens(str(obj)))


class _Reader:
    """``_tokens(obs.to_json(), among)`` for one game's observations, with each logged event's words read
    once: an observation carries every event its seat has seen, and they never change."""

    def __init__(self) -> None:
        # Keyed by the event's id, the event kept alive beside its words: the id is never reused.
        self._events: dict[tuple[int, tuple[str, ...]], tuple[Event, list[str]]] = {}

    def event(self, e: Event, among: tuple[str, ...]) -> list[str]:
        key = (id(e), among)
        if key not in self._events:
            self._events[key] = (e, _tokens(e.to_json(), among))
        return self._events[key][1]

    def observation(self, obs: Observation, among: tuple[str, ...]) -> list[str]:
        out: list[str] = []
        for key, value in obs.to_json().items():
            if key != "events" or (among and list(value) == list(among)):
                out += _tokens({key: value}, among)
            else:
                assert len(value) == len(obs.events)
                out += [t for e in obs.events for t in self.event(e, among)]
        return out


@pytest.mark.parametrize(("gid", "variant", "seats"), CASES)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**62))
@example(seed=2_280_795_886)  # three-seat classic Chameleon: the Reptiles card, the secret "Chameleon"
@example(seed=40_975)  # four-seat Who-is-Spy (spygame): the pair "tie, scarf", a tie and a run-off
def test_no_secret_reaches_a_seat_that_may_not_know_it(gid: str, variant: str, seats: int, seed: int) -> None:
    game = games.get(gid)
    cfg = game.make_config(variant)
    pt = play_random(game, cfg, seats, seed, vocabulary=NONSENSE)
    state, events = game.new(cfg, seats, seed)
    log = list(events)
    # The protocol's own names: the game's id and the words of the kinds of event it logs. A secret dealt
    # as one of them is read wherever the rules use the name, not the secret: the Reptiles card's
    # "Chameleon" (about 1 deal in 1,760) names the chameleon seat's role in its view, its deal event and
    # its prompts; Who-is-Spy's pair "tie, scarf" (about 1 deal in 330) meets the public "tie" event and
    # "no_elimination" for the reason "tie" whenever a vote ties. Such a deal is left out of this check
    # (no other bundled deck word is such a name); the bundled decks stay as they are, since stored
    # games replay from them.
    own = {normalize(gid)} | {w for e in pt.events for w in tokens(e.kind)}
    # Events never change once logged: each is read once per secret, not again at every later step
    # (that rescan made a 12-seat game take minutes), and a reader is asked only about the events
    # logged since it was last asked about the same secret (None: the public).
    leaked: dict[tuple[int, Secret], bool] = {}
    reader = _Reader()
    asked: dict[tuple[int | None, Secret], int] = {}

    def event_leaks(i: int, secret: Secret) -> bool:
        if (i, secret) not in leaked:
            # What an event says is its data; its kind is the protocol's own name for it (a vote's "tie"
            # is no leak of a secret word "tie"), its audience seat numbers.
            leaked[(i, secret)] = _leaks(log[i].data, secret)
        return leaked[(i, secret)]

    def new_events(reader: int | None, secret: Secret) -> list[tuple[int, Event]]:
        start = asked.get((reader, secret), 0)
        asked[(reader, secret)] = len(log)
        return [(i, log[i]) for i in range(start, len(log))
                if (log[i].audience.is_public if reader is None else log[i].audience.includes(reader))]

    for step, (seat, action) in enumerate([*pt.actions, (None, None)]):
        hidden = game.secrets(state)
        if game.result(state) is None:
            assert hidden, "a game in play should have something hidden"
        # Each seat's observation at this step, read once for every secret hidden among the same words.
        seen: dict[int, Observation] = {}
        read: dict[tuple[int, tuple[str, ...]], list[str]] = {}
        specs: dict[int, Choice | Text | None] = {}
        for secret in hidden:
            if normalize(secret.value) in own:
                continue
            for i, e in new_events(None, secret):
                assert not event_leaks(i, secret), (step, e, secret)
            for s in range(seats):
                if s in secret.known_by:
                    continue
                if s not in seen:
                    seen[s] = game.observe(state, s)
                if (s, secret.among) not in read:
                    read[(s, secret.among)] = reader.observation(seen[s], secret.among)
                assert not _found(read[(s, secret.among)], secret.value), (step, s, secret, seen[s].view)
                for i, e in new_events(s, secret):
                    assert not event_leaks(i, secret), (step, s, e, secret)
                if s not in specs:
                    specs[s] = game.legal(state, s)
                spec = specs[s]
                if spec is not None:
                    assert not _leaks(_spec_json(spec, secret), secret), (s, spec, secret)
        if seat is None:
            break
        assert action is not None
        state, evs = game.apply(state, seat, action)
        log.extend(evs)


@pytest.mark.parametrize(("gid", "variant"), variants())
def test_the_leak_check_reads_values_as_contains_word_reads_the_text(gid: str, variant: str) -> None:
    # A seat's observation at every step of a game (each seat in turn, every seat at the end), against
    # each secret of the game and against words and word pairs that are in it (pairs across two values
    # included): the same answer both ways.
    game = games.get(gid)
    cfg = game.make_config(variant)
    lo, _ = game.seat_range(cfg)
    pt = play_random(game, cfg, lo, 11, vocabulary=NONSENSE)
    state, _ = game.new(cfg, lo, 11)
    secrets: set[Secret] = set()
    r = random.Random(11)
    reader = _Reader()
    found = 0
    for step, (seat, action) in enumerate([*pt.actions, (None, None)]):
        secrets |= set(game.secrets(state))
        for s in range(lo) if seat is None else (step % lo,):
            seen = game.observe(state, s)
            obs = seen.to_json()
            words = _tokens(obs)
            probes = [*secrets]
            for _ in range(4):
                i = r.randrange(len(words))
                probes.append(Secret(" ".join(words[i : i + r.choice((1, 2))]), frozenset()))
            for probe in probes:
                exact = contains_word(_values(obs, probe.among), probe.value)
                assert _leaks(obs, probe) == exact, (probe, obs)
                assert reader.observation(seen, probe.among) == _tokens(obs, probe.among)
                found += exact
        if seat is None or action is None:
            break
        assert action is not None
        state, _ = game.apply(state, seat, action)
    assert found, "the probes taken from the observations were found"


def _spec_json(spec: Choice | Text, secret: Secret) -> dict:
    if isinstance(spec, Choice):
        options = [[o.id, o.label] for o in spec.options]
        if secret.among and {o.id for o in spec.options} <= set(secret.among):
            options = []  # choosing among the public card's words reveals nothing by itself
        return {"prompt": spec.prompt, "options": options}
    return {"prompt": spec.prompt, "fields": list(spec.fields)}


@pytest.mark.parametrize(("gid", "variant", "seats"), CASES)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**62), data=st.data())
def test_illegal_actions_raise_and_change_nothing(gid: str, variant: str, seats: int, seed: int, data: st.DataObject) -> None:
    game = games.get(gid)
    cfg = game.make_config(variant)
    pt = play_random(game, cfg, seats, seed, vocabulary=NONSENSE)
    cut = data.draw(st.integers(min_value=0, max_value=len(pt.actions)))
    state, _ = replay(game, cfg, seats, seed, pt.actions[:cut])
    before = state
    acting = game.to_act(state)
    idle = [s for s in range(seats) if s not in acting]
    r = random.Random(seed)
    attempts: list[tuple[int, Action]] = [
        (seats + 3, Action("vote", ("0",))),  # no such seat
        (0, Action("no-such-kind", ("x",))),  # malformed kind
    ]
    if idle:  # a seat whose turn it is not
        s = r.choice(idle)
        other = sorted(acting)[0] if acting else None
        spec = game.legal(state, other) if other is not None else None
        attempts.append((s, random_action(spec, r) if spec else Action("vote", ("0",))))
    for s in acting:
        spec = game.legal(state, s)
        assert spec is not None
        if isinstance(spec, Choice):
            attempts.append((s, Action(spec.kind, ("definitely-not-an-option",))))
            attempts.append((s, Action(spec.kind, ())))
        else:
            attempts.append((s, Action(spec.kind, ("",) * len(spec.fields))))
            attempts.append((s, Action(spec.kind, ("word",) * (len(spec.fields) + 1))))
            attempts.append((s, Action(spec.kind, ("w " * (spec.max_words + 1),) * len(spec.fields))))
    for s, a in attempts:
        with pytest.raises(IllegalAction) as info:
            game.apply(state, s, a)
        assert str(info.value).strip(), "an IllegalAction carries a readable sentence"
        assert state == before
    if game.result(state) is not None:  # after the end nothing is legal
        with pytest.raises(IllegalAction):
            game.apply(state, 0, Action("vote", ("1",)))


@pytest.mark.parametrize(("gid", "variant"), variants())
def test_timeout_actions_are_accepted(gid: str, variant: str) -> None:
    game = games.get(gid)
    cfg = game.make_config(variant)
    lo, _ = game.seat_range(cfg)
    pt = play_random(game, cfg, lo, 7, vocabulary=NONSENSE)
    state, _ = game.new(cfg, lo, 7)
    for seat, action in pt.actions:
        for s in game.to_act(state):
            t = game.timeout_action(state, s)
            if t is not None:
                game.apply(state, s, t)  # must not raise
        state, _ = game.apply(state, seat, action)


@pytest.mark.parametrize(("gid", "variant"), variants())
def test_rules_and_texts_are_readable(gid: str, variant: str) -> None:
    game = games.get(gid)
    cfg = game.make_config(variant)
    assert len(game.rules(cfg)) > 200
    lo, _ = game.seat_range(cfg)
    pt = play_random(game, cfg, lo, 3)
    names = [f"Name{i}" for i in range(lo)]
    for e in pt.events:
        text = game.text(e, names)
        assert text and "{" not in text and "Player " not in text, text
