"""The one masking step: passwords in URLs and connection strings, configured credentials and a game's
held secret words never reach a log line, exception texts and stacks included."""

from __future__ import annotations

import io
import logging

import pytest

from bot.ops.logs import JsonLines, Masked
from bot.ops.masking import Masker, mask_passwords


@pytest.mark.parametrize(("text", "hidden"), [
    ("postgresql+asyncpg://hush:s3cretpw@db.local:5432/hush", "s3cretpw"),
    ("connect to hush:s3cretpw@127.0.0.1:5432/hush failed", "s3cretpw"),
    ("postgresql://hush@db/hush?sslmode=disable&password=s3cretpw", "s3cretpw"),
    ("host=db user=hush password=s3cretpw dbname=hush", "s3cretpw"),
    ("http://bob:hunter2pw@10.0.0.5:8100/v1/generate", "hunter2pw"),
])
def test_passwords_are_masked_wherever_they_appear(text: str, hidden: str) -> None:
    masked = mask_passwords(text)
    assert hidden not in masked and "***" in masked, masked


def test_ordinary_text_is_left_alone() -> None:
    for text in ("seat 3: clue 'ocean' at 12:30", "discord:1234 joined", "a@b", "ratio 3:2 @ noon"):
        assert mask_passwords(text) == text


def _logger(masker: Masker, fmt: logging.Formatter) -> tuple[logging.Logger, io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(Masked(fmt, masker))
    log = logging.getLogger(f"test.masking.{id(out)}")
    log.propagate = False
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    return log, out


@pytest.mark.parametrize("fmt", [logging.Formatter("%(levelname)s %(message)s"), JsonLines()])
def test_exception_texts_are_masked_with_the_message(fmt: logging.Formatter) -> None:
    masker = Masker()
    masker.add_credentials(["xoxb-0123456789-secret"])
    masker.hold("game 7", ["Marmalade"])
    log, out = _logger(masker, fmt)
    try:
        raise ValueError("library said: 'marmalade' is not a token xoxb-0123456789-secret "
                         "(postgresql://u:dbpass99@h/db)")
    except ValueError:
        log.exception("a move failed for MARMALADE")
    text = out.getvalue()
    assert "ValueError" in text and "Traceback" in text
    for secret in ("marmalade", "Marmalade", "MARMALADE", "xoxb-0123456789-secret", "dbpass99"):
        assert secret not in text, text
    masker.release("game 7")
    log.info("marmalade is a word again once the game is over")
    assert "marmalade is a word again once the game is over" in out.getvalue().splitlines()[-1]


def test_a_secret_inside_a_longer_word_is_not_masked() -> None:
    masker = Masker()
    masker.hold(1, ["cat"])
    assert masker.mask("the category is cat.") == "the category is [redacted]."


def test_a_running_tables_secret_words_are_masked_in_log_lines_until_it_ends() -> None:
    import gc

    import games
    from bot.core.messages import Place
    from bot.core.tables import Table
    from bot.ops.masking import MASKER

    engine = games.get("decrypto")
    cfg = engine.make_config(None)
    state, _ = engine.new(cfg, engine.seat_range(cfg)[0], 3)
    words = [s.value for s in engine.secrets(state) if not s.among]
    assert words
    table = Table(1, engine, cfg, 3, [], state, Place("console", "here"), "console", 0.0)
    line = f"discord.http: 400 Bad Request (DM text: 'your keywords are {', '.join(words)}')"
    masked = MASKER.mask(line)
    assert not any(w in masked for w in words), masked
    table.over = True
    assert MASKER.mask(line) == line
    table.over = False
    assert MASKER.mask(line) != line
    del table
    gc.collect()
    assert MASKER.mask(line) == line  # a table dropped from memory holds nothing


@pytest.mark.parametrize(("secret", "said"), [("berry", "berries"), ("bake", "baking"), ("stop", "stopped"),
                                               ("mouse", "mice"), ("apple", "Apple's"), ("fox", "FOXES"), ("leaf", "leaves")])
def test_a_held_secret_is_masked_in_its_inflected_forms(secret: str, said: str) -> None:
    masker = Masker()
    masker.hold(1, [secret])
    masked = masker.mask(f"DM failed: 'the word is near {said}.'")
    assert masked.startswith("DM failed: 'the word is near [redacted]") and said not in masked, masked
    assert masker.mask("the category is catering") == "the category is catering"


def test_the_spymasters_key_is_masked_by_its_board_words() -> None:
    import games
    from bot.core.messages import Place
    from bot.core.tables import Table
    from bot.ops.masking import MASKER

    engine = games.get("spymasters")
    cfg = engine.make_config(None)
    state, _ = engine.new(cfg, engine.seat_range(cfg)[0], 3)
    (key,) = engine.secrets(state)
    board = list(key.among)
    table = Table(2, engine, cfg, 3, [], state, Place("console", "here"), "console", 0.0)
    colours = key.value.split()
    line = "slack_sdk: DM failed: " + ", ".join(f"{w}={c}" for w, c in zip(board, colours, strict=True))
    masked = MASKER.mask(line)
    assert not any(w in masked for w in board), masked
    table.over = True
    assert MASKER.mask(line) == line


def test_the_masker_says_who_holds_secrets() -> None:
    m = Masker()
    a, b = object(), object()
    m.hold(a, ["zqmaskx"])
    m.hold(b, ["zqmasky"])
    assert m.owners() == {a, b}
    m.release(a)
    assert m.owners() == {b} and m.mask("zqmaskx zqmasky") == "zqmaskx [redacted]"
