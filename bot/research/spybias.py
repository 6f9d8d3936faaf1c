"""SpyGame's bias measurements (section 3.3, Table 3 and Figure 3): ``hushtable spygame bias``.

The paper estimates how much a language model's vote depends on things that should not matter by
making every description content-free ("...") and reading where the votes go: by the voted
player's *name* (three naming methods, Table 2), by its *speaking position* and by the *position of
its option* in the voting question. With nothing to go on, an unbiased voter spreads its vote
evenly: 25% per speaking position and per name among four players, 33.3% per option among three.

Here the question is the vote prompt our language-model agent asks in a real game
(``models/agents/prompts/spy_vote.toml``, rules and example included), built by the Who-is-Spy
engine at its first vote with four seats in the SpyGame setting, every description replaced by
"...". Each trial draws (seeded) the voter, the speaking order and the option order; the naming
method rewrites every "Player k" of the prompt. Rather than sampling one ballot per trial, the
vote's distribution is read from the model's probabilities over the option letters (the label
scoring every agent's choice uses), so a trial gives a share per position, and the table reports
each share's mean over trials with a 95% interval (1.96 standard errors).

What differs from the paper: it counted sampled votes of GPT-3.5-Turbo over whole content-free
games (its Table 3: speaking 32.5 / 27.6 / 20.3 / 19.6, option 43.4 / 6.6 / 50.0); here one
vote question per trial, its probabilities, with whatever model ``--agent`` names.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from games.base import Action, Choice, Observation, Option, Text
from models.types import Inference, Message, ScoreRequest, ScoringMode

SEATS = 4
NAMINGS: dict[str, tuple[str, ...]] = {  # the paper's Table 2
    "method 1": ("Player 1", "Player 2", "Player 3", "Player 4"),
    "method 2": ("Aaron One", "Barbara Two", "Charlie Three", "David Four"),
    "method 3": ("Jack", "Mary", "Alice", "Tom"),
}
PAPER_TABLE3 = {"speaking": (32.47, 27.60, 20.31, 19.62), "option": (43.40, 6.60, 50.00)}
CONTENT_FREE = "..."
LETTERS = "ABC"


@dataclass(frozen=True, slots=True)
class Trial:
    naming: str
    voter: int
    speaking: tuple[int, ...]  # seats in the order they spoke
    options: tuple[int, ...]  # the voter's options (the other seats) in the order shown


def design(trials: int, seed: int) -> list[Trial]:
    """``trials`` questions per naming method: voters in turn, speaking and option orders drawn."""
    r = random.Random(f"spygame-bias:{seed}")
    out = []
    for naming in NAMINGS:
        for i in range(trials):
            voter = i % SEATS
            speaking = list(range(SEATS))
            r.shuffle(speaking)
            options = [s for s in range(SEATS) if s != voter]
            r.shuffle(options)
            out.append(Trial(naming, voter, tuple(speaking), tuple(options)))
    return out


def first_vote(seed: int) -> tuple[Any, Any]:
    """A four-seat SpyGame-setting game played to its first vote (descriptions are replaced later)."""
    import games

    engine = games.get("spy")
    state, _ = engine.new(engine.make_config("spygame"), SEATS, seed)
    for n in range(SEATS * 4):
        to_act = sorted(engine.to_act(state))
        seat = to_act[0]
        spec = engine.legal(state, seat)
        if isinstance(spec, Choice) and spec.kind == "vote":
            return engine, state
        action = Action.say(spec.kind, f"placeholder {n}") if isinstance(spec, Text) else \
            Action.choose(spec.kind, spec.options[0].id)  # type: ignore[union-attr]
        state, _ = engine.apply(state, seat, action)
    raise RuntimeError("the Who-is-Spy engine never reached its first vote")


def question(engine: Any, state: Any, trial: Trial) -> tuple[tuple[Message, ...], dict[str, Option]]:
    """The agent's vote prompt for this trial: content-free descriptions in its speaking order."""
    from games.labels import fill_spec
    from models.agents.prompts import PromptBook, build_messages

    obs: Observation = engine.observe(state, trial.voter)
    spec = fill_spec(engine.legal(state, trial.voter))  # as the table hands it to an agent: "Player k"
    assert isinstance(spec, Choice) and spec.kind == "vote"
    view = dict(obs.view)
    rnd = view["round"]
    view["descriptions"] = [{"round": rnd, "seat": s, "text": CONTENT_FREE} for s in trial.speaking]
    view["speaking_order"] = list(trial.speaking)
    obs = Observation(obs.game, obs.seat, obs.phase, view, obs.events)
    by_seat = {int(o.id): o for o in spec.options}
    labelled = {LETTERS[i]: by_seat[s] for i, s in enumerate(trial.options)}
    messages, _ = build_messages(PromptBook(), obs, spec, labelled)
    names = NAMINGS[trial.naming]
    if trial.naming != "method 1":
        messages = tuple(Message(m.role, re.sub(r"\bPlayer ([1-4])\b", lambda x: names[int(x.group(1)) - 1],
                                                m.content)) for m in messages)
    return messages, labelled


