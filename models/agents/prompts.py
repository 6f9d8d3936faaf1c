"""What each seat is told: the prompt templates and their filling from the seat's Observation only.

Templates are the TOML files in ``models/agents/prompts/`` (one per game and role; a
researcher's folder may override some). A prompt can never hold what the engine does
not show that seat, because it is filled from ``Observation.view`` alone. The order
follows the papers: rules, role, summary of earlier turns, this turn's information,
the request. Seats are called "Player k" (seat k-1), the engines' own neutral names.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from games.base import ActionSpec, Choice, Observation, Option, words_of
from models.agents.answers import answer_format
from models.types import Message


def example_overlaps(table: Mapping[str, str], user: str) -> bool:
    """True when this turn names one of the worked example's own words (``example_words``: its
    card, secret, keywords, answer). The example could then hint or mislead, so it is left out."""
    here = set(words_of(user))
    return any(w in here for w in words_of(table.get("example_words", "")))


def player_name(seat: int) -> str:
    return f"Player {seat + 1}"


class PromptBook:
    """The templates, from the bundled folder or a researcher's folder that overrides some of them."""

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = Path(folder).expanduser() if folder else None
        self._cache: dict[str, dict[str, str]] = {}

    def table(self, name: str) -> dict[str, str]:
        if name not in self._cache:
            custom = self.folder / f"{name}.toml" if self.folder else None
            if custom is not None and custom.is_file():
                text = custom.read_text(encoding="utf-8")
            else:
                text = resources.files("models.agents").joinpath("prompts", f"{name}.toml").read_text(encoding="utf-8")
            self._cache[name] = {k: v for k, v in tomllib.loads(text).items() if isinstance(v, str)}
        return self._cache[name]

    def fill(self, name: str, key: str, values: Mapping[str, object]) -> str:
        try:
            return string.Template(self.table(name)[key]).substitute({k: str(v) for k, v in values.items()})
        except KeyError as exc:
            raise ValueError(f"prompt template {name}.toml [{key}] needs a value for {exc}") from exc



# --------------------------------------------------------------------------- what each seat is told


@dataclass(frozen=True, slots=True)
class Prompt:
    template: str  # file name without .toml
    values: Mapping[str, object]
    forbidden: tuple[str, ...] = ()  # the seat's own secret words, refused in its free text


def _lines(items: Sequence[str], empty: str = "(none yet)") -> str:
    return "\n".join(items) if items else empty


def _decrypto(obs: Observation, spec: ActionSpec) -> Prompt:
    v = obs.view
    bench = v["variant"] == "benchmark"
    word = "Turn" if bench else "Round"
    summary: list[str] = []
    for t in v["turns"]:
        team = "" if bench else f" (Team {t['team']})"
        summary += [
            f"{word} {t['round']} summary{team}:",
            f"Code: {t['code']}",
            f"Hints: {', '.join(t['hints'])}",
            f"Decoder guess: {t['decoder_guess']}",
            f"Interceptor guess: {t['interceptor_guess'] or 'none'}",
            "",
        ]

    def history(h: Mapping[str, list[str]], title: str) -> list[str]:
        return [title, *(f"Keyword {d}: {', '.join(h.get(str(d), []))}" for d in range(1, 5))]

    if bench:
        summary += history(v["hint_history"], "Hint history:")
        summary.append(f"Code history: {', '.join(v['code_history']) or 'none'}")
        tokens = (
            f"{word} {v['round']}: {v['tokens']['miscommunications']} miscommunications, "
            f"{v['tokens']['interceptions']} interceptions so far."
        )
    else:
        for team in ("A", "B"):
            summary += history(v["hint_history"][team], f"Team {team} hint history:")
            summary.append(f"Team {team} code history: {', '.join(v['code_history'][team]) or 'none'}")
        tokens = f"{word} {v['round']}: " + "; ".join(
            f"Team {t}: {v['tokens'][t]['miscommunications']} miscommunications, {v['tokens'][t]['interceptions']} interceptions"
            for t in ("A", "B")
        ) + "."
    keywords = v["keywords"]
    values: dict[str, object] = {
        "max_rounds": v["max_rounds"],
        "summary": "\n".join(summary) if v["turns"] else f"This is the first {word.lower()}.",
        "tokens": tokens,
        "keywords": ", ".join(f"{d}: {w}" for d, w in sorted(keywords.items())) if keywords else "",
    }
    role = v["role"]
    if not bench:
        values["role"] = f"{role.capitalize()} of Team {v['team']} ({player_name(obs.seat)})"
    else:
        values["role"] = role.capitalize()
    forbidden = tuple(keywords.values()) if keywords else ()
    if spec.kind == "hints":
        code = v["code"].split("-")
        values.update(code=v["code"], code_keywords=", ".join(f"{d}: {keywords[d]}" for d in code))
        return Prompt("decrypto_encoder", values, forbidden)
    if spec.kind == "guess":
        current = v["current_hints"]
        values["hints"] = ", ".join(f"{a}: {h}" for a, h in zip("abc", current["hints"], strict=False))
        own = keywords is not None and current["team"] == v["team"]
        if not own:
            values["role"] = "Interceptor" if bench else f"Decoder of Team {v['team']}, intercepting Team {current['team']}"
        return Prompt("decrypto_decoder" if own else "decrypto_interceptor", values)
    if spec.kind == "keywords":
        values["other"] = "B" if v["team"] == "A" else "A"
        return Prompt("decrypto_tiebreak", values, forbidden)
    raise ValueError(f"no Decrypto prompt for {spec.kind!r}")


