"""Text for Discord: player text made inert for Discord markdown, long messages split.

Everything the bot writes into a Discord message body goes through `contents` (or
`markup` for a one-off line), the one place where text is escaped: display names, clues
and descriptions are player-written, and `[free nitro](https://evil…)` must not become a
masked link, nor `<@&1>` a mention pill, nor `# big` a heading. The core marks its own bold
with ``**``; only those markers survive unescaped.
"""

from __future__ import annotations

import re

from bot.core.fit import fit_label, split_text
from bot.core.messages import Outgoing

DISCORD_TEXT_LIMIT = 2000
BUTTON_LABEL_MAX = 80
OPTION_LABEL_MAX = 100
MODAL_TITLE_MAX = 45
INPUT_LABEL_MAX = 45

# Characters that start markdown, code, spoilers, masked links, or mentions/emoji/timestamps (<...>).
_SPECIAL = re.compile(r"([\\`*_~|\[\]<])")
# Headings, sub-text and quotes only count at the start of a line.
_LINE_START = re.compile(r"^([ \t]*)(#{1,3}[ \t]|-#[ \t]|>)", re.M)


def escape(text: str) -> str:
    """``text`` shown literally by Discord (mentions also need allowed_mentions, set on every send)."""
    text = _SPECIAL.sub(r"\\\1", text)
    return _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), text)


def markup(text: str) -> str:
    """Core text for Discord: everything escaped except the core's own ``**bold**`` markers."""
    return "**".join(escape(part) for part in text.split("**"))


def contents(m: Outgoing, lead: str = "") -> list[str]:
    """The message bodies for ``m`` (with ``lead`` first, e.g. a reply's own text), each
    within Discord's 2,000 characters, split at line breaks: nothing is clipped away."""
    body = f"**{escape(m.title)}**\n{markup(m.text)}" if m.title else markup(m.text)
    if lead:
        body = f"{markup(lead)}\n\n{body}" if body else markup(lead)
    return split_text(body, DISCORD_TEXT_LIMIT) if body else ["\u200b"]  # Discord refuses an empty message


def label(text: str, limit: int = BUTTON_LABEL_MAX) -> str:
    """A component label (plain text, no markdown), shortened from the middle."""
    return fit_label(text, limit) if text else "…"
