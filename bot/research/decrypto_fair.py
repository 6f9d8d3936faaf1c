"""The Decrypto benchmark's human-play format: read it, check it, and play it through our engine.

The file is a JSON list of episodes; each episode has ``summarized_history``, a
list of turns: ``{"keywords": [4 words], "turn": 0, "code": "421", "hints": [3
strings, in code order], "guess_bob": [4, 2, 1], "guess_eve": [1, 2, 3]}``.
Episodes and turns are numbered from 0, as in the file.

Each episode is played through the Decrypto engine (benchmark variant) with the
recorded keywords and codes as its deal, so the engine, not the file, decides
miscommunications, interceptions, the end and the winner.

What the file may hold that our rules do not, and what happens to it
(``POLICY``). Without ``--lenient`` any of these refuses the whole file; with
it, the policy applies and every application is marked with the game:

- a turn recorded after the game ended (the paper's human players went on to
  turn 8, as the benchmark's human-play loop lets them): played on in the
  imported game (the engine's ``play_on``: the result stays the one decided, at
  its turn and tokens, and the later turns are the game's moves, so an export
  of the game holds every turn the file holds). Where the later turns cannot
  all be played (they stop before turn 8, or one breaks a rule no mode
  accepts), the game ends where it was decided and those turns are kept
  verbatim with the imported game;
- a hint our rules refuse as too long (more than two words, over 30
  characters): accepted as given, the game's hint limits raised to fit it, and
  marked;
- an invalid guess (not three different digits 1-4): counted as a wrong guess
  (the engine's ``abstain``: a miscommunication for the decoder, no interception
  for the interceptor), and marked;
- an episode that stops before the game ends: logged as an aborted game.

Never accepted, in either mode: a malformed file or turn, a code that is not
three different digits 1-4 or repeats an earlier code of the game on a turn that
is played (the rules never deal it), a hint that names one of the keywords (a
form of it, or the keyword read letters-only: ``games.text.reveals_secret``), a hint
holding a number, or an empty hint.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import games
from games.base import ABSTAIN, Action, ConfigError, IllegalAction, Text, check_text, words_of
from games.decrypto import BENCH_DECODER, BENCH_ENCODER, BENCH_INTERCEPTOR, HINT_MAX_CHARS, HINT_MAX_WORDS, code_id
from games.record import Record
from games.text import has_number, reveals_secret

FORMAT = "decrypto-fair"
SEATS = 3
TURN_KEYS = ("keywords", "turn", "code", "hints", "guess_bob", "guess_eve")


class IssueKind(StrEnum):
    MALFORMED = "malformed"
    BAD_CODE = "bad_code"
    HINT_NAMES_KEYWORD = "hint_names_keyword"
    HINT_NUMBER = "hint_number"
    HINT_TOO_LONG = "hint_too_long"
    INVALID_GUESS = "invalid_guess"
    PAST_END = "past_end"
    ENDS_EARLY = "ends_early"


POLICY: Mapping[IssueKind, str] = {
    IssueKind.HINT_TOO_LONG: "accepted as given; the game's hint limits are raised to fit it; marked",
    IssueKind.INVALID_GUESS: "counted as a wrong guess (abstain); marked",
    IssueKind.PAST_END: "played on to the last turn as the benchmark's human-play loop does, the result the one decided "
                        "(where they cannot all be played: not played, kept verbatim with the imported game)",
    IssueKind.ENDS_EARLY: "logged as an aborted game (no result; left out of stats)",
}
"""What ``--lenient`` does with each kind of issue; kinds not listed are never accepted."""


@dataclass(frozen=True)
class Issue:
    episode: int
    turn: int | None
    kind: IssueKind
    detail: str

    @property
    def fixable(self) -> bool:
        return self.kind in POLICY

    def text(self, lenient: bool = False) -> str:
        where = f"episode {self.episode}" + (f", turn {self.turn}" if self.turn is not None else "")
        tail = f" [--lenient: {POLICY[self.kind]}]" if lenient and self.fixable else ""
        if not self.fixable:
            tail = " [never accepted]"
        return f"{where}: {self.detail}{tail}"

    def to_json(self) -> dict[str, Any]:
        return {"episode": self.episode, "turn": self.turn, "kind": self.kind.value, "detail": self.detail}


@dataclass(frozen=True)
class Turn:
    number: int
    keywords: tuple[str, ...]
    code: str  # as recorded
    hints: tuple[str, ...]
    guess_bob: Any
    guess_eve: Any
    raw: Mapping[str, Any]


@dataclass(frozen=True)
class Episode:
    index: int
    keywords: tuple[str, ...]
    turns: tuple[Turn, ...]
    raw: Mapping[str, Any]


@dataclass(frozen=True)
class Played:
    """An episode played through the engine: the record to log, its issues, and its marks."""

    episode: Episode
    record: Record | None  # None when the episode cannot be played at all
    issues: tuple[Issue, ...]
    played_turns: int
    hint_limits: tuple[int, int] | None = None  # (words, characters) when raised for a hint
    extra: Mapping[str, Any] = field(default_factory=dict)
    played_on: int = 0  # turns played after the game was decided (the engine's play_on)

    @property
    def fatal(self) -> tuple[Issue, ...]:
        return tuple(i for i in self.issues if not i.fixable)


# --------------------------------------------------------------------------- reading


def read(text: str) -> tuple[list[Episode], list[Issue]]:
    """Episodes of a file, and the problems that keep an episode from being read at all."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], [Issue(-1, None, IssueKind.MALFORMED, f"not JSON (line {exc.lineno}: {exc.msg})")]
    except RecursionError:
        return [], [Issue(-1, None, IssueKind.MALFORMED, "a JSON value is nested too deeply to read")]
    if not isinstance(data, list):
        return [], [Issue(-1, None, IssueKind.MALFORMED, "the file must hold a JSON list of episodes")]
    episodes, issues = [], []
    for i, raw in enumerate(data):
        ep, problems = _episode(i, raw)
        issues += problems
        if ep is not None:
            episodes.append(ep)
    return episodes, issues


