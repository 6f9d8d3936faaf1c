"""games.text: one normalisation and one secret check, and every known bypass in every game."""

from __future__ import annotations

import pytest

import games
from bench.clue_check import INNOCENT, VARIANTS
from games.base import Action, IllegalAction, Text, check_text
from games.chameleon import GAME as CHAMELEON
from games.chameleon import ChameleonState
from games.decrypto import GAME as DECRYPTO
from games.decrypto import DecryptoState
from games.spy import GAME as SPY
from games.spy import Phase as SpyPhase
from games.spy import SpyState
from games.text import clean, fold, has_number, is_variant, mentions_secret, reveals_secret, same_words, words

ZWSP, SHY = "\u200b", "\u00ad"

# Ways to write "stool" that a reader still reads as "stool".
DISGUISES = {
    "accents": "stóòl",
    "cyrillic": "st\u043e\u043el",  # Cyrillic о
    "greek": "st\u03bf\u03bfl",  # Greek ο
    "full-width": "ｓｔｏｏｌ",
    "zero-width space": f"sto{ZWSP}ol",
    "soft hyphen": f"sto{SHY}ol",
    "capitals": "STOOL",
    "plural": "stools",
    "plural, disguised": f"ＳＴ\u041e{ZWSP}OLS",
}

# Ways to write "strawberry" that a reader reads as "strawberry", read letters-only.
READABLE = {
    "apostrophe": "st'rawberry",
    "hyphen": "st-rawberry",
    "dot": "st.rawberry",
    "spaced letters": "s t r a w b e r r y",
    "split": "straw berry",
    "middle dot": "straw·berry",
    "digit": "strawberry2",
    "suffix": "strawberryes",
    "split plural": "straw berries",
}


# --------------------------------------------------------------------------- the functions


def test_fold_folds_what_a_reader_cannot_tell_apart() -> None:
    for how, text in DISGUISES.items():
        if how.startswith("plural"):
            continue
        assert fold(text) == "stool", how
    assert fold("Crème Brûlée") == "creme brulee"
    assert fold("Straße") == "strasse"  # case folding, not lower()
    assert fold("ﬁsh") == "fish"  # NFKC ligature


@pytest.mark.parametrize("how", sorted(DISGUISES))
def test_mentions_secret_sees_through_every_disguise(how: str) -> None:
    assert mentions_secret(f"a {DISGUISES[how]} to sit on", "stool"), how


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Locks", "lock"), ("bees", "Bee"), ("cities", "city"), ("boxes", "box"), ("leaves", "leaf"),
        ("baked", "bake"), ("baking", "bake"), ("baker", "bake"), ("stopped", "stop"), ("running", "run"),
        ("painter", "paint"), ("carried", "carry"), ("bee", "bees"), ("ice-cream", "ice cream"),
        ("icecream", "ice cream"), ("ice creams", "ice cream"), ("the dog's bowl", "dog"),
    ],
)
def test_inflected_forms_are_caught(text: str, secret: str) -> None:
    assert mentions_secret(text, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("danger", "anger"), ("beer", "bee"), ("hammer", "ham"), ("butter", "but"), ("letter", "let"),
        ("tiny", "tin"), ("good", "go"), ("scar", "car"), ("category", "cat"), ("bees", "be"),
        ("pants", "ant"), ("stooled pigeon", "stoo"),
    ],
)
def test_other_words_are_not_the_secret(text: str, secret: str) -> None:
    assert not mentions_secret(text, secret)


def test_compounds_only_when_asked() -> None:
    assert not mentions_secret("snowman", "snow")
    assert mentions_secret("snowman", "snow", compounds=True)
    assert not mentions_secret("tiny", "tin", compounds=True)  # short secrets stay whole words


@pytest.mark.parametrize(("clue", "secret"), [
    ("eyelash", "eye"), ("catwalk", "cat"), ("sunflower", "sun"), ("Eyelashes", "eye"), ("SUNFLOWERS", "sun"),
    ("tomcat", "cat"), ("seaweed", "sea"), ("eardrum", "ear"), ("boxcar", "car"), ("bedroom", "bed"), ("eggplant", "egg"),
])
def test_a_compound_of_a_three_letter_secret_is_refused(clue: str, secret: str) -> None:
    # WordNet shows each made of the secret and another word (games/data/wordforms.txt's @compound).
    assert not mentions_secret(clue, secret)
    assert mentions_secret(clue, secret, compounds=True)
    assert reveals_secret(clue, secret) and reveals_secret(f"a {clue}, perhaps", secret)


