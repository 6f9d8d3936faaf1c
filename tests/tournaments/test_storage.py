"""Tournament rows on a real SQLite file and a real PostgreSQL: create with matches, the match lifecycle, ratings, the lease."""

from __future__ import annotations

from datetime import timedelta

from storage import tournaments as repo
from storage.store import Store
from storage.tables import MatchStatus, TournamentStatus, utcnow


async def test_tournament_matches_ratings_and_lease(db_url: str) -> None:
    store = await Store.open(db_url)
    try:
        plans = [repo.MatchPlanRecord(i, ["random", "embed:minilm", "random"], 100 + i // 2, i // 2) for i in range(4)]
        tid = await repo.create_tournament(
            store, tenant="console", name="nightly", game="decrypto", variant="benchmark", options={},
            entrants=["random", "embed:minilm"], format="round_robin", seats=3, games_per_pairing=1, duplicate=True,
            seed=7, matches=plans,
        )
        row = await repo.tournament(store, tid)
        assert row is not None and row.status == TournamentStatus.PLANNED and row.entrants == ["random", "embed:minilm"]
        assert [t.id for t in await repo.tournaments(store, tenant="console")] == [tid]
        assert await repo.tournaments(store, tenant="discord:1") == []

        ms = await repo.matches(store, tid)
        assert [m.idx for m in ms] == [0, 1, 2, 3] and [m.deal_group for m in ms] == [0, 0, 1, 1]
        first, second = ms[0].id, ms[1].id
        assert first is not None and second is not None
        assert await repo.start_match(store, first)
        assert not await repo.start_match(store, first)  # already taken: a second runner gets nothing
        await repo.retry_match(store, first, "stalled")
        assert await repo.start_match(store, first)
        await repo.fail_match(store, second, "broken twice")
        ms = await repo.matches(store, tid)
        assert (ms[0].status, ms[0].attempts) == (MatchStatus.RUNNING, 2)
        assert ms[1].status == MatchStatus.FAILED and ms[1].error == "broken twice"
        assert await repo.cancel_open_matches(store, tid) == 2

        await repo.save_ratings(store, tid, "decrypto", "benchmark", [
            repo.RatingRecord("embed:minilm", 1, 27.0, 6.0, 24.0, 30.0, 4, {"team": {"win_rate": 0.5}}),
            repo.RatingRecord("random", 2, 23.0, 6.0, 20.0, 26.0, 4, {}),
        ])
        assert [(r.entrant, r.rank) for r in await repo.ratings(store, tid)] == [("embed:minilm", 1), ("random", 2)]

        now = utcnow()
        assert await repo.acquire_lease(store, "scheduler", "a", timedelta(seconds=30), now=now)
        assert not await repo.acquire_lease(store, "scheduler", "b", timedelta(seconds=30), now=now)
        assert await repo.acquire_lease(store, "scheduler", "a", timedelta(seconds=30), now=now)  # renewal
        assert await repo.acquire_lease(store, "scheduler", "b", timedelta(seconds=30), now=now + timedelta(minutes=1))
        await repo.release_lease(store, "scheduler", "b")
        assert await repo.acquire_lease(store, "scheduler", "a", timedelta(seconds=30), now=now)
    finally:
        await store.aclose()