def _episode(i: int, raw: object) -> tuple[Episode | None, list[Issue]]:
    def bad(detail: str, turn: int | None = None) -> tuple[None, list[Issue]]:
        return None, [Issue(i, turn, IssueKind.MALFORMED, detail)]

    if not isinstance(raw, dict) or not isinstance(raw.get("summarized_history"), list):
        return bad("an episode is an object with a 'summarized_history' list")
    history = raw["summarized_history"]
    if not history:
        return bad("the episode has no turns")
    turns: list[Turn] = []
    for pos, t in enumerate(history):
        if not isinstance(t, dict):
            return bad(f"turn entry {pos} is not an object")
        missing = [k for k in TURN_KEYS if k not in t]
        if missing:
            return bad(f"turn entry {pos} lacks {', '.join(missing)}", t.get("turn") if isinstance(t.get("turn"), int) else None)
        number = t["turn"]
        if not isinstance(number, int) or isinstance(number, bool) or number != pos:
            return bad(f"turn entry {pos} is numbered {number!r}; turns must be numbered 0, 1, 2... in order")
        kws = t["keywords"]
        if not isinstance(kws, list) or len(kws) != 4 or not all(isinstance(k, str) and k.strip() for k in kws):
            return bad("keywords must be a list of 4 words", pos)
        if pos and tuple(kws) != turns[0].keywords:
            return bad(f"keywords {kws} differ from turn 0's {list(turns[0].keywords)}", pos)
        hints = t["hints"]
        if not isinstance(hints, list) or len(hints) != 3 or not all(isinstance(h, str) for h in hints):
            return bad("hints must be a list of 3 strings", pos)
        if not isinstance(t["code"], str):
            return bad(f"the code must be a string such as \"421\", not {t['code']!r}", pos)
        turns.append(Turn(pos, tuple(kws), t["code"], tuple(hints), t["guess_bob"], t["guess_eve"], t))
    return Episode(i, turns[0].keywords, tuple(turns), raw), []


def parse_code(code: str) -> tuple[int, int, int] | None:
    """``"421"`` -> (4, 2, 1); None unless three different digits 1-4."""
    digits = tuple(int(c) for c in code if c.isdigit())
    if len(code) != 3 or len(digits) != 3 or len(set(digits)) != 3 or not all(1 <= d <= 4 for d in digits):
        return None
    return digits


def parse_guess(raw: object) -> str | None:
    """A recorded guess as our code id ``"4-2-1"``, or None when it is no valid code."""
    if not isinstance(raw, list) or len(raw) != 3:
        return None
    if not all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 4 for d in raw) or len(set(raw)) != 3:
        return None
    return code_id(raw)


# --------------------------------------------------------------------------- checking and playing