@dataclass(slots=True)
class Shares:
    """Per position, the vote share of each trial (0-100)."""

    per: list[list[float]]

    def mean(self, i: int) -> float:
        xs = self.per[i]
        return sum(xs) / len(xs) if xs else float("nan")

    def half_width(self, i: int) -> float:
        xs = self.per[i]
        if len(xs) < 2:
            return float("nan")
        mu = sum(xs) / len(xs)
        return float(1.96 * (sum((x - mu) ** 2 for x in xs) / (len(xs) - 1) / len(xs)) ** 0.5)


@dataclass(slots=True)
class BiasResult:
    agent: str
    trials: int
    speaking: dict[str, Shares] = field(default_factory=dict)  # naming -> share by speaking position
    option: dict[str, Shares] = field(default_factory=dict)  # naming -> share by option position
    name: dict[str, Shares] = field(default_factory=dict)  # naming -> share by name (seat)
    failures: int = 0


def tally(trials: Sequence[Trial], probs: Sequence[Sequence[float] | None], agent: str, per_naming: int) -> BiasResult:
    """Where the vote mass of each trial goes: by speaking position, option position and name."""
    res = BiasResult(agent, per_naming)
    for t, p in zip(trials, probs, strict=True):
        if p is None:
            res.failures += 1
            continue
        total = sum(p)
        if total <= 0:
            res.failures += 1
            continue
        share = {seat: 100 * p[i] / total for i, seat in enumerate(t.options)}
        # Nobody votes for themself: the voter's share is 0. Voters take every seat in turn and every
        # speaking position equally often, so chance is 25 per position and per name.
        share[t.voter] = 0.0
        sp = res.speaking.setdefault(t.naming, Shares([[] for _ in range(SEATS)]))
        op = res.option.setdefault(t.naming, Shares([[] for _ in range(SEATS - 1)]))
        nm = res.name.setdefault(t.naming, Shares([[] for _ in range(SEATS)]))
        for pos, seat in enumerate(t.speaking):
            sp.per[pos].append(share[seat])
        for pos, seat in enumerate(t.options):
            op.per[pos].append(share[seat])
        for seat in range(SEATS):
            nm.per[seat].append(share[seat])
    return res


async def measure(client: Inference, agent: str, *, trials: int, seed: int) -> BiasResult:
    """Ask every trial's vote question and tally the shares."""
    from models.types import InferenceError

    engine, state = first_vote(seed)
    plan = design(trials, seed)
    probs: list[Sequence[float] | None] = []
    for t in plan:
        messages, labelled = question(engine, state, t)
        try:
            out = await client.score_labels(ScoreRequest(messages, tuple(labelled), ScoringMode.FIRST_TOKEN))
            probs.append(list(out.probs))
        except InferenceError:
            probs.append(None)
    return tally(plan, probs, agent, trials)


