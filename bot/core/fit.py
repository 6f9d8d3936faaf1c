"""Fitting text into a platform's limits without losing its meaning (shared by every adapter).

Platforms cap labels (Slack buttons 75 characters, Discord buttons 80, select options 100)
and messages (Discord 2,000, a Slack section 3,000). Cutting the end off loses what
matters most: the " (2)" that tells two same-named players apart, or the last candidates
of a long run-off. So labels are shortened from the middle and long texts are split into
several parts at line breaks.
"""

from __future__ import annotations

import re

ELLIPSIS = "…"
# A disambiguating tail such as " (2)" or " [AI]": always kept whole.
_SUFFIX = re.compile(r"\s*[(\[][^()\[\]]{1,12}[)\]]\s*$")


def fit_label(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, shortened from the middle.

    The end survives (a disambiguating suffix like " (2)" whole, and a third of the room
    otherwise), so labels that differ only at the end still differ.
    """
    if limit < 1:
        raise ValueError("limit must be positive")
    if len(text) <= limit:
        return text
    if limit < 3:
        return text[:limit]
    room = limit - len(ELLIPSIS)
    suffix = _SUFFIX.search(text)
    tail = max(len(suffix.group()) if suffix else 0, room // 3)
    tail = min(tail, room - 1)
    return text[: room - tail] + ELLIPSIS + text[len(text) - tail :]


def split_text(text: str, limit: int) -> list[str]:
    """``text`` as parts of at most ``limit`` characters, cut at line breaks where possible,
    else at a space, else hard; nothing is dropped (only the line break at a cut)."""
    if limit < 2:
        raise ValueError("limit must be at least 2")
    out: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = rest.rfind("\n", 0, limit + 1)
        if cut <= 0:
            cut = rest.rfind(" ", 0, limit + 1)
        if cut <= 0:
            cut = limit
            # Never part a backslash from the character it escapes.
            if rest[cut - 1] == "\\":
                cut -= 1
        out.append(rest[:cut])
        rest = rest[cut:]
        if rest[:1] in ("\n", " "):
            rest = rest[1:]
    if rest or not out:
        out.append(rest)
    return out
