"""The clue check (``games.text.reveals_secret``): how many variant pairs it lets through, how many
innocent clues it refuses, and how fast it is.

    .venv/bin/python bench/clue_check.py

``VARIANTS`` are (clue, secret) pairs a reader takes for the secret itself: inflections,
derivations, British/American spellings, number words and digits, a short secret with a
suffix, confusable letters, a compound of a three-letter secret. ``INNOCENT`` are clues people give for a word (associations,
not forms of it), many sharing letters with it. ``tests/games/test_text.py`` holds the check
to both lists; this prints the rates and the time per check.
"""

from __future__ import annotations

import time

from games.text import reveals_secret

# (clue, secret): each a form of the secret, by kind.
VARIANTS: dict[str, tuple[tuple[str, str], ...]] = {
    "derivation": (
        ("librarian", "library"), ("pianist", "piano"), ("scientist", "science"), ("sunny", "sun"), ("icy", "ice"),
        ("swimmer", "swimming"), ("painter", "painting"), ("piracy", "pirate"), ("historian", "history"),
        ("comedian", "comedy"), ("violinist", "violin"), ("baker", "bakery"), ("dancer", "dance"),
        ("electrician", "electricity"), ("frozen", "freeze"),
    ),
    "inflection": (
        ("mice", "mouse"), ("teeth", "tooth"), ("women", "woman"), ("flew", "fly"), ("geese", "goose"),
        ("children", "child"), ("ran", "run"), ("knives", "knife"), ("feet", "foot"), ("swam", "swim"),
    ),
    "spelling": (
        ("colour", "color"), ("theatre", "theater"), ("doughnut", "donut"), ("grey", "gray"),
        ("jewellery", "jewelry"), ("tyre", "tire"), ("yoghurt", "yogurt"), ("aeroplane", "airplane"),
        ("aluminium", "aluminum"), ("pyjamas", "pajamas"), ("centre", "center"), ("moustache", "mustache"),
    ),
    "number": (("seven", "7"), ("7", "seven"), ("seventh", "7th"), ("twelve", "12"), ("3", "three")),
    "short secret": (
        ("taxman", "tax"), ("eggy", "egg"), ("ashy", "ash"), ("netman", "net"), ("foxy", "fox"), ("gunman", "gun"),
    ),
    "confusable": (("pılot", "pilot"), ("ſhırt", "shirt"), ("ɑpple", "apple")),
    # A three-letter secret in a compound WordNet shows made of it. "eggplant" was counted innocent until
    # the compounds came: WordNet glosses it "egg-shaped vegetable" and lists "garden egg" as a synonym.
    "compound": (("eyelash", "eye"), ("catwalk", "cat"), ("sunflower", "sun"), ("eggplant", "egg")),
}

