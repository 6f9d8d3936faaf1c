"""What each seat is told: the prompt templates and their filling from the seat's Observation only.

Templates are the TOML files in ``models/agents/prompts/`` (one per game and role; a
researcher's folder may override some). A prompt can never hold what the engine does
not show that seat, because it is filled from ``Observation.view`` alone. The order
follows the papers: rules, role, summary of earlier turns, this turn's information,
the request. Seats are called "Player k" (seat k-1), the engines' own neutral names.
Each game's renderer is its agent module's ``prompt`` (``models/agents/games/<game>.py``).
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from games.base import ActionSpec, Choice, Observation, Option, words_of
from models.agents.answers import answer_format
from models.agents.games import game_agent
from models.agents.games.kit import Prompt, player_name
from models.types import Message


def example_overlaps(table: Mapping[str, str], user: str) -> bool:
    """True when this turn names one of the worked example's own words (``example_words``: its
    card, secret, keywords, answer). The example could then hint or mislead, so it is left out."""
    here = set(words_of(user))
    return any(w in here for w in words_of(table.get("example_words", "")))


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
    prompt = game_agent(obs.game).prompt(obs, spec)
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


__all__ = ["Prompt", "PromptBook", "build_messages", "example_overlaps", "player_name", "rules_key"]
