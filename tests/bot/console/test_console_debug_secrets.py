"""A whole Chameleon game at the console with every logger at DEBUG: the secret word reaches the screen
only in the lines for the player who may see it until the round reveals it, and never the log file."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from tests.bot.console.test_console_pty import spawn


def test_no_secret_in_the_debug_log_or_on_the_shared_screen_over_a_whole_game(tmp_path: Path) -> None:
    child = spawn(tmp_path, HUSHTABLE_LOG_LEVEL="DEBUG", HUSHTABLE_LOG_DIR=str(tmp_path / "logs"))
    child.expect("Your name")
    child.sendline("Ann")
    child.expect("game> ")
    child.sendline("")
    child.expect(r"type a command\) ")
    child.sendline("play chameleon")
    screen = []
    typed = {"play chameleon"}  # what Ann typed comes back on the screen: her words, not the bot's
    # Stops at the game's result: the clue report after it waits for its model (nothing checked here).
    for i in range(100):
        k = child.expect([r"Ann> ", r"Winners: |Game #\d+ is over"])
        screen.append(child.before)
        if k == 1:
            break
        answer = "1" if re.search(r"\s+1\) ", child.before) else f"gizmo{i}"
        typed.add(answer)
        child.sendline(answer)
    else:
        raise AssertionError("the game did not end")
    child.close(force=True)
    text = "".join(screen).replace("\r\n", "\n")
    rounds = dealt_rounds(tmp_path / "console.db")
    assert rounds, text[-2000:]
    cards = [card for card, _, _ in rounds]
    # A prompt whose options are the whole card (the caught Chameleon's last guess) lists the secret among
    # the others, as the public card does; it says nothing of which one.
    card_options = set()
    for part in screen:
        options = [ln for ln in part.replace("\r\n", "\n").splitlines() if re.match(r"^\s+\d+\) ", ln)]
        if any(lists_card("\n".join(options), card) for card in cards):
            card_options |= set(options)
    for _, secret, chameleon in rounds:
        # The round tells it at its end, or the caught Chameleon names it right ("guesses X: right").
        told = re.search(rf"the secret was {re.escape(secret)}\b|guesses {re.escape(secret)}: right", text)
        before = text[: told.start()] if told else text
        shared = [ln for ln in before.splitlines() if says(ln, secret) and "[only you see]" not in ln
                  and not any(lists_card(ln, c) for c in cards) and ln not in card_options
                  and ln.strip() not in typed
                  # The Chameleon does not know the secret; a clue of theirs that happens to be it tells nothing.
                  and not ln.startswith(f"{chameleon} gives the clue: ")]
        assert not shared, (secret, shared)

    logs = [tmp_path / ".hushtable" / "logs" / "console.log", *(tmp_path / "logs").glob("*.log")]
    # The file is alive at DEBUG over the whole game: every AI move left its line (so the search below reads
    # what a DEBUG log holds, not an empty file).
    debug = [ln for path in logs if path.exists() for ln in path.read_text(encoding="utf-8").splitlines()
             if " DEBUG bot.core.agents: " in ln and " move (" in ln]
    assert len(debug) >= 3, [str(p) for p in logs]
    for path in logs:
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        for _, secret, _ in rounds:
            leaked = [ln for ln in lines if says(ln, secret) and not any(lists_card(ln, c) for c in cards)]
            assert not leaked, leaked[:3]


# Words the console prints in every Chameleon game that are also words of some card (the Reptiles card's
# Chameleon, Furniture's Table, Abstract ideas' Time, Clothing's Tie): taken out of a line before it is
# searched for the secret, so a deal of one of them is no leak by itself.
BOT_PHRASES = re.compile(r"\bthe chameleon\b|^chameleon \(\w+\)|\btable #\d+|\bthe first time\b|"
                         r"\b(?:a|still a) tie between\b", re.I)


def says(line: str, secret: str) -> bool:
    """Whether ``line`` names ``secret`` (a word or a phrase, any case) beyond the console's own words."""
    return re.search(rf"(?<![\w-]){re.escape(secret)}(?![\w-])", BOT_PHRASES.sub(" ", line), re.I) is not None


def lists_card(text: str, card: list[str]) -> bool:
    """The whole public card, in which the secret hides among the others."""
    return sum(1 for w in card if w in text) >= len(card) - 1


def dealt_rounds(db: Path) -> list[tuple[list[str], str, str]]:
    """Each round's card, secret and Chameleon (by name), from the game log: the truth, whatever the screen
    showed (a secret of several words, a round in which Ann was the Chameleon and never saw it)."""
    with sqlite3.connect(db) as con:
        names = dict(con.execute("select seat, display_name from seats"))
        rows = con.execute("select kind, data, audience from events where kind in ('round_start', 'role') "
                           "order by seq").fetchall()
    rounds: list[tuple[list[str], str, str]] = []
    card: list[str] = []
    secret, chameleon = "", ""
    for kind, data, audience in rows:
        d = json.loads(data)
        if kind == "round_start":
            if secret:
                rounds.append((card, secret, chameleon))
            card, secret, chameleon = list(d["card"]), "", ""
        elif d["secret"] is not None:
            secret = d["secret"]
        else:
            chameleon = names[json.loads(audience)[0]]
    if secret:
        rounds.append((card, secret, chameleon))
    return rounds


def test_the_console_log_file_takes_the_log_level_and_the_masking_step(tmp_path: Path) -> None:
    """Before, the console's file ignored HUSHTABLE_LOG_LEVEL (root stayed at WARNING) and had no masking."""
    import logging

    from bot.console.app import keep_logs_off_screen
    from bot.settings import Settings

    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    for h in saved:
        root.removeHandler(h)
    try:
        settings = Settings(_env_file=None, log_level="DEBUG", openai_api_key="sk-live-0123456789abcdef")  # type: ignore[call-arg]
        path = keep_logs_off_screen(tmp_path / "logs", settings)
        logging.getLogger("bot.core.turns").debug("a quiet line with key %s", "sk-live-0123456789abcdef")
        for h in root.handlers:
            h.flush()
        text = path.read_text(encoding="utf-8")
        assert "DEBUG bot.core.turns: a quiet line with key" in text and "sk-live-0123456789abcdef" not in text
    finally:
        for h in list(root.handlers):
            root.removeHandler(h)
            h.close()
        for h in saved:
            root.addHandler(h)
        root.setLevel(level)
        logging.captureWarnings(False)
