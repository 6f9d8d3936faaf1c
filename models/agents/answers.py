"""Strict parsing of a model's answers: the ``ANSWER: text`` format for free text, one label for a choice.

Free text must come as exactly one ``ANSWER:`` line with the right number of fields
(separated by `` | ``), no alternatives ("x, y", "x or y"), no negations, within the
spec's limits and without the seat's own secret words. A refusal is a ``ValueError``
whose message the model can act on (it is sent back to it when it is re-asked).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from games.base import Option, Text, contains_word, normalize, words_of
from models.types import Message

ANSWER_RE = re.compile(r"^\W*answer\s*:\s*(.*?)\s*$", re.IGNORECASE | re.MULTILINE)
FIELD_SEP = "|"


def answer_format(spec: Text) -> str:
    return "ANSWER: " + f" {FIELD_SEP} ".join(f"<{f.lower()}>" for f in spec.fields)


_STRIP = " \t\"'`*_[](){}<>.!?:"
_ALTERNATIVES = re.compile(r"[,;/]|\bor\b", re.IGNORECASE)


def parse_text_answer(raw: str, spec: Text, forbidden: Sequence[str] = ()) -> tuple[str, ...]:
    """The fields of a free-text answer, or ValueError with a reason the model can act on."""
    found = [m.group(1) for m in ANSWER_RE.finditer(raw)]
    found = [f for f in found if f.strip(_STRIP)]
    if not found:
        raise ValueError('there is no line starting with "ANSWER:".')
    if len(set(found)) > 1:
        raise ValueError('give exactly one "ANSWER:" line.')
    parts = [p.strip().strip(_STRIP).strip() for p in found[0].split(FIELD_SEP)]
    n = len(spec.fields)
    if len(parts) != n:
        raise ValueError(f"give exactly {n} answer{'s' if n > 1 else ''} separated by '{FIELD_SEP}', not {len(parts)}.")
    for name, part in zip(spec.fields, parts, strict=False):
        if not words_of(part):
            raise ValueError(f"{name}: the answer is empty.")
        if normalize(part) == normalize(name) or re.fullmatch(r"\s*<[^>]*>\s*", found[0].split(FIELD_SEP)[0]):
            # Small models copy the format line itself: "ANSWER: <clue>".
            raise ValueError(f"{name}: write your own answer in place of <{name.lower()}>.")
        if spec.max_words <= 3:
            # Word answers must be one answer: "not X, Y" or "X or Y" counts as none.
            if _ALTERNATIVES.search(part) or words_of(part)[0] in ("not", "no"):
                raise ValueError(f"{name}: give one answer, not several or a negation ({part!r}).")
        if len(words_of(part)) > spec.max_words:
            raise ValueError(f"{name}: use at most {spec.max_words} word{'s' if spec.max_words > 1 else ''}.")
        if len(part) > spec.max_chars:
            raise ValueError(f"{name}: keep it under {spec.max_chars} characters.")
        for word in forbidden:
            if word and contains_word(part, word):
                raise ValueError(f"{name}: do not use the secret word {word!r}.")
    return tuple(parts)


def refuse_copied_instructions(texts: Sequence[str], chat: Sequence[Message]) -> None:
    """Small models echo the instructions ("use at most 12 words") as their description.
    Three words or more found verbatim in what we said to the model are refused."""
    said = " " + " ".join(normalize(m.content) for m in chat if m.role != "assistant") + " "
    for text in texts:
        key = normalize(text)
        if len(key.split()) >= 3 and f" {key} " in said:
            raise ValueError("write your own answer, not words copied from these instructions.")


def parse_choice_answer(raw: str, labelled: Mapping[str, Option]) -> str:
    """The option id of a generated choice: one label letter, or one option's exact text."""
    found = [m.group(1) for m in ANSWER_RE.finditer(raw)] or [raw.strip()]
    if len(set(found)) > 1:
        raise ValueError('give exactly one "ANSWER:" line.')
    value = found[0].strip().strip(_STRIP).strip()
    if value in labelled:
        return labelled[value].id
    key = normalize(value)
    hits = [o.id for o in labelled.values() if key and key in (normalize(o.label), normalize(o.id))]
    if len(hits) == 1:
        return hits[0]
    raise ValueError(f"answer with exactly one of the letters {', '.join(labelled)}, not {value!r}.")



__all__ = ["ANSWER_RE", "FIELD_SEP", "answer_format", "parse_choice_answer", "parse_text_answer", "refuse_copied_instructions"]