def render(res: BiasResult) -> str:
    """Table 3 (speaking and option position) and Figure 3 (names) as text, beside chance and the paper."""
    def cells(s: Shares, n: int) -> str:
        return "".join(f"{s.mean(i):>8.1f} ±{s.half_width(i):<5.1f}" for i in range(n))

    lines = [f"SpyGame bias (section 3.3), agent {res.agent}: {res.trials} content-free vote questions per naming "
             f"method, {SEATS} players; vote share in % (mean over questions ± 95% half-width)"
             + (f"; {res.failures} questions failed (left out)" if res.failures else "")]
    head = "".join(f"{'pos ' + str(i + 1):>15}" for i in range(SEATS))
    lines.append(f"\nSpeaking order: share of the vote by speaking position (chance 25.0 each: a voter "
                 f"gives its own position 0, and every position is the voter's as often)\n{'naming':<11}{head}")
    for naming, s in res.speaking.items():
        lines.append(f"{naming:<11}{cells(s, SEATS)}")
    lines.append(f"{'paper':<11}" + "".join(f"{x:>8.1f}       " for x in PAPER_TABLE3["speaking"]))
    lines.append(f"\nOption order: share of the vote by the option's position (chance 33.3 each)\n{'naming':<11}"
                 + "".join(f"{'pos ' + str(i + 1):>15}" for i in range(SEATS - 1)))
    for naming, s in res.option.items():
        lines.append(f"{naming:<11}{cells(s, SEATS - 1)}")
    lines.append(f"{'paper':<11}" + "".join(f"{x:>8.1f}       " for x in PAPER_TABLE3["option"]))
    lines.append("\nNames: share of the vote by the voted player's name (chance 25.0 each; Figure 3)")
    for naming, s in res.name.items():
        names = NAMINGS[naming]
        lines.append(f"{naming:<11}" + "".join(f"{names[i][:14]:>15}" for i in range(SEATS)))
        lines.append(f"{'':<11}{cells(s, SEATS)}")
    lines.append("\nDecisions: options are labelled A-C in the drawn order (the agent itself shuffles them in a "
                 "game); the spread across names is the paper's criterion for choosing a naming method "
                 "(it chose method 1).")
    return "\n".join(lines)


