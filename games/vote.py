"""Secret simultaneous votes, run-offs and abstentions: the one mechanism Who-is-Spy and the
Chameleon share, as pure data.

A ``Ballot`` lists who may be voted for and who must vote; votes arrive one at a time and
stay hidden until the last one is in. ``verdict`` counts them: the single most-voted seat
is chosen; a tie at the top leaves the tied seats for the game's tie rule (a run-off, or
nobody); when nobody voted for anyone, nobody is chosen. An absent voter abstains, which
counts as a vote for nobody. Vote options are shown in a seeded order per voter, because
language-model voters favour early options (SpyGame's mitigation of option-order bias).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from games.base import ABSTAIN, Action, Choice, IllegalAction, Option, Seat, check_choice, is_abstain, rng
from games.labels import seat_ref

__all__ = ["ABSTAIN", "Ballot", "Verdict", "first", "runoff", "target"]



@dataclass(frozen=True, slots=True)
class Verdict:
    """What a complete ballot decided: ``chosen`` alone at the top, else the ``tied`` seats."""

    chosen: Seat | None
    tied: tuple[Seat, ...]

    @property
    def no_votes(self) -> bool:
        return self.chosen is None and not self.tied


@dataclass(frozen=True, slots=True)
class Ballot:
    """One vote: the candidates, the seats that vote, and each vote cast (None = abstained)."""

    candidates: tuple[Seat, ...]
    voters: tuple[Seat, ...]
    votes: tuple[tuple[Seat, Seat | None], ...] = ()
    runoff: bool = False

    def voted(self) -> frozenset[Seat]:
        return frozenset(v for v, _ in self.votes)

    def waiting(self) -> frozenset[Seat]:
        """Voters who still owe a vote."""
        return frozenset(self.voters) - self.voted()

    @property
    def complete(self) -> bool:
        return not self.waiting()

    def vote_of(self, voter: Seat) -> tuple[bool, Seat | None]:
        """(has voted, for whom)."""
        for v, t in self.votes:
            if v == voter:
                return True, t
        return False, None

    def cast(self, voter: Seat, target: Seat | None) -> Ballot:
        if voter not in self.waiting():
            raise IllegalAction("You have already voted." if voter in self.voted() else "You do not vote in this ballot.")
        if target is not None and (target not in self.candidates or target == voter):
            raise IllegalAction("That is not one of the options.")
        return replace(self, votes=(*self.votes, (voter, target)))

    def tally(self) -> dict[Seat, int]:
        """Votes per candidate, in candidate order, zeros included."""
        counts = dict.fromkeys(self.candidates, 0)
        for _, target in self.votes:
            if target is not None:
                counts[target] += 1
        return counts

    def verdict(self) -> Verdict:
        tally = self.tally()
        most = max(tally.values(), default=0)
        if most == 0:
            return Verdict(None, ())
        top = tuple(sorted(c for c, n in tally.items() if n == most))
        return Verdict(top[0], ()) if len(top) == 1 else Verdict(None, top)

    def needs_runoff(self, verdict: Verdict, rule_allows: bool) -> bool:
        """A tie at the top of a first ballot goes to a run-off when the game's tie rule says so."""
        return rule_allows and not self.runoff and len(verdict.tied) > 1

    def options(self, voter: Seat, seed: int, *salt: object) -> tuple[Option, ...]:
        """The candidates this voter may choose (never themselves), in a seeded order per voter."""
        pool = [c for c in self.candidates if c != voter]
        rng(seed, *salt).shuffle(pool)
        return tuple(Option(str(c), seat_ref(c)) for c in pool)


def first(candidates: Iterable[Seat], voters: Iterable[Seat]) -> Ballot:
    return Ballot(tuple(candidates), tuple(voters))


def runoff(tied: Iterable[Seat], voters: Iterable[Seat]) -> Ballot:
    return Ballot(tuple(tied), tuple(voters), runoff=True)


def target(spec: Choice, action: Action) -> Seat | None:
    """The seat an action votes for, or None for an abstention; IllegalAction otherwise."""
    if is_abstain(spec.kind, action):
        return None
    return int(check_choice(spec, action))
