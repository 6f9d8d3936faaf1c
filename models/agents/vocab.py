"""The hint vocabulary, now in ``models.embeddings``; kept here for the SNEAK evaluation's imports until it moves."""

from __future__ import annotations

from models.embeddings import MAX_CHARS, MAX_WORDS, VOCAB_FILE, build_vocab, deck_words, default_vocab, parse_vocab

__all__ = ["MAX_CHARS", "MAX_WORDS", "VOCAB_FILE", "build_vocab", "deck_words", "default_vocab", "parse_vocab"]