# (clue, secret): clues people give for the secret, none a form of it.
INNOCENT: tuple[tuple[str, str], ...] = (
    ("bark", "dog"), ("pupil", "school"), ("ear", "year"), ("tiny", "tin"), ("category", "cat"), ("scar", "car"),
    ("pants", "ant"), ("solar", "sun"), ("knight", "night"), ("carpet", "car"), ("season", "sea"),
    ("moon", "sun"), ("shell", "egg"), ("yolk", "egg"), ("fire", "ash"), ("tree", "ash"), ("money", "tax"),
    ("fishing", "net"), ("goal", "net"), ("book", "library"), ("keys", "piano"), ("lab", "science"),
    ("beach", "sun"), ("cold", "ice"), ("pool", "swimming"), ("canvas", "painting"), ("ship", "pirate"),
    ("cheese", "mouse"), ("dentist", "tooth"), ("wing", "fly"), ("rainbow", "color"), ("stage", "theater"),
    ("sweet", "donut"), ("cloud", "gray"), ("ring", "jewelry"), ("wheel", "tire"), ("milk", "yogurt"),
    ("lucky", "seven"), ("parrot", "pirate"), ("cat", "mouse"), ("bite", "tooth"), ("mother", "woman"),
    ("bird", "fly"), ("music", "piano"), ("brush", "paint"), ("snow", "ice"), ("ocean", "sea"),
    ("treasure", "pirate"), ("heat", "sun"), ("breakfast", "egg"), ("volcano", "ash"), ("basket", "egg"),
    ("web", "net"), ("fox", "box"), ("wolf", "dog"), ("teacher", "school"), ("hearing", "ear"),
    ("calendar", "year"), ("can", "tin"), ("kitten", "cat"), ("wheel", "car"), ("insect", "ant"),
    ("armour", "knight"), ("dark", "night"), ("rug", "carpet"), ("winter", "season"), ("crown", "king"),
    ("castle", "king"), ("bone", "dog"), ("leash", "dog"), ("puppy", "dog"), ("class", "school"),
    ("eye", "pupil"), ("student", "pupil"), ("listen", "ear"), ("corn", "ear"), ("month", "year"),
    ("metal", "tin"), ("silver", "tin"), ("purr", "cat"), ("whiskers", "cat"), ("engine", "car"),
    ("road", "car"), ("colony", "ant"), ("hill", "ant"), ("pants", "jeans"), ("trousers", "pants"),
    ("shirt", "tie"), ("knot", "tie"), ("draw", "tie"), ("bow", "arrow"), ("violin", "bow"), ("ribbon", "bow"),
    ("bat", "ball"), ("cricket", "bat"), ("cave", "bat"), ("vampire", "bat"), ("oven", "bread"),
    ("toast", "bread"), ("butter", "bread"), ("letter", "mail"), ("stamp", "letter"), ("alphabet", "letter"),
    ("hammer", "nail"), ("finger", "nail"), ("barber", "hair"), ("comb", "hair"), ("planet", "star"),
    ("plane", "airport"), ("pilot", "plane"), ("captain", "ship"), ("anchor", "ship"), ("port", "ship"),
    ("engineer", "bridge"), ("river", "bridge"), ("bank", "river"), ("money", "bank"), ("teller", "bank"),
    ("battery", "bat"), ("bury", "bur"), ("arrow", "bow"), ("cattle", "cow"), ("panther", "cat"),
    ("candle", "can"), ("carrot", "car"), ("artery", "art"), ("petal", "pet"), ("tennis", "net"),
    ("taxi", "tax"), ("spinach", "pin"), ("button", "but"), ("sundial", "time"),
    ("general", "army"), ("organ", "church"), ("heart", "organ"), ("passion", "love"), ("nation", "country"),
    ("planet", "plan"), ("bullet", "bull"), ("cartoon", "car"), ("season", "son"), ("island", "sea"),
    ("painting", "canvas"), ("mirror", "glass"), ("window", "glass"), ("rose", "flower"), ("thorn", "rose"),
    ("sight", "see"), ("vision", "eye"), ("saw", "tool"), ("ground", "earth"), ("left", "right"),
    # Two words run together by chance, not compounds: refused by no rule that reads one apart.
    ("carpet", "pet"), ("button", "ton"), ("carrot", "rot"),
)


def rates() -> dict[str, tuple[int, int]]:
    """(accepted, tried) per variant kind, and ("innocent", (refused, tried))."""
    out = {kind: (sum(not reveals_secret(c, s) for c, s in pairs), len(pairs)) for kind, pairs in VARIANTS.items()}
    out["innocent refused"] = (sum(reveals_secret(c, s) for c, s in INNOCENT), len(INNOCENT))
    return out


def main() -> None:
    r = rates()
    accepted = sum(a for k, (a, _) in r.items() if k != "innocent refused")
    tried = sum(n for k, (_, n) in r.items() if k != "innocent refused")
    print(f"{'kind':<18}{'accepted':>10}{'tried':>8}")
    for kind, (a, n) in r.items():
        if kind != "innocent refused":
            print(f"{kind:<18}{a:>10}{n:>8}")
    print(f"{'all variants':<18}{accepted:>10}{tried:>8}")
    refused, n = r["innocent refused"]
    print(f"innocent clues refused: {refused} of {n} ({100 * refused / n:.1f}%)")
    for c, s in INNOCENT:
        if reveals_secret(c, s):
            print(f"  refused: {c!r} for {s!r}")
    for kind, pairs in VARIANTS.items():
        for c, s in pairs:
            if not reveals_secret(c, s):
                print(f"  accepted {kind}: {c!r} for {s!r}")
    every = [p for ps in VARIANTS.values() for p in ps] + list(INNOCENT)
    t0 = time.perf_counter()
    for c, s in every:
        reveals_secret(c, s)
    first = (time.perf_counter() - t0) / len(every) * 1e6
    t0 = time.perf_counter()
    rounds = 20
    for _ in range(rounds):
        for c, s in every:
            reveals_secret(c, s)
    print(f"time per check: {first:.0f} us first (tables loaded before), "
          f"{(time.perf_counter() - t0) / (rounds * len(every)) * 1e6:.1f} us repeated")


if __name__ == "__main__":
    reveals_secret("warm", "up")  # load the tables outside the timing
    main()