@pytest.mark.parametrize(("clue", "secret"), [
    ("carpet", "car"), ("carpet", "pet"), ("season", "sea"), ("season", "son"), ("carrot", "car"), ("carrot", "rot"),
    ("cartoon", "car"), ("button", "but"), ("button", "ton"), ("category", "cat"), ("important", "ant"),
    ("notice", "ice"), ("capable", "cap"), ("bedlam", "bed"), ("relationship", "hip"), ("compare", "are"),
    ("average", "age"), ("signage", "age"), ("antacid", "ant"), ("western", "ern"), ("adoring", "ado"),
])
def test_a_word_that_merely_splits_into_two_words_is_no_compound(clue: str, secret: str) -> None:
    assert not mentions_secret(clue, secret, compounds=True)
    assert not reveals_secret(clue, secret)


def test_the_chameleon_refuses_a_compound_of_a_three_letter_secret() -> None:
    s, seat = _chameleon_with("Bed")
    with pytest.raises(IllegalAction, match="secret"):
        CHAMELEON.apply(s, seat, Action.say("clue", "bedroom"))
    CHAMELEON.apply(s, seat, Action.say("clue", "bedlam"))


@pytest.mark.parametrize("how", sorted(READABLE))
def test_reveals_secret_reads_letters_only(how: str) -> None:
    assert reveals_secret(READABLE[how], "strawberry"), how
    assert reveals_secret(f"a sweet {READABLE[how]} in June", "strawberry"), how


def test_reveals_secret_is_mentions_secret_and_the_snowman_rule() -> None:
    assert reveals_secret("snowman", "snow") and reveals_secret("Bees", "bee") and reveals_secret("i c e", "ice")
    assert reveals_secret("danger", "anger")  # a word holding a secret of four letters or more
    for text, secret in (("tiny", "tin"), ("red fruit", "strawberry"),
                         ("I'd be around", "bear"), ("it went entirely", "tent"), ("straw hat berry", "strawberry")):
        assert not reveals_secret(text, secret), (text, secret)


def test_same_words_is_the_word_or_its_plural_only() -> None:
    assert same_words("Bees", "bee") and same_words("BÉE", "bee") and same_words("ice creams", "ice cream")
    assert not same_words("beekeeper", "bee") and not same_words("baker", "bake") and not same_words("a bee", "bee")


def test_words_split_at_hyphens_and_keep_apostrophes() -> None:
    assert len(words("out-of-distribution")) == 3
    assert len(words("don't stop")) == 2
    assert len(words(f"one{ZWSP}word")) == 1


def test_numbers_and_codes() -> None:
    for code in ("3-4-1", "341", "3 4 1", "３４１", "3rd", "route 66"):
        assert has_number(code), code
    for word in ("R2D2", "three", "C3PO robot"):
        assert not has_number(word), word


def test_clean_keeps_the_letters_and_drops_the_invisible() -> None:
    assert clean(f"  sto{ZWSP}ol \n\t leg ") == "stool leg"
    assert clean("\ue0001\ue001 Alice") == "1 Alice"  # a forged seat label loses its delimiters


# --------------------------------------------------------------------------- limits say what they enforce


def test_the_character_limit_is_inclusive_and_says_so() -> None:
    spec = Text("hints", "p", ("Hint",), max_words=2, max_chars=30)
    assert check_text(spec, Action("hints", ("x" * 30,))) == ("x" * 30,)
    with pytest.raises(IllegalAction, match="at most 30 characters") as info:
        check_text(spec, Action("hints", ("x" * 31,)))
    assert "under" not in str(info.value)
    assert spec.limits() == "at most 2 words and 30 characters"


def test_invisible_characters_do_not_count_towards_the_limit() -> None:
    spec = Text("clue", "p", ("Clue",), max_words=1, max_chars=5)
    assert check_text(spec, Action("clue", (f"s{ZWSP * 10}tool",))) == ("stool",)


# --------------------------------------------------------------------------- Decrypto


