"""A whole Chameleon game at the console with every logger at DEBUG: the secret word reaches the screen
only in the lines for the player who may see it until the round reveals it, and never the log file."""

from __future__ import annotations

import re
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
    # Stops at the game's result: the clue report after it waits for its model (nothing checked here).
    for i in range(100):
        k = child.expect([r"Ann> ", r"Winners: |Game #\d+ is over"])
        screen.append(child.before)
        if k == 1:
            break
        child.sendline("1" if re.search(r"\s+1\) ", child.before) else f"gizmo{i}")
    else:
        raise AssertionError("the game did not end")
    child.close(force=True)
    text = "".join(screen).replace("\r\n", "\n")
    secrets = set(re.findall(r"The secret word is (\w+)\.", text)) | set(re.findall(r"the secret was (\w+)", text))
    assert secrets, text[-2000:]
    card = next(iter(re.findall(r"the card reads ([^.]+)\.", text))).split(", ")
    # A prompt whose options are the whole card (the Chameleon's last guess, when Ann is the Chameleon and
    # is caught) lists the secret among the others, as the public card does; it says nothing of which one.
    card_options = set()
    for part in screen:
        options = re.findall(r"^\s+\d+\) (.+?)\s*$", part.replace("\r\n", "\n"), re.M)
        if sum(1 for o in options if o in card) >= len(card) - 1:
            card_options |= {ln for ln in part.replace("\r\n", "\n").splitlines() if re.match(r"^\s+\d+\) ", ln)}
    for word in secrets:
        told = re.search(rf"the secret was {word}\b", text)
        before = text[: told.start()] if told else text
        # The word is on the public card among the others; what must stay private is which one it is.
        shared = [ln for ln in before.splitlines() if re.search(rf"\b{word}\b", ln, re.I) and "[only you see]" not in ln
                  and not ln.startswith("Round ") and ln not in card_options]
        assert not shared, shared

    def card_line(line: str) -> bool:  # the whole public card, in which the secret hides among the others
        return sum(1 for w in card if w in line) >= len(card) - 1

    log = (tmp_path / ".hushtable" / "logs" / "console.log").read_text(encoding="utf-8")
    for word in secrets:
        leaked = [ln for ln in log.splitlines() if re.search(rf"\b{re.escape(word)}\b", ln, re.I)
                  and not card_line(ln)]
        assert not leaked, leaked[:3]


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
