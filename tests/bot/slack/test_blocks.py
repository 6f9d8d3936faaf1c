"""Block Kit rendering stays inside Slack's limits and never lets relayed text ping anyone."""

from __future__ import annotations

from bot.core.messages import Button, Form, Outgoing, Style
from bot.slack.blocks import decode_form, form_modal, form_values, render


def test_mentions_are_escaped_and_bold_converted() -> None:
    r = render(Outgoing("**Spy** said <!channel> & <@U1>", title="t", user_text=True))
    body = r.blocks[1]["text"]["text"]
    assert "<!channel>" not in body and "<@U1>" not in body and "&lt;!channel&gt;" in body
    assert body.startswith("*Spy*") and "<!channel>" not in r.text


def test_many_options_become_one_select_and_many_buttons_split() -> None:
    buttons = tuple(Button(f"g:1:0:vote:{i}", f"P{i}", Style.PRIMARY) for i in range(120))
    sel = render(Outgoing("vote", buttons=buttons, select_id="g:1:0:vote"))
    [actions] = [b for b in sel.blocks if b["type"] == "actions"]
    assert actions["elements"][0]["type"] == "static_select" and len(actions["elements"][0]["options"]) == 100
    plain = render(Outgoing("vote", buttons=buttons[:30]))
    rows = [b for b in plain.blocks if b["type"] == "actions"]
    assert [len(r["elements"]) for r in rows] == [25, 5]


def test_form_round_trips_through_button_and_modal() -> None:
    form = Form("g:3:1:hints", "Hints", ("Hint 1", "Hint 2", "Hint 3"), 30, "one word")
    opener = render(Outgoing("your turn", form=form)).blocks[-1]["elements"][0]
    assert decode_form(opener["action_id"], opener["value"]) == form
    view = form_modal(form, {"c": "D1"})
    assert view["callback_id"] == form.id and len([b for b in view["blocks"] if b["type"] == "input"]) == 3
    state = {"values": {f"f{i}": {"text": {"value": f" w{i} "}} for i in range(3)}}
    assert form_values({**view, "state": state}) == ["w0", "w1", "w2"]


def test_long_text_is_split_into_sections() -> None:
    r = render(Outgoing("line\n" * 1500))
    sections = [b for b in r.blocks if b["type"] == "section"]
    assert len(sections) >= 3 and all(len(b["text"]["text"]) <= 3000 for b in sections)
