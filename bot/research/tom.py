"""The papers' theory-of-mind experiments over logged games: ``hushtable tom decrypto|spy``.

Decrypto (the Decrypto paper, section 4.1), for each team's turns after the
first, from the code and hint history of the turns before it:

- *Representational change* and *false belief* (the Smarties task): the model,
  as the interceptor Eve, is asked A) the four keywords; B) after they are
  revealed, what it thought they were before; C) after the reveal, what a
  second interceptor would think they are. Only turns where A is wrong count.
  Weak pass: B (or C) is not the real keywords; strong pass: B (or C) equals A.
- *Perspective taking* (the three-mountain problem): the model, as the encoder
  Alice who gave the turn's hints, predicts Eve's guess of the code (the
  paper's Listing 8 question after the turn's hints). Accuracy against Eve's
  real guess (turns Eve guessed), and the share of turns it predicts an
  interception against the real interception rate. The paper asks the model
  that gave the hints; a logged game's hints may be another agent's or a
  person's, so the table also gives the turns whose encoder seat was the
  evaluated agent (``PT own``) and the accuracy on those alone.

Eve's prompts hold the team's hint history by keyword of the turns before, and
nothing else, as the benchmark's code asks them (its ``get_gopnik_prompt``:
asked before Eve sees the turn's hints, without the past codes);
``--show-current-hints`` asks them with what her move's prompt holds instead
(the paper's Listing 7: the past codes, the hint history and the current turn's
hints), and the table says which was asked. Every answer that cannot
be read is counted per prompt (``A unparsed``: such a turn cannot be scored;
``B/C unparsed``, ``PT unparsed``: failures), never dropped silently.

Who-is-Spy (SpyGame, section 4.3), before the first vote (every player has
described once, nobody is out), asked as the paper asks: the evaluated model
sits in the *guest* seat, the spy's (Mr. White counts as a spy), and answers
the first-order question (every player's keyword and identity, itself
included; exactly one spy) and the second-order one (what the others will
guess its keyword and identity to be); every *host* seat (the villagers)
answers the first-order question only, asked of ``--host`` (the paper's hosts
are one fixed model; default: the evaluated model), as the ground truth of the
second order. *self-identity*, *1-word* and *1-identity* are the guest's
answers scored against the deal (a seat without a keyword, Mr. White, has no
word to guess and is left out of 1-word); *2-word* and *2-identity* against the
hosts' first-order answers about the guest, their plurality; where that
plurality is tied the answer is left out of the share and counted (``ties``),
never decided by the order of the seats.

Questions go to a language model (``--agent llm:...``, local or an
OpenAI-compatible server) at temperature 0; answers are read from their last
``ANSWER:`` line (a reply without one is counted as unanswered, never
guessed). Everything is read from the stored result of each finished game, so
live and imported games count alike. Results are stored beside the game in the
evaluations table (evaluator ``tom:<experiment>:<agent>``, exported with the
game); docs/protocols/tom.md says how this follows the papers and where not.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from games.text import fold
from models.types import GenerateRequest, Inference, InferenceError, Message

PROMPT_VERSION = "tom-2"  # tom-2: Eve sees the hint history only by default; no second order without a description
MAX_TOKENS = 64


class Experiment(StrEnum):
    DECRYPTO = "decrypto"
    SPY = "spy"


class Identity(StrEnum):
    SPY = "spy"
    VILLAGER = "villager"


# --------------------------------------------------------------------------- answers

_ANSWER = re.compile(r"ANSWER\s*:\s*(.*)", re.IGNORECASE)


def answer_line(text: str) -> str | None:
    """The text after the last ``ANSWER:`` (first line of it), or None."""
    found = _ANSWER.findall(text)
    if not found:
        return None
    line = found[-1].strip().splitlines()[0].strip() if found[-1].strip() else ""
    return line or None


def parse_words(text: str, n: int) -> tuple[str, ...] | None:
    """``n`` words separated by commas or semicolons (numbering like ``1.`` dropped), or None."""
    line = answer_line(text)
    if line is None:
        return None
    parts = [re.sub(r"^\s*\d+\s*[.):]\s*", "", p).strip(" .\"'") for p in re.split(r"[,;]", line)]
    parts = [p for p in parts if p]
    return tuple(parts) if len(parts) == n else None


def parse_code(text: str) -> str | None:
    """A three-digit code ``d-d-d`` (digits 1-4, distinct) from the answer, or None."""
    line = answer_line(text)
    digits = re.findall(r"[1-4]", line or "")
    if len(digits) != 3 or len(set(digits)) != 3:
        return None
    return "-".join(digits)


def same_words(a: Sequence[str], b: Sequence[str]) -> bool:
    return len(a) == len(b) and all(fold(x) == fold(y) for x, y in zip(a, b, strict=True))


# --------------------------------------------------------------------------- Decrypto: pure parts


@dataclass(frozen=True, slots=True)
class DecryptoTurn:
    """One team's turn and the public history before it."""

    team: str
    round: int
    keywords: tuple[str, str, str, str]
    code: str
    hints: tuple[str, ...]
    history: tuple[tuple[str, dict[str, str]], ...]  # (code, hints by digit) of the team's earlier turns
    interceptor_guess: str | None
    encoder: int | None = None  # the seat that gave the hints


