"""A whole Spymasters game in the fake guild through the real discord.py client: four members
(so both spymasters are people): clues through the modal, numbers and guesses through buttons or
select menus, the key by DM to the spymasters only and never in a channel or thread, the result
posted once."""

from __future__ import annotations

from tests.bot.discord.conftest import Harness
from tests.bot.discord.driver import Players, open_table, over_messages

KEY_LINE = "The key, for the spymasters only."


async def test_full_spymasters_game(harness: Harness) -> None:
    fake = harness.fake
    members = [fake.add_member(name=n) for n in ("alice", "bob", "carol", "dave")]
    gid, thread = await open_table(harness, members[0], members[1:], "spymasters", "classic", 0)
    players = Players(harness, gid, thread, members)
    await players.play()
    await harness.idle()

    assert len(over_messages(fake, thread, gid)) == 1, "the result must be posted exactly once"
    assert players.modals + players.dm_replies > 0, "the spymasters wrote their clues"
    assert players.accepted > 0 and players.forms_seen
    for r in fake.public_requests():
        assert not any(KEY_LINE in t for t in r.texts()), "the key reached a channel"
    assert harness.store is not None
    glog = await harness.store.load_game(gid)
    (key,) = [e for e in glog.events if e.kind == "key"]
    masters = set(key.audience)
    assert len(masters) == 2
    for s in glog.seats:
        uid = next(u for u in members if s.user_key and s.user_key.endswith(f":{u}"))
        got = any(KEY_LINE in (m.get("content") or "") or KEY_LINE in str(m.get("embeds") or "") for m in fake.dms(uid))
        assert got == (s.seat in masters), (uid, s.seat, masters)
    row = await harness.store.game(gid)
    assert row is not None and row.status == "finished"
