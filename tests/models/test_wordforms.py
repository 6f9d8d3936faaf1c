"""The word-form tables in games/data are what models/wordforms.py builds from the installed packages."""

from __future__ import annotations

from importlib import resources

from models.wordforms import CONFUSABLES, WORDFORMS, build_confusables, build_wordforms


def _shipped(name: str) -> str:
    return resources.files("games").joinpath("data", name).read_text(encoding="utf-8")


def test_the_word_forms_are_rebuilt_exactly() -> None:
    assert build_wordforms() == _shipped(WORDFORMS), "rebuild with: .venv/bin/python -m models.wordforms"


def test_the_confusables_are_rebuilt_exactly() -> None:
    assert build_confusables() == _shipped(CONFUSABLES), "rebuild with: .venv/bin/python -m models.wordforms"


def test_the_tables_hold_what_the_clue_check_relies_on() -> None:
    forms = _shipped(WORDFORMS)
    for line in ("mice mouse", "colour color", "doughnut donut"):
        assert f"\n{line}\n" in forms, line
    assert "\nı i\n" in _shipped(CONFUSABLES)
    innocent = forms.split("@innocent\n", 1)[1].split("@compound\n", 1)[0].split()
    assert "tiny" in innocent and "busy" in innocent and "ashy" not in innocent and "taxman" not in innocent
    compounds = set(forms.split("@compound\n", 1)[1].splitlines())
    assert {"eyelash eye", "catwalk cat", "sunflower sun", "eggplant egg"} <= compounds
    assert not {"carpet car", "carpet pet", "season sea", "season son", "button but", "cartoon car"} & compounds
    # No compound: a three-letter affix in its place (signage, antacid, western, faithful), a short word named only in a
    # gloss's examples (average), a gloss's word that merely opens with it (adoring: adoration).
    assert not {"average age", "signage age", "antacid ant", "western ern", "faithful ful", "adoring ado"} & compounds
