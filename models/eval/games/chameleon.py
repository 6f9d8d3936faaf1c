"""Chameleon clues as SNEAK instances (the game SNEAK was made from).

category = the card's category, W = the card's words (16, or 12 in the
``sneak`` variant), w_s = the round's secret, m = each clue. The chameleon's own
clue, given without knowing the secret, is scored too and marked ``bluff``: its
utility (as if it knew) says how well it blended in; its leakage of the true
secret means little, and reports keep it off the ranking of clue-givers.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from models.eval.games import SneakGame, clue_kinds
from models.eval.instances import ActionLike, EventLike, Instance, LogLike, only_seat, speaker_of, walk

GAME = "chameleon"


class Role(StrEnum):
    PLAYER = "player"  # knows the secret
    CHAMELEON = "chameleon"



def chameleon_instances(log: LogLike) -> list[Instance]:
    st: dict[str, Any] = {"category": None, "card": (), "secret": None, "chameleon": None}
    out: list[Instance] = []
    seed = log.row.seed or 0
    clues = clue_kinds(GAME)  # which actions are clues: the game's descriptor says

    def on_event(e: EventLike) -> None:
        if e.kind == "round_start":
            st.update(category=e.data["category"], card=tuple(e.data["card"]), secret=None, chameleon=None)
        elif e.kind == "role":
            if e.data.get("secret"):
                st["secret"] = e.data["secret"]
            if e.data.get("role") == Role.CHAMELEON.value:
                st["chameleon"] = only_seat(e.audience)

    def on_action(a: ActionLike) -> None:
        if a.kind not in clues or not a.value or st["secret"] is None or not st["card"]:
            return
        bluff = a.seat == st["chameleon"]
        who, kind = speaker_of(a)
        out.append(Instance(
            game=GAME, category=str(st["category"]), candidates=st["card"], secret=st["secret"],
            message=a.value[0], role=(Role.CHAMELEON if bluff else Role.PLAYER).value, bluff=bluff,
            seat=a.seat, speaker=who, speaker_kind=kind, game_id=log.row.id, action_seq=a.seq, seed=seed,
        ))

    walk(log, on_event, on_action)
    return out


SNEAK = SneakGame(GAME, chameleon_instances)