def decrypto_turns(details: dict[str, Any]) -> list[DecryptoTurn]:
    """Every turn of a finished Decrypto game's result, with its team's earlier turns."""
    kw = details["keywords"]
    by_team = kw if isinstance(next(iter(kw.values())), dict) else {"A": kw}
    out: list[DecryptoTurn] = []
    for team, words in sorted(by_team.items()):
        keywords = tuple(words[str(d)] for d in range(1, 5))
        rows = sorted((h for h in details["history"] if h["team"] == team), key=lambda h: h["round"])
        for i, h in enumerate(rows):
            past = tuple((r["code"], dict(r["hints_by_digit"])) for r in rows[:i])
            out.append(DecryptoTurn(team, int(h["round"]), keywords, h["code"], tuple(h["hints"]),
                                    past, h.get("interceptor_guess"),
                                    int(h["encoder"]) if h.get("encoder") is not None else None))
    return out


@dataclass(frozen=True, slots=True)
class SmartiesScore:
    counted: bool  # A was wrong (the only turns the paper scores)
    a_unparsed: bool = False
    bc_unparsed: int = 0  # of B and C, on a counted turn
    rc_weak: bool = False
    rc_strong: bool = False
    fb_weak: bool = False
    fb_strong: bool = False


def smarties(keywords: Sequence[str], a: Sequence[str] | None, b: Sequence[str] | None,
             c: Sequence[str] | None) -> SmartiesScore:
    """Representational change (A vs B) and false belief (A vs C) of one turn; an unanswered B or C fails."""
    if a is None or same_words(a, keywords):
        return SmartiesScore(counted=False, a_unparsed=a is None)
    return SmartiesScore(
        counted=True, bc_unparsed=(b is None) + (c is None),
        rc_weak=b is not None and not same_words(b, keywords), rc_strong=b is not None and same_words(b, a),
        fb_weak=c is not None and not same_words(c, keywords), fb_strong=c is not None and same_words(c, a),
    )


@dataclass(frozen=True, slots=True)
class PerspectiveScore:
    answered: bool
    eve_guessed: bool  # Eve guessed this turn (not the first turn of the teams variant)
    correct: bool = False  # the prediction is Eve's real guess
    predicted_intercept: bool = False  # the prediction is the real code
    intercepted: bool = False
    own_hints: bool = False  # the evaluated agent gave this turn's hints, as in the paper


def perspective(code: str, predicted: str | None, eve_guess: str | None, *, own_hints: bool = False) -> PerspectiveScore:
    return PerspectiveScore(answered=predicted is not None, eve_guessed=eve_guess is not None,
                            correct=predicted is not None and predicted == eve_guess,
                            predicted_intercept=predicted == code, intercepted=eve_guess == code, own_hints=own_hints)


@dataclass(slots=True)
class DecryptoTable:
    """The Decrypto paper's Figure 4 numbers for one agent (shares in [0, 1])."""

    agent: str
    smarties: list[SmartiesScore] = field(default_factory=list)
    perspective: list[PerspectiveScore] = field(default_factory=list)

    def row(self) -> dict[str, float | int | None]:
        counted = [s for s in self.smarties if s.counted]
        pt = [p for p in self.perspective if p.eve_guessed]

        def share(xs: Sequence[bool]) -> float | None:
            return sum(xs) / len(xs) if xs else None

        # An unparsed prediction is counted apart (pt_unanswered): it is no prediction, so neither a wrong
        # one nor a prediction of "no interception"; the shares are over the answered turns.
        said = [p for p in pt if p.answered]
        own = [p for p in said if p.own_hints]
        return {
            "turns_scored": len(counted), "turns_asked": len(self.smarties),
            "a_unparsed": sum(s.a_unparsed for s in self.smarties),
            "bc_unparsed": sum(s.bc_unparsed for s in counted),
            "pt_own_turns": len(own), "pt_own_accuracy": share([p.correct for p in own]),
            "rc_weak": share([s.rc_weak for s in counted]), "rc_strong": share([s.rc_strong for s in counted]),
            "fb_weak": share([s.fb_weak for s in counted]), "fb_strong": share([s.fb_strong for s in counted]),
            "pt_turns": len(pt), "pt_unanswered": sum(1 for p in pt if not p.answered),
            "pt_accuracy": share([p.correct for p in said]),
            "pt_predicted_intercept": share([p.predicted_intercept for p in said]),
            "pt_real_intercept": share([p.intercepted for p in pt]),
        }


