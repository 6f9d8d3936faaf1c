"""The intake every adapter shares and the label/message fitting
items 19-20: one set of rules, whatever the platform."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from bot.core import codec, intake
from bot.core.fit import fit_label, split_text
from bot.core.messages import CommandKind, Place, UserRef

ORIGIN = intake.Origin(UserRef("x", "u1", "Ann"), Place("x", "c1"), "x:T1", is_admin=True, inbound_id="in-1")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rounds=3 tie=runoff blank=yes", {"rounds": 3, "tie": "runoff", "blank": True}),
        ("a=on b=OFF c=true d=no", {"a": True, "b": False, "c": True, "d": False}),
        ("t=0.5 n=-2 e=1e3", {"t": 0.5, "n": -2, "e": 1000.0}),
        ('name="two words" code="3"', {"name": "two words", "code": "3"}),
        ("max-rounds=4, tie = runoff; x =y", {"max_rounds": 4, "tie": "runoff", "x": "y"}),
        ("", {}),
    ],
)
def test_options_follow_one_set_of_rules(text: str, expected: dict[str, object]) -> None:
    assert intake.parse_options(text) == expected
    # Words split by an adapter (Slack, the console) read exactly the same.
    assert intake.parse_options(intake.tokens(text.replace(" = ", "=").replace(" =", "="))) == expected


@pytest.mark.parametrize(
    ("text", "named"),
    [("rounds=3 oops", "oops"), ("x=1e999", "1e999"), ("a=1 a=2", "a"), ("k=", "k="), ('k="open', "quote")],
)
def test_a_bad_token_is_named(text: str, named: str) -> None:
    with pytest.raises(intake.IntakeError, match=named):
        intake.parse_options(text)


def test_since_is_a_date_in_utc_unless_it_says_otherwise() -> None:
    assert intake.parse_since("2025-01-31") == datetime(2025, 1, 31, tzinfo=UTC)
    plus2 = intake.parse_since("2025-01-31T10:00+02:00")
    assert plus2 == datetime(2025, 1, 31, 10, tzinfo=timezone(timedelta(hours=2)))
    assert intake.parse_since(None) is None and intake.parse_since(" ") is None
    with pytest.raises(intake.IntakeError, match="yesterday"):
        intake.parse_since("yesterday")


def test_commands_from_codec_ids() -> None:
    choice = intake.command_for(codec.decode(codec.action_id(7, 2, "vote", "3")), ORIGIN, agent="random")
    assert choice is not None and choice.kind is CommandKind.ACT
    assert dict(choice.args) == {"game_id": 7, "seat": 2, "kind": "vote", "value": ["3"]}
    assert (choice.tenant, choice.is_admin, choice.inbound_id) == ("x:T1", True, "in-1")
    form = codec.decode(codec.action_id(7, 2, "clue"))
    assert intake.command_for(form, ORIGIN, agent="random") is None  # an opener: the adapter opens it
    sent = intake.command_for(form, ORIGIN, agent="random", values=["word"])
    assert sent is not None and sent.args["value"] == ["word"]
    ai = intake.command_for(codec.decode(codec.lobby_id(7, codec.LobbyVerb.AI)), ORIGIN, agent="embed:minilm")
    assert ai is not None and ai.kind is CommandKind.ADD_AI and dict(ai.args) == {"game_id": 7, "agent": "embed:minilm", "count": 1}
    show = intake.command_for(codec.decode(codec.show_id(7)), ORIGIN, agent="random")
    assert show is not None and show.kind is CommandKind.SHOW


def test_the_default_agent_is_the_services_on_every_platform() -> None:
    assert intake.default_agent(["llm:default", "random"], "llm:default") == "llm:default"
    # A configured default the operator does not offer is never what a click adds.
    assert intake.default_agent(["embed:minilm", "random"], "llm:default") == "embed:minilm"


def test_labels_shorten_from_the_middle_and_keep_the_suffix() -> None:
    long = "Bartholomew-Maximilian " * 5
    one, two = fit_label(long + "(1)", 75), fit_label(long + "(2)", 75)
    assert len(one) == len(two) == 75 and one != two
    assert one.endswith("(1)") and two.endswith("(2)") and "…" in one
    assert fit_label("short (2)", 75) == "short (2)"
    assert len(fit_label("x" * 200, 80)) == 80 and len(fit_label("y" * 200, 100)) == 100


def test_long_text_is_split_at_lines_and_loses_nothing() -> None:
    lines = [f"{i}) candidate number {i} with a long name" for i in range(120)]
    parts = split_text("\n".join(lines), 2000)
    assert len(parts) > 1 and all(len(p) <= 2000 for p in parts)
    assert "\n".join(parts).splitlines() == lines  # every line whole, in order, the last included
    assert split_text("a" * 4500, 2000) == ["a" * 2000, "a" * 2000, "a" * 500]


def test_a_dm_reaches_its_platforms_tables_only() -> None:
    """A Discord DM names no guild: it reaches Discord tables (the seat decides), nothing else."""
    dm = intake.Origin(UserRef("discord", "9"), Place("discord", "D1"), intake.dm_tenant("discord")).command(CommandKind.SHOW)
    assert intake.reaches(dm, "discord:123") and not intake.reaches(dm, "slack:T1") and not intake.reaches(dm, "console")
    guild = intake.Origin(UserRef("discord", "9"), Place("discord", "C1"), "discord:123").command(CommandKind.SHOW)
    assert intake.reaches(guild, "discord:123") and not intake.reaches(guild, "discord:456")


def test_operator_options_take_json_values_and_name_a_bad_pair() -> None:
    from bot.core.intake import IntakeError, operator_options

    got = operator_options(["seats=5", 'deal={"secret": "Bee"}', "name=nightly run", "blank=true"])
    assert got == {"seats": 5, "deal": {"secret": "Bee"}, "name": "nightly run", "blank": True}
    with pytest.raises(IntakeError, match="'seats5' must be KEY=VALUE"):
        operator_options(["seats5"])