def _hint_issues(ep: Episode, turn: Turn) -> tuple[list[Issue], int, int]:
    """Problems of a turn's hints under our rules, and the (words, chars) it would need."""
    issues: list[Issue] = []
    need_words, need_chars = HINT_MAX_WORDS, HINT_MAX_CHARS
    spec = Text("hints", "", tuple(f"Hint {n}" for n in range(1, 4)), HINT_MAX_WORDS, HINT_MAX_CHARS)
    loose = Text("hints", "", spec.fields, 10**6, 10**6)
    try:
        cleaned = check_text(loose, Action("hints", turn.hints))
    except IllegalAction as exc:
        return [Issue(ep.index, turn.number, IssueKind.MALFORMED, f"hints {list(turn.hints)}: {exc}")], 0, 0
    for pos, hint in enumerate(cleaned, start=1):
        if has_number(hint):
            issues.append(Issue(ep.index, turn.number, IssueKind.HINT_NUMBER,
                                f"hint {pos} {hint!r} contains a number; our hints are words, never numbers or codes"))
        for number, keyword in enumerate(ep.keywords, start=1):
            if reveals_secret(hint, keyword):
                issues.append(Issue(ep.index, turn.number, IssueKind.HINT_NAMES_KEYWORD,
                                    f"hint {pos} {hint!r} names keyword {number} (or a form of it)"))
        try:
            check_text(Text("hints", "", (f"hint {pos}",), HINT_MAX_WORDS, HINT_MAX_CHARS), Action("hints", (hint,)))
        except IllegalAction as exc:
            issues.append(Issue(ep.index, turn.number, IssueKind.HINT_TOO_LONG,
                                f"hint {pos} {hint!r} breaks our rules ({exc})"))
            need_words = max(need_words, len(words_of(hint)))
            need_chars = max(need_chars, len(hint))
    return issues, need_words, need_chars


def deal_of(keywords: Sequence[str], codes: Mapping[int, tuple[int, int, int]]) -> dict[str, Any]:
    """The engine's explicit deal for a benchmark game: the keywords and the
    code of each turn (engine turns count from 1; the file's from 0)."""
    return {"keywords": [list(keywords)], "codes": {f"A:{n + 1}": list(c) for n, c in codes.items()}}


def play(ep: Episode) -> Played:
    """Play an episode through the engine, finding every issue (the lenient policy applied).

    Turns recorded after the game was decided are played on (the engine's ``play_on``) when all of them
    can be and they reach the last turn, as the benchmark's human-play loop plays them; otherwise the game
    ends where it was decided. Hint limits are raised only for hints of turns that are played: a first pass
    finds where the game ends, a second (when needed) plays with the limits of the played turns alone. The
    end does not depend on the hints, only on guesses.
    """
    first = _play(ep, _limits(ep, ep.turns))
    needed = _limits(ep, ep.turns[: first.played_turns])
    ended = first if needed == first.hint_limits else _play(ep, needed)
    if ended.record is None or ended.played_turns >= len(ep.turns):
        return ended
    on = _play(ep, _limits(ep, ep.turns), play_on=True)
    if on.record is None or on.fatal or any(i.kind is IssueKind.ENDS_EARLY for i in on.issues):
        return ended
    return on


def _limits(ep: Episode, turns: Sequence[Turn]) -> tuple[int, int] | None:
    """The (words, characters) the hints of these turns need, or None when our rules' do."""
    words, chars = HINT_MAX_WORDS, HINT_MAX_CHARS
    for t in turns:
        _, w, c = _hint_issues(ep, t)
        words, chars = max(words, w), max(chars, c)
    return None if (words, chars) == (HINT_MAX_WORDS, HINT_MAX_CHARS) else (words, chars)


def every_turn(ep: Episode) -> Record | None:
    """The episode with every recorded turn as a move, for a replay (``eval decrypto-human``): the token limits
    raised so the engine plays on past the benchmark's end, as the paper's humans did; the replay ends the game
    by the benchmark's rules, which is how the benchmark's own replay loop plays this file. None: a turn that
    cannot be played at all (a bad code, a hint naming a keyword)."""
    max_turns = games.get("decrypto").make_config("benchmark").max_turns
    return _play(ep, _limits(ep, ep.turns), tokens=max_turns).record


