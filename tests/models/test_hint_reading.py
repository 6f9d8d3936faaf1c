"""The reading of a person's hint against candidate words (models/agents/hints.py), with the real association model.

The hints are of the kinds people give and a single similarity misreads: a name with accents, a
historical name, a slang phrase, a word that names a thing's look ("stripes", which the
plain similarity read as soccer). They come from the development half of the writers' material
(``bench/data/people/w1.json``, ``w5.json``) or were written for these tests; none from the test half.
The same knowledge serves the Chameleon voters (``hints.clearing``) and the Who-is-Spy describer's late rounds.
"""

from __future__ import annotations

import numpy as np
import pytest

import games
from bot.settings import default_model_cache
from games.base import Action, Choice, Text
from games.text import reveals_secret
from models.agents.games.decrypto import slot_fit
from models.agents.games.spy import descriptions
from models.agents.games.spymasters import linked_guesses, view_of
from models.agents.hints import clearing, expressions, fold, hint_fit, joins, whole
from models.agents.reading import card_suspicion, pointing
from models.agents.wiring import VOCAB_CACHE
from models.association import AssociationEmbedder
from models.embeddings import VocabIndex
from models.worker.embedding_backend import embedder_for


@pytest.fixture(scope="module")
def index() -> VocabIndex:
    # The agents' whole vocabulary (the suite's warm-up stores its matrix): a hint is read against it as background.
    return VocabIndex(embedder_for("assoc"), cache=default_model_cache() / VOCAB_CACHE)


def best(fit: np.ndarray, candidates: list[str]) -> list[str]:
    return [candidates[int(i)] for i in np.argmax(fit, axis=1)]


def test_accents_are_folded() -> None:
    assert fold("Moët") == "Moet" and fold("Ponce de León") == "Ponce de Leon" and fold("plain") == "plain"


def test_names_slang_and_looks_point_at_their_word(index: VocabIndex) -> None:
    drinks = ["fountain", "pumpkin", "cigar", "champagne"]
    assert best(hint_fit(index, ["Moët", "Ponce de León"], drinks), drinks) == ["champagne", "fountain"]
    jobs = ["mechanic", "donut", "idea", "fridge"]
    assert best(hint_fit(index, ["grease monkey"], jobs), jobs) == ["mechanic"]
    animals = ["volcano", "tiger", "soccer", "sink"]
    assert best(hint_fit(index, ["stripes"], animals), animals) == ["tiger"]


def test_the_reading_is_the_same_every_time(index: VocabIndex) -> None:
    kws = ["fountain", "pumpkin", "cigar", "champagne"]
    a = hint_fit(index, ["Moët", "a coin in the water", "Havana"], kws)
    b = hint_fit(index, ["Havana", "Moët", "a coin in the water"], kws)
    assert np.array_equal(a, b[[1, 2, 0]])


def test_another_embedder_reads_the_whole_hint_only() -> None:
    minilm = VocabIndex(embedder_for("minilm"), cache=default_model_cache() / VOCAB_CACHE)
    kws = ["mechanic", "donut", "idea", "fridge"]
    assert np.array_equal(hint_fit(minilm, ["grease monkey"], kws), whole(minilm, ["grease monkey"], kws))


def test_the_spymasters_guesser_reads_stripes_as_the_tiger(index: VocabIndex) -> None:
    g = games.get("spymasters")
    red = ["tiger", "castle", "honey", "violin", "anchor", "rocket", "cotton", "lemon", "mirror"]
    blue = ["soccer", "volcano", "sink", "pepper", "glacier", "saddle", "ticket", "button"]
    bystanders = ["wagon", "needle", "candle", "forest", "ladder", "pillow", "basket"]
    deal = {"words": [*red, *blue, *bystanders, "shadow"], "key": ["red"] * 9 + ["blue"] * 8 + ["bystander"] * 7 + ["assassin"],
            "starting": "red", "spymasters": [0, 1]}
    s, _ = g.new(g.make_config(deal=deal), 4, 0)
    s, _ = g.apply(s, 0, Action.say("clue", "stripes"))
    s, _ = g.apply(s, 0, Action.choose("number", "1"))
    spec = g.legal(s, 2)
    assert isinstance(spec, Choice)
    scores = linked_guesses(index, view_of(g.observe(s, 2)), spec)
    assert max(scores, key=scores.__getitem__) == "tiger"


def test_a_hint_that_makes_a_fixed_expression_with_a_word_names_it(index: VocabIndex) -> None:
    assert isinstance(index.embedder, AssociationEmbedder)
    glosses = index.embedder.glosses  # the association model's WordNet
    assert glosses is not None
    assert joins(glosses, "Square", "root") and joins(glosses, "Cube", "root")  # hint, then the word
    assert joins(glosses, "Of youth", "fountain") and joins(glosses, "Soda", "fountain")  # the word, then the hint
    assert joins(glosses, "below the...", "belt") and joins(glosses, "Tin Pan", "alley")  # the hint's last words
    assert joins(glosses, "seat", "belt")  # "seat belt" and "seatbelt" alike
    assert not joins(glosses, "Square", "theater") and not joins(glosses, "Of youth", "champagne")
    words = ["root", "theater", "fountain", "champagne"]
    assert expressions(index, ["Cube", "Flute", "Of youth"], words).tolist() == [[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]


def test_the_decrypto_decoder_reads_the_other_half_of_a_phrase(index: VocabIndex) -> None:
    keywords = ["root", "theater", "fountain", "champagne"]  # a writer's game of the development half, hints of the same
    fit = slot_fit(index, ["Cube", "Flute", "Of youth"], {}, keywords)
    assert best(fit, keywords) == ["root", "champagne", "fountain"]
    assert best(hint_fit(index, ["Cube", "Flute", "Of youth"], keywords), keywords) == ["root", "champagne", "fountain"]


def test_a_chameleon_voter_clears_a_reference_wordnet_places_on_the_secret_alone(index: VocabIndex) -> None:
    # "Solomon" for wisdom (WordNet: "king of Israel noted for his wisdom"), "Vodka" for the screwdriver (the cocktail):
    # the embedding alone reads neither; the link to the secret clears the speaker.
    virtues = ["Wisdom", "Courage", "Honesty", "Patience", "Loyalty", "Compassion"]
    tools = ["Hammer", "Screwdriver", "Wrench", "Saw", "Drill", "Pliers"]
    for clue, card, secret in (("Solomon", virtues, "Wisdom"), ("Vodka", tools, "Screwdriver")):
        at = card.index(secret)
        read = card_suspicion(clearing(index, [clue], card, at), at)
        assert read < card_suspicion(pointing(index, [clue], card), at) and read < 0
    # A link the secret shares with other card words ("drink" among drinks) adds nothing.
    drinks = ["Water", "Tea", "Coffee", "Milk", "Wine", "Cola"]
    assert np.array_equal(clearing(index, ["drink"], drinks, 1), pointing(index, ["drink"], drinks))


def test_a_late_round_describer_looks_further_out_when_the_table_has_said_the_near_words(index: VocabIndex) -> None:
    # The table has used WordNet's words for orange juice, and its nearest words are the game's own words (lemonade,
    # cider): the describer must still have something legal to say, never nothing (a refused move).
    spec = Text("describe", "", ("Your description",), max_words=12, max_chars=240)
    said = ["fruit drink", "fruit juice", "squeezed", "freshly", "beverage", "tomato"]
    out = descriptions(index, "orange juice", spec, said, 12)
    assert out and not any(reveals_secret(t, "orange juice") or t in said for t in out)