# --------------------------------------------------------------------------- Decrypto: prompts


def _history_text(turn: DecryptoTurn) -> str:
    if not turn.history:
        return "No turns have been played yet."
    lines = []
    for i, (code, by_digit) in enumerate(turn.history, start=1):
        lines.append(f"Turn {i}: code {code}; hints " + ", ".join(f"{d}: {h}" for d, h in sorted(by_digit.items())))
    per_digit = {d: [bd[d] for _, bd in turn.history if d in bd] for d in "1234"}
    lines.append("Hint history by keyword digit: " + "; ".join(f"{d}: {', '.join(v) or '-'}"
                                                                for d, v in per_digit.items()))
    return "\n".join(lines)


RULES = ("Decrypto: a team has four secret keywords numbered 1-4. Each turn the encoder gets a three-digit code "
         "(three different digits from 1 to 4) and gives one hint per digit, pointing at that digit's keyword. "
         "The interceptor (Eve) sees only the hints and the revealed codes of past turns, and tries to guess the "
         "code.")


def _by_keyword(turn: DecryptoTurn) -> str:
    """The hint history as the benchmark's code writes it: one line per keyword, its hints in turn order."""
    return "\n".join(f"    Keyword {d}: {', '.join(bd[d] for _, bd in turn.history if d in bd)}" for d in "1234")


def eve_prompts(turn: DecryptoTurn, *, show_current_hints: bool = False) -> dict[str, tuple[Message, ...]]:
    """Prompts A, B and C of the Smarties task for one turn (asked independently): by default with the hint history
    by keyword only, as the benchmark's code asks them; ``show_current_hints``: the past codes, the history and
    this turn's hints (what Eve's move prompt holds)."""
    system = Message("system", f"{RULES} You are Eve, the interceptor.")
    fmt = "Answer on one line: ANSWER: keyword1, keyword2, keyword3, keyword4"
    if not show_current_hints:
        head = (f"Turn {len(turn.history) + 1}: You are the Interceptor. This is the hint history so far:\n"
                f"Hint History:\n{_by_keyword(turn)}")
        revealed = ("These are the four secret keywords shared by the Encoder and Decoder:\nKeywords:\n"
                    + "\n".join(f"    {i}. {k}" for i, k in enumerate(turn.keywords, start=1))
                    + "\nThe keywords are now revealed to you.")
        return {
            "A": (system, Message("user", f"{head}\n\nGiven this hint history, what do you think are the four secret "
                                          f"keywords shared by the Encoder and Decoder (in the order of the hint "
                                          f"history)? {fmt}")),
            "B": (system, Message("user", f"{head}\n\n{revealed}\n\nBefore the keywords were revealed to you and you "
                                          "had only seen the game history, up to and including the hint history so "
                                          f"far, what did you think were the four keywords (in the order of the hint "
                                          f"history)? {fmt}")),
            "C": (system, Message("user", f"{head}\n\n{revealed}\n\nAnother player, the Second Interceptor, hasn't "
                                          "seen the secret keywords. When they first see the game history, up to and "
                                          "including the hint history so far, what will they think are the four "
                                          f"keywords (in the order of the hint history)? {fmt}")),
        }
    history = f"{_history_text(turn)}\n\nThe hints given by the Encoder for this turn are: {', '.join(turn.hints)}."
    reveal = f"The four keywords have now been revealed: {', '.join(turn.keywords)}."
    return {
        "A": (system, Message("user", f"{history}\n\nWhat do you think the four keywords are (in order 1-4)? {fmt}")),
        "B": (system, Message("user", f"{history}\n\n{reveal} Before this reveal, what did you think the four keywords "
                                      f"were (in order 1-4)? {fmt}")),
        "C": (system, Message("user", f"{history}\n\n{reveal} A second interceptor saw the same history as you but "
                                      f"not this reveal. What would they think the four keywords are (in order 1-4)? "
                                      f"{fmt}")),
    }


