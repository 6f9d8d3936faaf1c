"""The Moby Thesaurus as the secret-synonym baseline reads it: entries both ways, in the file's order."""

from __future__ import annotations

from pathlib import Path

from models.eval.thesaurus import Thesaurus, moby_thesaurus


def test_a_word_is_found_in_its_own_entry_and_in_the_entries_that_list_it(tmp_path: Path) -> None:
    f = tmp_path / "words.txt"
    f.write_text("sofa,couch,divan,settee\nchesterfield,sofa,overcoat\ncouch,bed,sofa\n", encoding="utf-8")
    th = Thesaurus(f)
    # Its own entry first, then the roots listing it; "couch" is in both and comes once.
    assert th.related("Sofa") == ["couch", "divan", "settee", "chesterfield"]
    assert th.related("divan") == ["sofa"]
    assert th.related("ottoman") == []


def test_the_packaged_thesaurus_is_moby() -> None:
    th = moby_thesaurus()
    assert len(th.entries) > 30_000
    assert {"divan", "couch", "davenport"} <= set(th.related("sofa"))