def _spy(obs: Observation, spec: ActionSpec) -> Prompt:
    v = obs.view
    names = [player_name(s) for s in v["living"]]
    said: list[str] = []
    for d in v["descriptions"]:
        said.append(f"Round {d['round']}, {player_name(d['seat'])}: {d['text']}")
    out = [f"{player_name(e['seat'])} was voted out in round {e['round']} and was a {e['role'].replace('_', ' ')}." for e in v["eliminated"]]
    word = v["my_word"]
    white = v["has_mr_white"]
    values: dict[str, object] = {
        "seats": v["seats"],
        "spies": v["spies"],
        "white": " and one Mr. White, who gets no word at all and knows it" if white else "",
        "white_out": " and Mr. White" if white else "",
        "player": player_name(obs.seat),
        "word": f"Your word is {word!r}." if word else "You are Mr. White: you have no word. Blend in and work out the villagers' word.",
        "round": v["round"],
        "living": ", ".join(names),
        "eliminated": " ".join(out),
        "descriptions": _lines(said),
        "max_words": getattr(spec, "max_words", 0),
    }
    forbidden = (word,) if word else ()
    name = {"describe": "spy_describe", "vote": "spy_vote", "guess": "spy_guess"}.get(spec.kind)
    if name is None:
        raise ValueError(f"no Who-is-Spy prompt for {spec.kind!r}")
    return Prompt(name, values, forbidden)


def _chameleon(obs: Observation, spec: ActionSpec) -> Prompt:
    v = obs.view
    clues = [f"{player_name(c['seat'])}: {c['clue']}" for c in v["clues"]]
    secret = v["secret"]
    values: dict[str, object] = {
        "players": v["players"],
        "player": player_name(obs.seat),
        "category": v["category"],
        "card": ", ".join(v["card"]),
        "secret_line": (
            "You are the chameleon: you do not know the secret word. Blend in."
            if v["is_chameleon"]
            else f"Secret word: {secret}"
        ),
        "clues": _lines(clues),
    }
    name = {"clue": "chameleon_clue", "vote": "chameleon_vote", "guess": "chameleon_guess"}.get(spec.kind)
    if name is None:
        raise ValueError(f"no Chameleon prompt for {spec.kind!r}")
    forbidden = (secret,) if secret and not v["is_chameleon"] else ()
    return Prompt(name, values, forbidden)


RENDERERS: dict[str, Callable[[Observation, ActionSpec], Prompt]] = {
    "decrypto": _decrypto,
    "spy": _spy,
    "chameleon": _chameleon,
}


def rules_key(obs: Observation) -> str:
    return str(obs.view.get("variant") or "classic")


def build_messages(
    book: PromptBook,
    obs: Observation,
    spec: ActionSpec,
    labelled: Mapping[str, Option],
    *,
    feedback: str | None = None,
    examples: bool = True,
) -> tuple[tuple[Message, ...], Prompt]:
    """The chat for this turn (options shown with their labels) and what it was filled from."""
    render = RENDERERS.get(obs.game)
    if render is None:
        raise ValueError(f"the LLM agent has no prompts for the game {obs.game!r}")
    prompt = render(obs, spec)
    values = dict(prompt.values)
    if isinstance(spec, Choice):
        values["options"] = "\n".join(f"{k}) {o.label}" for k, o in labelled.items())
        values["labels"] = ", ".join(labelled)
    else:
        values["format"] = answer_format(spec)
    rules_table = f"{obs.game}_rules"
    rules = book.table(rules_table).get(rules_key(obs)) or next(iter(book.table(rules_table).values()))
    values["rules"] = string.Template(rules).substitute({k: str(x) for k, x in values.items()})
    system = book.fill(prompt.template, "system", values)
    user = book.fill(prompt.template, "user", values)
    if feedback:
        user += "\n" + book.fill("retry", "refused", {"reason": feedback})
    table = book.table(prompt.template)
    example: tuple[Message, ...] = ()
    if examples and "example_user" in table and "example_assistant" in table and not example_overlaps(table, user):
        # Fixed text, so it stays inside the cached prompt prefix of every turn.
        example = (Message("user", table["example_user"]), Message("assistant", table["example_assistant"]))
    return (Message("system", system), *example, Message("user", user)), prompt


__all__ = ["Prompt", "PromptBook", "RENDERERS", "build_messages", "example_overlaps", "player_name", "rules_key"]