def alice_prompt(turn: DecryptoTurn) -> tuple[Message, ...]:
    """Perspective taking: the encoder who gave this turn's hints predicts Eve's guess."""
    system = Message("system", f"{RULES} You are Alice, the encoder.")
    user = (f"Your keywords: {', '.join(f'{i}. {k}' for i, k in enumerate(turn.keywords, start=1))}.\n"
            f"{_history_text(turn)}\n\nAs the Encoder, you've provided the following hints for the code {turn.code}: "
            f"{{{', '.join(turn.hints)}}}\n\nWhat do you predict will be the guess of the Interceptor when seeing "
            "those hints? Answer on one line: ANSWER: d-d-d")
    return system, Message("user", user)


# --------------------------------------------------------------------------- Who-is-Spy: pure parts


@dataclass(frozen=True, slots=True)
class SpyTable:
    """One seat asked before the first vote: the guest answers both orders, a host the first only."""

    seat: int
    word: str | None
    identity: Identity
    first: dict[int, tuple[str, Identity]] | None  # seat -> guessed (keyword, identity), or None: unanswered
    second: tuple[str, Identity] | None = None  # the guest's guess of what the others will guess about it
    guest: bool = False
    described: bool = True  # the seat gave a description in round 1 (the second order asks "based on your description")


def spy_setting(details: dict[str, Any]) -> tuple[list[str | None], list[Identity], list[tuple[int, str]]]:
    """Each seat's word, identity (Mr. White counts as a spy) and the round-1 descriptions (seat, text)."""
    roles = details["roles"]
    words: list[str | None] = []
    ids: list[Identity] = []
    for r in roles:
        ids.append(Identity.VILLAGER if r == "villager" else Identity.SPY)
        words.append(details["villager_word"] if r == "villager" else details["spy_word"] if r == "spy" else None)
    said = [(int(d["seat"]), str(d["text"])) for d in details["descriptions"] if int(d["round"]) == 1]
    return words, ids, said


def parse_players(text: str, seats: int) -> dict[int, tuple[str, Identity]] | None:
    """Lines ``Player k: keyword, spy|villager`` for every seat, or None."""
    out: dict[int, tuple[str, Identity]] = {}
    for m in re.finditer(r"Player\s*(\d+)\s*[:\-]\s*([^,\n]+?)\s*,\s*(spy|villager|civilian)", text, re.IGNORECASE):
        k = int(m.group(1)) - 1
        if 0 <= k < seats:
            out[k] = (m.group(2).strip(" .\"'"), Identity.SPY if m.group(3).lower() == "spy" else Identity.VILLAGER)
    return out if len(out) == seats else None


def parse_self(text: str) -> tuple[str, Identity] | None:
    line = answer_line(text)
    m = re.match(r"\s*([^,]+?)\s*,\s*(spy|villager|civilian)", line or "", re.IGNORECASE)
    if not m:
        return None
    return m.group(1).strip(" .\"'"), Identity.SPY if m.group(2).lower() == "spy" else Identity.VILLAGER


def guest_seats(ids: Sequence[Identity]) -> list[int]:
    """The seats the paper puts the evaluated model in: the spy's (SpyGame's guest agent)."""
    return [s for s, i in enumerate(ids) if i is Identity.SPY]


def spy_scores(words: Sequence[str | None], ids: Sequence[Identity], tables: Sequence[SpyTable]) -> dict[str, Any]:
    """SpyGame's Table 7 for one game, over its guest seats: self-identity and the second order per guest, the
    first order per (guest, other seat); the hosts' first-order answers are the second order's ground truth."""
    by_seat = {t.seat: t for t in tables}
    self_id: list[bool] = []
    one_word: list[bool] = []
    one_id: list[bool] = []
    two_word: list[bool] = []
    two_id: list[bool] = []
    ties = 0
    guests = [t for t in tables if t.guest]
    for t in guests:
        others = [s for s in range(len(words)) if s != t.seat]
        if t.first is None:  # unanswered counts as wrong, on every question it leaves open
            self_id.append(False)
            one_word += [False for s in others if words[s] is not None]
            one_id += [False] * len(others)
        else:
            self_id.append(t.first[t.seat][1] is ids[t.seat])
            for s in others:
                w, i = t.first[s]
                if words[s] is not None:  # Mr. White has no keyword to guess
                    one_word.append(fold(w) == fold(words[s] or ""))
                one_id.append(i is ids[s])
        if not t.described:  # never asked the second order: it is about its description
            continue
        about = [f[t.seat] for o in others if (h := by_seat.get(o)) is not None and not h.guest
                 and (f := h.first) is not None]
        for pos, bucket in ((0, two_word), (1, two_id)):
            votes = Counter(fold(a[0]) if pos == 0 else a[1] for a in about).most_common()
            if not votes:
                continue
            if len(votes) > 1 and votes[0][1] == votes[1][1]:
                ties += 1
                continue
            mine = None if t.second is None else fold(t.second[0]) if pos == 0 else t.second[1]
            bucket.append(mine == votes[0][0])

    def share(xs: Sequence[bool]) -> float | None:
        return sum(xs) / len(xs) if xs else None

    return {"seats": len(tables), "guests": len(guests), "self_identity": share(self_id), "one_word": share(one_word),
            "one_identity": share(one_id), "two_word": share(two_word), "two_identity": share(two_id),
            "unanswered": sum(1 for t in guests if t.first is None) + sum(1 for t in guests if t.described and t.second is None)
            + sum(1 for t in tables if not t.guest and t.first is None),
            "ties": ties, "undescribed": sum(1 for t in guests if not t.described)}