def _decrypto() -> tuple[DecryptoState, int]:
    s, _ = DECRYPTO.new(DECRYPTO.make_config("benchmark", deck=["lock", "river", "music", "stool"]), 3, 1)
    return s, s.keywords[0].index("stool") + 1


@pytest.mark.parametrize("how", sorted(DISGUISES))
def test_decrypto_hint_cannot_disguise_a_keyword(how: str) -> None:
    s, number = _decrypto()
    with pytest.raises(IllegalAction, match=f"keyword {number}") as info:
        DECRYPTO.apply(s, 0, Action("hints", ("alpha", DISGUISES[how], "charlie")))
    assert "stool" not in str(info.value).lower()  # refusals reach logs: the number, never the word


def test_decrypto_plural_of_a_keyword_is_refused() -> None:
    s, _ = _decrypto()
    number = s.keywords[0].index("lock") + 1
    with pytest.raises(IllegalAction, match=f"keyword {number}"):
        DECRYPTO.apply(s, 0, Action("hints", ("alpha", "Locks", "charlie")))


def test_decrypto_hyphens_do_not_bypass_the_word_limit() -> None:
    s, _ = _decrypto()
    with pytest.raises(IllegalAction, match="at most 2 words"):
        DECRYPTO.apply(s, 0, Action("hints", ("alpha", "out-of-distribution", "charlie")))
    DECRYPTO.apply(s, 0, Action("hints", ("alpha", "well-known", "charlie")))  # two words are fine


def test_decrypto_hint_limit_is_exactly_thirty_characters() -> None:
    s, _ = _decrypto()
    spec = DECRYPTO.legal(s, 0)
    assert isinstance(spec, Text) and spec.max_chars == 30
    DECRYPTO.apply(s, 0, Action("hints", ("alpha", "a" * 14 + " " + "b" * 15, "charlie")))
    with pytest.raises(IllegalAction, match="at most 30 characters"):
        DECRYPTO.apply(s, 0, Action("hints", ("alpha", "a" * 15 + " " + "b" * 15, "charlie")))


@pytest.mark.parametrize("hint", ["3-4-1", "341", "3", "３", "2nd"])
def test_decrypto_codes_and_numbers_are_not_hints(hint: str) -> None:
    s, _ = _decrypto()
    with pytest.raises(IllegalAction, match="number"):
        DECRYPTO.apply(s, 0, Action("hints", ("alpha", hint, "charlie")))


@pytest.mark.parametrize("how", sorted(READABLE))
def test_decrypto_hint_cannot_spell_a_keyword_out(how: str) -> None:
    s, _ = DECRYPTO.new(DECRYPTO.make_config("benchmark", deck=["lock", "river", "music", "strawberry"]), 3, 1)
    number = s.keywords[0].index("strawberry") + 1
    with pytest.raises(IllegalAction, match=f"keyword {number}") as info:
        DECRYPTO.apply(s, 0, Action("hints", ("alpha", READABLE[how], "charlie")))
    assert "strawberry" not in str(info.value).lower()


# --------------------------------------------------------------------------- Who-is-Spy


def _spy_speaker_with(word: str, pair: tuple[str, str] = ("stool", "bench")) -> tuple[SpyState, int]:
    for seed in range(100):
        s, _ = SPY.new(SPY.make_config("classic", deck=[list(pair)]), 5, seed)
        (speaker,) = SPY.to_act(s)
        if s.word_of(speaker) == word:
            return s, speaker
    raise AssertionError("no seed gives the first speaker that word")


@pytest.mark.parametrize("how", sorted(DISGUISES))
def test_spy_description_cannot_disguise_the_word(how: str) -> None:
    s, speaker = _spy_speaker_with("stool")
    with pytest.raises(IllegalAction, match="must not contain your word"):
        SPY.apply(s, speaker, Action("describe", (f"a {DISGUISES[how]} at the bar",)))


@pytest.mark.parametrize("how", sorted(READABLE))
def test_spy_description_cannot_spell_the_word_out(how: str) -> None:
    s, speaker = _spy_speaker_with("strawberry", ("strawberry", "raspberry"))
    with pytest.raises(IllegalAction, match="must not contain your word"):
        SPY.apply(s, speaker, Action("describe", (f"sweet {READABLE[how]}",)))
    SPY.apply(s, speaker, Action("describe", ("a red fruit with seeds outside",)))  # describing is fine