def spygame_cli() -> Any:
    """``hushtable spygame bias`` and ``hushtable spygame ablation`` (registered in bot/cli.py)."""
    import asyncio

    import typer

    app = typer.Typer(no_args_is_help=True, add_completion=False,
                      help="SpyGame's protocols that need no logged game (the paper's sections 3.3 and 4.1).")

    @app.callback()
    def group() -> None:
        """SpyGame's protocols that need no logged game (the paper's sections 3.3 and 4.1)."""
        # A callback keeps `spygame` a group with its commands below it, as the docs write it.

    @app.command()
    def bias(
        agent: str = typer.Option("llm:default", "--agent", "-a", help="A language model: llm:default, llm:/path, "
                                  "llm:openai:http://host/v1#model."),
        trials: int = typer.Option(48, "--trials", min=4, max=2000, help="Vote questions per naming method."),
        seed: int = typer.Option(0, "--seed"),
    ) -> None:
        """Name, speaking-order and option-order bias of a model's vote, on content-free descriptions."""
        from bot.settings import Settings
        from models.client import ClientPool

        if not agent.startswith("llm:"):
            raise typer.BadParameter(f"{agent} is not a language model: the bias questions go to llm:... agents")

        async def go() -> str:
            pool = ClientPool(Settings().client_options())
            try:
                client = await pool.get(agent[len("llm:"):] or "default")
                return render(await measure(client, agent, trials=trials, seed=seed))
            finally:
                await pool.aclose()

        typer.echo(asyncio.run(go()))

    @app.command()
    def ablation(
        agent: str = typer.Option("strategist", "--agent", "-a", help="The guest: strategist, or an llm: entry in the "
                                  "strategic mode (HUSHTABLE_AGENTS), e.g. one with model=choices on a GPU worker."),
        hosts: str = typer.Option("strategist", "--hosts", help="The agent in the three other seats (fixed in every arm)."),
        games: int = typer.Option(200, "--games", "-n", min=1, max=5000, help="Seeded games per arm and role."),
        seed: int = typer.Option(0, "--seed"),
        role: list[str] = typer.Option(["spy", "villager"], "--role", help="The guest's seat: spy (the paper's "
                                       "Table 5) and/or villager; repeat for both."),
        ablate: list[str] = typer.Option(["guess", "reason"], "--ablate", help="Steps to switch off, one arm each "
                                         "(guess: word guessing; reason: reasoning before the vote)."),
        out: str = typer.Option("", "--out", help="Also write every game's row (JSON lines) to this file, as played."),
        stored: str = typer.Option("", "--from", help="Print the tables of a stored --out file instead of playing."),
    ) -> None:
        """Table 5: the guest's Win, Round and Voted, whole and without each step, on the same seeded games."""
        import json
        import time
        from pathlib import Path

        from bot.app import build_agents
        from bot.research.spyablation import ROLES, GameRow, define_arms, render, row_of, run, summarize, warm
        from bot.settings import Settings
        from models.client import ClientPool

        bad = [r for r in role if r not in ROLES]
        if bad:
            raise typer.BadParameter(f"the guest plays spy or villager, not {bad[0]!r}", param_hint="--role")
        if stored:
            try:
                lines = [json.loads(line) for line in Path(stored).read_text(encoding="utf-8").splitlines() if line]
                head = lines[0] if lines and "run" in lines[0] else {"run": {"guest": "?", "hosts": "?", "seed": "?"}}
                rows = [row_of(x) for x in lines if "run" not in x]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                typer.echo(f"error: {stored} is not a stored ablation run ({type(exc).__name__})", err=True)
                raise typer.Exit(2) from None
            run_of = head["run"]
            typer.echo(render(summarize(rows), guest=str(run_of["guest"]), hosts=str(run_of["hosts"]),
                              games=len({r.deal for r in rows}), seed=run_of["seed"]), nl=False)
            return
        settings = Settings()
        sink = Path(out).open("w", encoding="utf-8") if out else None

        def keep(row: GameRow) -> None:
            if sink is not None:
                sink.write(json.dumps(row.to_json()) + "\n")
                sink.flush()

        async def go() -> str:
            pool = ClientPool(settings.client_options())
            try:
                registry = build_agents(settings, pool)
                specs = define_arms(registry, agent, list(dict.fromkeys(ablate)))
                registry.entry(hosts)
                if sink is not None:
                    sink.write(json.dumps({"run": {"guest": specs["full"], "hosts": registry.current(hosts), "seed": seed,
                                                   "games": games, "arms": specs}}) + "\n")
                await warm(registry, [specs["full"], hosts])
                started = time.perf_counter()
                rows = await run(registry, specs, registry.current(hosts), games=games, seed=seed,
                                 roles=list(dict.fromkeys(role)), progress=lambda line: typer.echo(line, err=True),
                                 each=keep)
                return render(summarize(rows), guest=specs["full"], hosts=registry.current(hosts), games=games,
                              seed=seed, seconds=time.perf_counter() - started)
            finally:
                await pool.aclose()
                if sink is not None:
                    sink.close()

        try:
            typer.echo(asyncio.run(go()), nl=False)
        except ValueError as exc:  # an unknown agent or step, an agent without a strategy
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None

    return app


__all__ = ["NAMINGS", "BiasResult", "Trial", "design", "first_vote", "measure", "question", "render", "spygame_cli", "tally"]