SPY_RULES = ("Who is the Spy: every player but the spy got the same secret keyword; the spy got a similar but "
             "different one. Each player has described their keyword once without saying it. Then everyone votes "
             "for who they think the spy is.")


def spy_prompts(seat: int, word: str | None, said: Sequence[tuple[int, str]], seats: int) -> dict[str, tuple[Message, ...]]:
    """The first-order question, and the second-order one ("based on your description") only for a seat that gave a
    description: a seat that gave none (it timed out, or left) has nothing for the others to judge it by."""
    system = Message("system", f"{SPY_RULES} You are Player {seat + 1}.")
    mine = f"Your keyword is {word}." if word else "You got no keyword."
    talk = "\n".join(f"Player {s + 1}: {t}" for s, t in said)
    first = (f"{mine}\nThe descriptions so far:\n{talk}\n\nIt is your turn to guess the keywords and identities of "
             f"all players, including yourself. You must identify only one spy player. Answer with one line per "
             f"player, Player 1 to Player {seats}: Player k: keyword, spy or villager")
    second = (f"{mine}\nThe descriptions so far:\n{talk}\n\nBased on your description, what do you think other players "
              "will guess your keyword and identity to be? Please put yourself in the shoes of other players and "
              "guess your own keyword and identity. Answer on one line: ANSWER: keyword, spy or villager")
    out: dict[str, tuple[Message, ...]] = {"first": (system, Message("user", first))}
    if any(s == seat for s, _ in said):
        out["second"] = (system, Message("user", second))
    return out


# --------------------------------------------------------------------------- asking


async def ask(client: Inference, messages: Sequence[Message], *, max_tokens: int = MAX_TOKENS,
              prefill: str = "ANSWER:") -> str:
    """The model's reply at temperature 0 (prefilled where the backend allows; '' when the call failed)."""
    try:
        res = await client.generate(GenerateRequest(tuple(messages), max_tokens=max_tokens, temperature=0.0,
                                                    prefill=prefill))
    except InferenceError:
        return ""
    text = res.text
    return text if not prefill or prefill.lower() in text.lower() else prefill + " " + text


async def run_decrypto(client: Inference, agent: str, games: Sequence[tuple[int, dict[str, Any]]],
                       seat_agents: dict[int, dict[int, str | None]] | None = None, *,
                       show_current_hints: bool = False) -> tuple[DecryptoTable, list[dict[str, Any]]]:
    """Ask every turn of these games (id, result details); the table and the records to store. ``seat_agents``
    (game -> seat -> agent spec) says whose hints each turn's were; ``show_current_hints``: Eve's prompts hold the
    turn's hints and the past codes too (see ``eve_prompts``)."""
    table = DecryptoTable(agent)
    records: list[dict[str, Any]] = []
    for gid, details in games:
        for turn in decrypto_turns(details):
            asked = alice_prompt(turn)
            pt_raw = await ask(client, asked, max_tokens=16)
            own = turn.encoder is not None and (seat_agents or {}).get(gid, {}).get(turn.encoder) == agent
            pt = perspective(turn.code, parse_code(pt_raw), turn.interceptor_guess, own_hints=own)
            table.perspective.append(pt)
            # Each question is kept with its reply, what was read from it and its score (exported with the game).
            rec: dict[str, Any] = {"game_id": gid, "round": turn.round, "team": turn.team,
                                   "pt": {"question": _messages(asked), "raw": pt_raw, "parsed": parse_code(pt_raw),
                                          "score": _asdict(pt)}}
            if turn.history:  # every turn except the first
                prompts = eve_prompts(turn, show_current_hints=show_current_hints)
                raw = {k: await ask(client, m) for k, m in prompts.items()}
                parsed = {k: parse_words(raw[k], 4) for k in ("A", "B", "C")}
                sc = smarties(turn.keywords, parsed["A"], parsed["B"], parsed["C"])
                table.smarties.append(sc)
                rec["smarties"] = {"question": {k: _messages(m) for k, m in prompts.items()}, "raw": raw,
                                   "parsed": {k: list(v) if v is not None else None for k, v in parsed.items()},
                                   "score": _asdict(sc)}
            records.append(rec)
    return table, records