def test_spy_repeats_are_compared_normalised() -> None:
    s, speaker = _spy_speaker_with("bench")
    s, _ = SPY.apply(s, speaker, Action("describe", ("wooden seat",)))
    (nxt,) = SPY.to_act(s)
    assert s.phase is SpyPhase.DESCRIBE
    with pytest.raises(IllegalAction, match="already given"):
        SPY.apply(s, nxt, Action("describe", (f"Wóoden{ZWSP} SEAT",)))


# --------------------------------------------------------------------------- Chameleon

CARD = ("Furniture", ("Bee", "Stool", "Chair", "Table", "Sofa", "Bed", "Desk", "Shelf",
                      "Lamp", "Rug", "Bench", "Dresser", "Mirror", "Clock", "Crib", "Couch"))


def _chameleon_with(secret: str) -> tuple[ChameleonState, int]:
    cfg = CHAMELEON.make_config("classic", deck=[CARD])
    for seed in range(300):
        s, _ = CHAMELEON.new(cfg, 4, seed)
        if s.secret == secret and s.order[0] != s.chameleon:
            return s, s.order[0]
    raise AssertionError("no seed deals that secret to a first speaker who knows it")


@pytest.mark.parametrize("how", sorted(DISGUISES))
def test_chameleon_clue_cannot_disguise_the_secret(how: str) -> None:
    s, seat = _chameleon_with("Stool")
    with pytest.raises(IllegalAction, match="secret"):
        CHAMELEON.apply(s, seat, Action.say("clue", DISGUISES[how]))


@pytest.mark.parametrize("how", sorted(READABLE))
def test_chameleon_clue_cannot_spell_the_secret_out(how: str) -> None:
    card = ("Fruit", ("Strawberry", *CARD[1][1:]))
    cfg = CHAMELEON.make_config("classic", deck=[card])
    s, seat = next((s, s.order[0]) for seed in range(300)
                   if (s := CHAMELEON.new(cfg, 4, seed)[0]).secret == "Strawberry" and s.order[0] != s.chameleon)
    with pytest.raises(IllegalAction, match="secret"):
        CHAMELEON.apply(s, seat, Action.say("clue", READABLE[how]))


def test_chameleon_plural_of_the_secret_is_refused() -> None:
    s, seat = _chameleon_with("Bee")
    with pytest.raises(IllegalAction, match="secret"):
        CHAMELEON.apply(s, seat, Action.say("clue", "bees"))


# --------------------------------------------------------------------------- variants of a word

def _all_variants() -> list[tuple[str, str, str]]:
    return [(kind, c, s) for kind, pairs in VARIANTS.items() for c, s in pairs]


@pytest.mark.parametrize(("kind", "clue", "secret"), _all_variants())
def test_every_variant_of_the_secret_is_refused(kind: str, clue: str, secret: str) -> None:
    assert reveals_secret(clue, secret), (kind, clue, secret)
    assert reveals_secret(f"a {clue} perhaps", secret), (kind, clue, secret)  # inside a description too


@pytest.mark.parametrize(("clue", "secret"), [
    ("library", "librarian"), ("color", "colour"), ("theater", "theatre"), ("donut", "doughnut"), ("gray", "grey"),
    ("jewelry", "jewellery"), ("tire", "tyre"), ("mouse", "mice"), ("tooth", "teeth"), ("woman", "women"),
    ("fly", "flew"), ("piano", "pianist"), ("science", "scientist"), ("sun", "sunny"), ("ice", "icy"),
    ("swimming", "swimmer"), ("painting", "painter"), ("yogurt", "yoghurt"), ("pirate", "piracy"), ("7", "seven"),
    ("tax", "taxman"), ("egg", "eggy"), ("ash", "ashy"), ("net", "netman"), ("pilot", "pılot"), ("shirt", "ſhırt"),
])
def test_the_issue_pairs_are_refused_the_other_way_round(clue: str, secret: str) -> None:
    # Spymasters checks a clue against each board word both ways; a variant is one either way.
    assert reveals_secret(clue, secret)