def _play(ep: Episode, limits: tuple[int, int] | None, *, tokens: int | None = None, play_on: bool = False) -> Played:
    engine = games.get("decrypto")
    issues: list[Issue] = []
    codes: dict[int, tuple[int, int, int]] = {}
    bad_code: dict[int, str] = {}
    for t in ep.turns:
        code = parse_code(t.code)
        if code is None:
            bad_code[t.number] = f"code {t.code!r} is not three different digits from 1 to 4"
        elif code in codes.values():
            first = next(n for n, c in codes.items() if c == code)
            bad_code[t.number] = f"code {t.code!r} repeats turn {first}'s; the rules never deal a code twice"
        else:
            codes[t.number] = code
    max_turns = engine.make_config("benchmark").max_turns
    deal = deal_of(ep.keywords, {n: c for n, c in codes.items() if n < max_turns})
    options: dict[str, Any] = {"deal": deal}
    if limits is not None:
        options |= {"hint_max_words": limits[0], "hint_max_chars": limits[1]}
    if tokens is not None:
        options |= {"max_interceptions": tokens, "max_miscommunications": tokens}
    if play_on:
        options |= {"play_on": True}
    try:
        cfg = engine.make_config("benchmark", **options)
        state, _ = engine.new(cfg, SEATS, 0)
    except ConfigError as exc:
        issues.append(Issue(ep.index, None, IssueKind.MALFORMED, f"our engine cannot deal this episode: {exc}"))
        return Played(ep, None, tuple(issues), 0, limits)
    actions: list[tuple[int, Action]] = []
    played = 0
    decided_at: int | None = None  # play_on: turns played when the game was decided
    for t in ep.turns:
        result = engine.result(state)
        decided = getattr(state, "decided", None)
        if decided is not None and decided_at is None:
            decided_at = played
        if result is not None or decided is not None:
            at = decided_at if decided_at is not None else played
            summary = str(result.summary if result is not None else getattr(decided, "summary", ""))
            issues.append(Issue(ep.index, t.number, IssueKind.PAST_END,
                                f"recorded after the game ended at turn {at - 1} (our turn {at}): {summary}"))
            if result is not None:
                continue
        if t.number in bad_code:
            issues.append(Issue(ep.index, t.number, IssueKind.BAD_CODE, bad_code[t.number]))
            return Played(ep, None, tuple(issues), played, limits)
        found, _, _ = _hint_issues(ep, t)
        issues += found
        if any(not i.fixable for i in found):
            return Played(ep, None, tuple(issues), played, limits)
        turn_actions = [(BENCH_ENCODER, Action("hints", t.hints))]
        for seat, raw, who in ((BENCH_DECODER, t.guess_bob, "guess_bob"), (BENCH_INTERCEPTOR, t.guess_eve, "guess_eve")):
            guess = parse_guess(raw)
            if guess is None:
                issues.append(Issue(ep.index, t.number, IssueKind.INVALID_GUESS,
                                    f"{who} {raw!r} is not three different digits from 1 to 4"))
                guess = ABSTAIN
            turn_actions.append((seat, Action("guess", (guess,))))
        try:
            if tuple(getattr(state, "codes", ())[:1]) != (codes[t.number],):
                raise IllegalAction(f"the engine dealt {code_id(state.codes[0])}, not the recorded {t.code}")
            for seat, action in turn_actions:
                state, _ = engine.apply(state, seat, action)
                actions.append((seat, action))
        except IllegalAction as exc:
            issues.append(Issue(ep.index, t.number, IssueKind.MALFORMED, f"our engine refuses this turn: {exc}"))
            return Played(ep, None, tuple(issues), played, limits)
        played += 1
    if engine.result(state) is None:
        issues.append(Issue(ep.index, None, IssueKind.ENDS_EARLY,
                            f"the episode stops after {played} turn(s), before the game ends"))
    record = Record(engine, cfg, SEATS, 0, tuple(actions), None)
    return Played(ep, record, tuple(issues), played, limits, played_on=0 if decided_at is None else played - decided_at)


def content_key(ep: Episode) -> str:
    """A digest of the episode as recorded: the same episode has the same key in any file, at any position."""
    text = json.dumps(ep.raw, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def provenance(p: Played, file: str, digest: str, lenient: bool) -> dict[str, Any]:
    """What is kept with an imported game: where it came from, every mark, and the turns not played."""
    return {
        "format": FORMAT,
        "file": file,
        "sha256": digest,
        "episode": p.episode.index,
        "lenient": lenient,
        "marks": [dict(i.to_json(), policy=POLICY[i.kind]) for i in p.issues if i.fixable],
        "hint_limits": None if p.hint_limits is None else {"words": p.hint_limits[0], "chars": p.hint_limits[1]},
        "played_on": p.played_on,  # turns played after the decision, moves of the game (the engine's play_on)
        "unplayed_turns": [dict(t.raw) for t in p.episode.turns[p.played_turns:]],
        "episode_keys": sorted(k for k in p.episode.raw if k != "summarized_history"),
    }