async def run_spy(client: Inference, agent: str, games: Sequence[tuple[int, dict[str, Any]]],
                  host: Inference | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Ask the guest seats (``client``) both orders and the host seats (``host``, default ``client``) the first,
    before the first vote of every game; per-game scores and the records to store."""
    scores: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    for gid, details in games:
        words, ids, said = spy_setting(details)
        n = len(words)
        guests = set(guest_seats(ids))
        tables = []
        for seat in range(n):
            prompts = spy_prompts(seat, words[seat], said, n)
            model = client if seat in guests else (host or client)
            first_raw = await ask(model, prompts["first"], max_tokens=24 * n, prefill="Player 1:")
            described = "second" in prompts
            second_raw = await ask(client, prompts["second"], max_tokens=24) if seat in guests and described else None
            t = SpyTable(seat, words[seat], ids[seat], parse_players(first_raw, n),
                         parse_self(second_raw) if second_raw is not None else None, seat in guests, described)
            tables.append(t)
            records.append({"game_id": gid, "seat": seat, "seat_role": "guest" if seat in guests else "host",
                            "question": {k: _messages(m) for k, m in prompts.items() if k == "first" or seat in guests},
                            "first": first_raw, "second": second_raw,
                            "parsed": {"first": None if t.first is None else
                                       {str(k): list(v) for k, v in t.first.items()},
                                       "second": None if t.second is None else list(t.second)}})
        scores.append({"game_id": gid, **spy_scores(words, ids, tables)})
    return scores, records


def _messages(msgs: Sequence[Message]) -> list[dict[str, str]]:
    """A question as it was asked (role and text of each message), for the record."""
    return [m.to_json() for m in msgs]


def _asdict(x: Any) -> dict[str, Any]:
    return {k: getattr(x, k) for k in x.__dataclass_fields__}


def mean_rows(rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> dict[str, float | None]:
    """The mean of each key over the rows that have it (None where none has)."""
    out: dict[str, float | None] = {}
    for k in keys:
        xs = [r[k] for r in rows if r.get(k) is not None]
        out[k] = sum(xs) / len(xs) if xs else None
    return out


def settings_digest(agent: str, variant: str = "") -> str:
    return hashlib.sha256(f"{PROMPT_VERSION}:{agent}{':' + variant if variant else ''}".encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- storing beside the game


def to_records(experiment: Experiment, agent: str, records: Sequence[dict[str, Any]], variant: str = "") -> list[Any]:
    """The answers as evaluation rows of their game (evaluator ``tom:<experiment>:<agent>``; no metrics columns:
    the scores are in ``metric``), so they are kept and exported with the game. ``variant`` names a prompt choice
    (``eve-current-hints``): it keys the settings, so answers to other prompts are never mixed."""
    from storage.evaluations import EvaluationRecord

    out = []
    for r in records:
        if experiment is Experiment.DECRYPTO:
            seq, part, what = int(r["round"]), ord(str(r["team"])[0]) - ord("A"), {"round": r["round"], "team": r["team"]}
        else:
            seq, part, what = int(r["seat"]), 0, {"seat": r["seat"]}
        out.append(EvaluationRecord(
            game_id=int(r["game_id"]), action_seq=seq, part=part, game=experiment.value,
            evaluator=f"tom:{experiment.value}:{agent}", settings=settings_digest(agent, variant),
            settings_json={"kind": "tom", "prompts": PROMPT_VERSION, "agent": agent,
                           **({"variant": variant} if variant else {})},
            instance={"experiment": experiment.value, **what}, decoys=[], perm_seed=0, ally_probs=None,
            cham_probs=None, utility=None, leakage=None, soft=None, binary=None,
            metric={k: v for k, v in r.items() if k not in ("game_id",)},
        ))
    return out


# --------------------------------------------------------------------------- the command


DECRYPTO_KEYS = ("turns_asked", "turns_scored", "a_unparsed", "bc_unparsed", "rc_weak", "rc_strong", "fb_weak",
                 "fb_strong", "pt_turns", "pt_unanswered", "pt_accuracy", "pt_predicted_intercept", "pt_real_intercept",
                 "pt_own_turns", "pt_own_accuracy")
SPY_KEYS = ("self_identity", "one_word", "one_identity", "two_word", "two_identity")
SPY_COUNTS = ("games", "guests", "unanswered", "ties", "undescribed")


def _pct(x: object) -> str:
    return "    -" if x is None else f"{100 * float(x):5.0f}" if isinstance(x, float) else f"{x:5d}"


# The Decrypto paper gives Figure 4 as bars; its text states these numbers (section 4.1, Figure 4's caption).
PAPER_DECRYPTO_TOM = (
    "Paper (Decrypto, section 4.1 and Figure 4, six models; the figure's bars are not given as numbers, these are "
    "its text's): RC weak and FB weak: 'most models ... high accuracy'; RC strong and FB strong: <= 10 for every "
    "model; PT: real interception rate ~52; every model but Llama 3.1-70B and o3-high predicts an interception on "
    "nearly every turn (PT pred. int. near 100); Llama 3.1-70B alone predicts fewer than the real rate. Eve's "
    "questions there: the hint history by keyword only (the benchmark's code).")


def render_decrypto(rows: dict[str, dict[str, Any]], *, show_current_hints: bool = False) -> str:
    heads = ("asked", "scored", "A unparsed", "B/C unparsed", "RC weak", "RC strong", "FB weak", "FB strong",
             "PT turns", "PT unparsed", "PT acc.", "PT pred. int.", "real int.", "PT own", "PT own acc.")
    width = max([5, *(len(a) for a in rows)]) + 2
    lines = ["Decrypto theory of mind (the Decrypto paper, section 4.1; shares 0-100; RC/FB over turns where the "
             "agent's keyword guess A was wrong; asked: turns after the first; an unparsed A cannot be scored; "
             "PT own: turns whose hints the agent gave, as the paper asks; PT acc. and PT pred. int. over the answered "
             "turns, an unparsed answer counted apart)",
             "Eve's questions (A, B, C) showed " + ("the past codes, the hint history and this turn's hints "
                                                    "(--show-current-hints, what her move's prompt holds)"
                                                    if show_current_hints else
                                                    "the hint history by keyword only, as the benchmark's code asks"),
             f"{'Agent':<{width}}" + "".join(f"{h:>14}" for h in heads)]
    for agent, r in rows.items():
        lines.append(f"{agent:<{width}}" + "".join(f"{_pct(r[k]):>14}" for k in DECRYPTO_KEYS))
    lines.append(PAPER_DECRYPTO_TOM)
    return "\n".join(lines)


# SpyGame's Table 7 (section 4.3): guest agents among GPT-3.5-Turbo hosts, shares 0-1.
PAPER_SPY_TOM: dict[str, tuple[float, float, float, float, float]] = {
    "Text-Davinci-002": (0.20, 0.22, 0.72, 0.27, 0.47),
    "Text-Davinci-003": (0.14, 0.25, 0.72, 0.35, 0.61),
    "GPT-3.5-Turbo": (0.23, 0.17, 0.77, 0.37, 0.59),
    "GPT-4": (0.17, 0.38, 0.72, 0.35, 0.67),
}


def render_spy(rows: dict[str, dict[str, Any]]) -> str:
    heads = ("Self-Identity", "1-Word", "1-Identity", "2-Word", "2-Identity", "games", "guests", "unanswered",
             "2-order ties", "no descr.")
    width = max([5, *(len(a) for a in rows)]) + 2
    lines = ["Who-is-Spy theory of mind before the first vote (SpyGame, section 4.3; the agent in the spy's seat, "
             "the hosts' first-order answers as the second order's truth; shares 0-100)",
             f"{'Agent':<{width}}" + "".join(f"{h:>14}" for h in heads)]
    for agent, r in rows.items():
        lines.append(f"{agent:<{width}}" + "".join(f"{_pct(r[k]):>14}" for k in (*SPY_KEYS, *SPY_COUNTS)))
    lines.append("(no descr.: guests that gave no round-1 description; they are not asked the second order, which is "
                 "'based on your description', and are left out of 2-Word and 2-Identity)")
    lines.append("Paper (SpyGame, Table 7; the guest among GPT-3.5-Turbo hosts, 100 games per keyword):")
    for name, vals in PAPER_SPY_TOM.items():
        lines.append(f"{name:<{width}}" + "".join(f"{100 * v:>14.0f}" for v in vals))
    return "\n".join(lines)


def _command(experiment: Experiment) -> Any:
    import asyncio

    import typer

    def command(
        agent: list[str] = typer.Option(..., "--agent", "-a", help="A language model: llm:default, llm:/path, "
                                        "llm:openai:http://host/v1#model (repeatable: one row each)."),
        games_: str | None = typer.Option(None, "--games", help="Comma-separated game ids (default: every "
                                          "finished game of this kind)."),
        database: str | None = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL)."),
        keep: bool = typer.Option(True, "--store/--no-store", help="Keep the answers beside each game (exported)."),
        host: str | None = typer.Option(None, "--host", help="Who-is-Spy: the model asked in the host (villager) "
                                        "seats, whose first-order answers are the second order's truth (default: "
                                        "the evaluated model)."),
        show_current_hints: bool = typer.Option(False, "--show-current-hints", help="Decrypto: Eve's questions also "
                                                "show the past codes and the turn's hints, as her move's prompt does "
                                                "(default: the hint history only, as the benchmark's code asks)."),
    ) -> None:
        from bot.settings import Settings
        from models.client import ClientPool
        from storage.evaluations import save_evaluations
        from storage.store import DatabaseMissing, Store
        from storage.tables import GameStatus

        if show_current_hints and experiment is not Experiment.DECRYPTO:
            raise typer.BadParameter("--show-current-hints is a Decrypto option (Eve's questions)")
        bad = [a for a in (*agent, *([host] if host else [])) if not a.startswith("llm:")]
        if bad:
            raise typer.BadParameter(f"{bad[0]} is not a language model: theory-of-mind questions go to llm:... agents")
        try:
            wanted = {int(x) for x in games_.split(",") if x.strip()} if games_ else None
        except ValueError:
            raise typer.BadParameter("--games takes game ids separated by commas") from None
        settings = Settings()

        async def go() -> str:
            store = await Store.open(database or settings.database_url, must_exist=True)
            pool = ClientPool(settings.client_options())
            try:
                rows = await store.games(status=GameStatus.FINISHED, game=experiment.value)
                picked = [(r.id, (r.result or {}).get("details") or {}) for r in rows
                          if r.id is not None and (wanted is None or r.id in wanted)]
                picked = [(gid, d) for gid, d in picked if d]
                if not picked:
                    raise typer.BadParameter(f"no finished {experiment.value} game with a result"
                                             + (" among --games" if wanted else ""))
                table: dict[str, dict[str, Any]] = {}
                for name in agent:
                    client = await pool.get(name[len("llm:"):] or "default")
                    if experiment is Experiment.DECRYPTO:
                        seat_agents = {gid: {s.seat: s.agent_spec for s in (await store.load_game(gid)).seats}
                                       for gid, _ in picked}
                        dt, recs = await run_decrypto(client, name, picked, seat_agents,
                                                      show_current_hints=show_current_hints)
                        table[name] = dt.row()
                    else:
                        hosts = await pool.get(host[len("llm:"):] or "default") if host else None
                        per_game, recs = await run_spy(client, name, picked, hosts)
                        table[name] = {**mean_rows(per_game, SPY_KEYS), "games": len(per_game),
                                       **{k: sum(int(g[k]) for g in per_game) for k in SPY_COUNTS if k != "games"}}
                    if keep:
                        variant = "eve-current-hints" if show_current_hints and experiment is Experiment.DECRYPTO else ""
                        await save_evaluations(store, to_records(experiment, name, recs, variant))
                return (render_decrypto(table, show_current_hints=show_current_hints)
                        if experiment is Experiment.DECRYPTO else render_spy(table))
            finally:
                await pool.aclose()
                await store.aclose()

        try:
            typer.echo(asyncio.run(go()))
        except DatabaseMissing as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None

    command.__doc__ = {Experiment.DECRYPTO: "Representational change, false belief and perspective taking over "
                                            "logged Decrypto games (the Decrypto paper, section 4.1).",
                       Experiment.SPY: "First- and second-order questions before the first vote of logged "
                                       "Who-is-Spy games (SpyGame, section 4.3)."}[experiment]
    return command


def tom_cli() -> Any:
    """``hushtable tom decrypto|spy`` (registered in bot/cli.py)."""
    import typer

    app = typer.Typer(no_args_is_help=True, add_completion=False,
                      help="The papers' theory-of-mind experiments over logged games (live or imported).")
    for exp in Experiment:
        app.command(exp.value)(_command(exp))
    return app