def test_variants_are_refused_through_inflections_and_disguises() -> None:
    assert reveals_secret("colours", "color") and reveals_secret("Librarians", "library")
    assert reveals_secret("SEVENTH", "7") and reveals_secret("sevens", "7") and reveals_secret("７", "seven")
    assert reveals_secret("pian\u200bist", "piano") and reveals_secret("Ｔｅｅｔｈ", "tooth")
    assert reveals_secret("painters", "painting") and reveals_secret("swimmers", "swim")


def test_confusable_letters_fold_to_latin() -> None:
    assert fold("pılot") == "pilot" and fold("ſhırt") == "shirt"
    assert fold("ɑpple") == "apple"
    assert fold("Кот") == "kot"  # our own table keeps its choices (Cyrillic К reads as K)


def test_innocent_clues_are_not_refused() -> None:
    refused = [(c, s) for c, s in INNOCENT if reveals_secret(c, s)]
    # The known few: a secret of four letters inside a longer word (the snowman rule: knight, planet,
    # bullet) and two words shaped like a short word with a suffix (battery for bat, bury for bur).
    assert len(refused) <= 5, refused
    print(f"\ninnocent clues refused: {len(refused)} of {len(INNOCENT)} ({100 * len(refused) / len(INNOCENT):.1f}%): {refused}")


@pytest.mark.parametrize(("clue", "secret"), [
    ("tiny", "tin"), ("busy", "bus"), ("solar", "sun"), ("carpet", "car"), ("season", "sea"), ("category", "cat"),
    ("general", "generous"), ("nation", "native"), ("sight", "see"), ("moon", "sun"), ("ear", "year"),
])
def test_words_that_merely_look_alike_stay_free(clue: str, secret: str) -> None:
    assert not reveals_secret(clue, secret)
    assert not is_variant(fold(clue), fold(secret))


def test_multi_word_secrets_keep_their_rules() -> None:
    assert reveals_secret("ice creams", "ice cream") and not reveals_secret("icy cone", "ice cream")


# --------------------------------------------------------------------------- Spymasters

BOARD = ("yogurt", "pirate", "library", "piano", "color", "tooth", "sun", "egg", "pilot", "apple", "river", "castle",
         "rocket", "garden", "window", "candle", "forest", "engine", "violin", "saddle", "tiger", "wagon", "zebra",
         "marble", "anchor")


@pytest.mark.parametrize("clue", ["yoghurt", "piracy", "librarian", "pianist", "colour", "teeth", "sunny", "eggy",
                                  "pılot", "Yoghurts"])
def test_spymasters_refuses_a_clue_that_is_a_variant_of_a_board_word(clue: str) -> None:
    spymasters = games.get("spymasters")
    key = ["red"] * 9 + ["blue"] * 8 + ["bystander"] * 7 + ["assassin"]
    s, _ = spymasters.new(spymasters.make_config(deal={"words": list(BOARD), "key": key, "starting": "red",
                                                       "spymasters": [0, 1]}), 4, 0)
    with pytest.raises(IllegalAction):
        spymasters.apply(s, 0, Action.say("clue", clue))
    spymasters.apply(s, 0, Action.say("clue", "dairy"))  # an association is fine


@pytest.mark.parametrize(("clue", "secret"), [
    ("ᴘɪʟᴏᴛ", "pilot"), ("ʙᴀʟʟ", "ball"), ("bɐll", "ball"), ("ɹobot", "robot"), ("płane", "plane"), ("bøat", "boat"),
    ("pɨlot", "pilot"), ("ŁAMP", "lamp"), ("pi\u3164lot", "pilot"), ("pi\u115flot", "pilot"), ("pi\uffa0lot", "pilot"),
    ("p1lot", "pilot"), ("p!lot", "pilot"), ("pi|ot", "pilot"), ("sh0e", "shoe"), ("ᴄᴀᴛs", "cat"),
])
def test_small_capitals_ipa_stroked_letters_fillers_and_digits_for_letters_are_the_secret(clue: str, secret: str) -> None:
    assert reveals_secret(clue, secret)


@pytest.mark.parametrize(("clue", "secret"), [("Go!", "goal"), ("R2D2", "robot"), ("1st place", "list"), ("a|b test", "lab")])
def test_digits_and_marks_between_words_are_no_letters(clue: str, secret: str) -> None:
    assert not reveals_secret(clue, secret)
