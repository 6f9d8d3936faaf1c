"""Pure text of the table service: prompts, the lobby card, event digests and result lines.

No I/O and no state: each function maps data to an `Outgoing` or a string, so every wording
a player reads is found here. Engine text names seats through ``games.labels`` tokens;
`label` fills them with the table's display names in one pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.core import codec
from bot.core.messages import Button, Form, Outgoing, Style
from bot.core.tables import Lobby, Table
from games.base import Choice, Event, Seat, Text
from games.labels import fill_labels, human_list
from storage.tables import SeatKind

MAX_SELECT_BUTTONS = 5  # more options than this render as a select menu


def label(text: str, names: Sequence[str]) -> str:
    """Engine text with each seat token replaced by that seat's display name (one pass)."""
    return fill_labels(text, names)


def prompt_message(table: Table, seat: Seat, spec: Choice | Text, *, text_replies: bool) -> Outgoing:
    """The private prompt for a seat that owes a move: buttons or a select for a choice, a form for
    text. Limits come from the engine's spec alone; the reply hint only where a reply is read."""
    names = table.names
    board = table.engine.board(table.state, seat)
    if isinstance(spec, Choice):
        buttons = tuple(Button(codec.action_id(table.game_id, seat, spec.kind, o.id), label(o.label, names),
                               Style.PRIMARY) for o in spec.options)
        select = codec.action_id(table.game_id, seat, spec.kind) if len(buttons) > MAX_SELECT_BUTTONS else None
        return Outgoing(label(spec.prompt, names), buttons=buttons, select_id=select, title=table.title,
                        board=board)
    words = "one word" if spec.max_words == 1 else f"up to {spec.max_words} words"
    form = Form(codec.action_id(table.game_id, seat, spec.kind), spec.kind.capitalize(), spec.fields,
                spec.max_chars, hint=f"{words}, at most {spec.max_chars} characters")
    hint = ""
    if text_replies:
        hint = (f" Or reply here with {len(spec.fields)} answers separated by ';' ({'; '.join(spec.fields)})."
                if len(spec.fields) > 1 else " Or reply here with your answer.")
    return Outgoing(label(spec.prompt, names) + hint, form=form, title=table.title, board=board)


def events_message(table: Table, events: Sequence[Event]) -> Outgoing:
    # Engine.text fills its own seat tokens with the names given.
    return Outgoing("\n".join(table.engine.text(e, table.names) for e in events),
                    title=table.title, user_text=True)


def private_digest(table: Table, seat: Seat, *, history: bool = False) -> Outgoing:
    """What a seat privately knows (its secrets), and with ``history`` the public story so far."""
    obs = table.engine.observe(table.state, seat)
    private = [e for e in obs.events if not e.audience.is_public]
    text = "\n".join(table.engine.text(e, table.names) for e in private) \
        or "You hold no secrets in this game."
    out = f"Your secrets in game #{table.game_id}:\n{text}"
    if history:
        public = [e for e in obs.events if e.audience.is_public]
        if public:
            out += "\n\nSo far:\n" + "\n".join(table.engine.text(e, table.names) for e in public)
    return Outgoing(out, title=table.title, user_text=True)


def cant_dm_notice(table: Table, name: str) -> Outgoing:
    # Never the secret itself in the channel: only a button that reveals it to that member.
    return Outgoing(f"{name}, I can't message you privately. Use the button to see your secrets and your turn.",
                    buttons=(Button(codec.show_id(table.game_id), "Show my secret", Style.PRIMARY),), user_text=True)


def roster(table: Table) -> str:
    return ", ".join(f"{s.name}{' (AI)' if s.is_ai else ''}" for s in table.seats)


def lobby_card(game_id: int, game: str, variant: str, lobby: Lobby, seats: tuple[int, int],
               closed: str | None = None) -> Outgoing:
    lo, hi = seats
    names = [(s.user.name or s.user.user_id) if s.kind is SeatKind.HUMAN and s.user else f"AI ({s.agent})"
             for s in lobby.seats]
    deadline = lobby.deadline_s
    text = (
        f"**{game}** ({variant}) table #{game_id}, host {lobby.host.name or lobby.host.user_id}\n"
        f"Seats ({len(names)}/{lo}-{hi}): {', '.join(names) or '-'}\n"
        f"Turn deadline: {f'{deadline:g} s' if deadline else 'none'}"
    )
    title = f"{game} table #{game_id}"
    if closed:
        return Outgoing(f"{text}\n{closed}", title=title, user_text=True)
    buttons = (
        Button(codec.lobby_id(game_id, codec.LobbyVerb.JOIN), "Join", Style.PRIMARY),
        Button(codec.lobby_id(game_id, codec.LobbyVerb.LEAVE), "Leave"),
        Button(codec.lobby_id(game_id, codec.LobbyVerb.AI), "Add AI"),
        Button(codec.lobby_id(game_id, codec.LobbyVerb.START), "Start", Style.SUCCESS),
        Button(codec.lobby_id(game_id, codec.LobbyVerb.ABORT), "Abort", Style.DANGER),
    )
    return Outgoing(text, buttons=buttons, title=title, user_text=True)


def result_text(result: Mapping[str, Any], names: Sequence[str], *, summary: bool = True) -> str:
    """The announcement. Without ``summary`` (the engine's last event already told how it ended)
    only the winners are named."""
    winners = [names[w] for w in result.get("winners") or [] if isinstance(w, int) and 0 <= w < len(names)]
    head = f"{result.get('summary', 'The game is over.')}\n" if summary else ""
    return f"{head}Winners: {human_list(winners)}."


def end_text(game_id: int, result: Mapping[str, Any], names: Sequence[str], told: str) -> str:
    """The announcement after the engine's last events (``told``): it names the winners unless those
    events already did, so "Winners: ..." is never printed twice."""
    winners = [names[w] for w in result.get("winners") or [] if isinstance(w, int) and 0 <= w < len(names)]
    if winners and all(w in told for w in winners):
        return f"Game #{game_id} is over. Thanks for playing."
    return result_text(result, names, summary=False)
