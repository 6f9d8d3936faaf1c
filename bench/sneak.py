"""Benchmark of SNEAK scoring: the naive loop a user would write vs our path, same model, one run.

1. The same instances (every word of the first ``--cards`` cards as the secret,
   the embedding generator's message, five embedding decoys) are scored for
   the ally and the chameleon by
   - the naive loop: one prompt at a time, the chat template, a plain
     transformers forward over the whole prompt (all logits), softmax over the
     label tokens; and
   - our path: ``LLMEvaluator`` through the worker's ``Batcher`` over
     ``TransformersBackend`` (concurrent requests batched, the per-card prompt
     prefix computed once and reused, logits at the answer position only).
   Both see identical prompts (the naive loop renders them with the
   evaluator's own templates) and must agree on the probabilities.
   Printed: instances/s for both and the ratio (target >= 3x on 2 CPU cores).
2. A full ``hushtable sneak bench`` with both bundled evaluators (llm:default,
   embed:minilm) and the llm:default generator over ``--bench-cards`` cards,
   extrapolated linearly to every card (the bench's cost is per instance).

With ``--device cuda`` and ``--random-model``, the model is a random-weight
llama of realistic size built from a config (no download), batch 32.

Usage: ``python bench/sneak.py [--cards 2] [--bench-cards 2] [--skip-full] [--device cpu] [--random-model]``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from games import decks  # noqa: E402
from models.embeddings import VocabIndex  # noqa: E402
from models.eval.decoys import EmbeddingDecoys, pick  # noqa: E402
from models.eval.evaluators import LLMEvaluator, order  # noqa: E402
from models.eval.generators import EmbedGenerator  # noqa: E402
from models.eval.instances import Instance, bench_instances  # noqa: E402
from models.eval.prompts import prompt  # noqa: E402
from models.worker.batcher import Batcher  # noqa: E402
from models.worker.embedding_backend import embedder_for  # noqa: E402
from models.worker.transformers_backend import TransformersBackend  # noqa: E402

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


Items = list[tuple[Instance, tuple[str, ...]]]


def build_instances(cards: int) -> Items:
    emb = embedder_for("minilm")
    index = VocabIndex(emb)
    gen = EmbedGenerator(index, "embed:minilm")
    decoys = EmbeddingDecoys(emb)
    out = []
    for inst in bench_instances(list(decks.cards())[:cards], 12):
        msg = gen.now(inst).message or "?"
        inst = Instance(game=inst.game, category=inst.category, candidates=inst.candidates, secret=inst.secret,
                        message=msg)
        out.append((inst, (msg, *pick(decoys.pool_now(inst.category, inst.candidates), msg))))
    return out


def naive_prompts(inst: Instance, messages: tuple[str, ...]) -> list[tuple[list[dict[str, str]], int, list[int]]]:
    """The evaluator's two prompts for one instance (p=1: its seeded order), as a user would send them."""
    n = len(inst.candidates)
    perm = order(n, 0, "sneak-chameleon", inst.category, inst.candidates, inst.secret, inst.message)
    cham = prompt("chameleon", category=inst.category,
                  candidates=" ".join(f"{LETTERS[i]}) {inst.candidates[o]}" for i, o in enumerate(perm)),
                  message=inst.message, labels=", ".join(LETTERS[:n]))
    m = len(messages)
    aperm = order(m, 0, "sneak-ally", inst.category, inst.secret, tuple(messages))
    ally = prompt("ally", category=inst.category, candidates=", ".join(inst.candidates), secret=inst.secret,
                  messages=" ".join(f"{LETTERS[i]}) message {i}: {messages[o]}" for i, o in enumerate(aperm)),
                  labels=", ".join(LETTERS[:m]))
    return [([x.to_json() for x in cham], n, perm), ([x.to_json() for x in ally], m, aperm)]


def naive(model: Any, tok: Any, items: Items) -> tuple[float, list[list[float]]]:
    with torch.inference_mode():
        return _naive(model, tok, items)


def _naive(model: Any, tok: Any, items: Items) -> tuple[float, list[list[float]]]:
    started = time.perf_counter()
    out = []
    for inst, messages in items:
        for chat, n, perm in naive_prompts(inst, messages):
            text = tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
            ids = tok(text, add_special_tokens=False, return_tensors="pt")["input_ids"].to(model.device)
            label_ids = [tok(text + lab, add_special_tokens=False)["input_ids"][-1] for lab in LETTERS[:n]]
            logits = model(input_ids=ids).logits[0, -1].float()
            shown = torch.softmax(logits[label_ids], dim=-1).tolist()
            probs = [0.0] * n
            for pos, o in enumerate(perm):
                probs[o] = shown[pos]
            out.append(probs)
    return time.perf_counter() - started, out


async def ours(backend: TransformersBackend, items: Items, max_batch: int) -> tuple[float, list[list[float]]]:
    batcher = Batcher(backend, max_batch=max_batch)
    await batcher.start()
    try:
        ev = LLMEvaluator(batcher, "llm:bench", permutations=1, calibrate=False)  # one ordering, as the naive loop
        started = time.perf_counter()
        res = await asyncio.gather(*(asyncio.gather(ev.chameleon(i), ev.ally(i, m)) for i, m in items))
        elapsed = time.perf_counter() - started
    finally:
        await batcher.aclose()
    return elapsed, [list(j.probs) for pair in res for j in pair]


def load(args: argparse.Namespace) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from models.worker import default_model

    folder = default_model.ensure_converted()
    tok = AutoTokenizer.from_pretrained(str(folder))
    if args.random_model:
        from transformers import LlamaConfig, LlamaForCausalLM

        cfg = LlamaConfig(vocab_size=len(tok), hidden_size=2048, intermediate_size=5632, num_hidden_layers=16,
                          num_attention_heads=16, num_key_value_heads=8, max_position_embeddings=4096)
        model: Any = LlamaForCausalLM(cfg)
        model = model.to(dtype=torch.bfloat16 if args.device != "cpu" else torch.float32)
    else:
        model = AutoModelForCausalLM.from_pretrained(str(folder))
    return model.to(args.device).eval(), tok


async def full_bench(cards: int) -> float:
    from models.client import ClientPool
    from models.eval.bench import BenchConfig, run_bench

    pool = ClientPool()
    try:
        started = time.perf_counter()
        cfg = BenchConfig(generator="llm:default", evaluators=("llm:default", "embed:minilm"), cards=cards)
        await run_bench(cfg, client_for=pool.get, embedder_for=embedder_for)
        return time.perf_counter() - started
    finally:
        await pool.aclose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=2)
    ap.add_argument("--bench-cards", type=int, default=2)
    ap.add_argument("--skip-full", action="store_true")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--random-model", action="store_true")
    ap.add_argument("--max-batch", type=int, default=8)
    args = ap.parse_args()
    items = build_instances(args.cards)
    model, tok = load(args)
    backend = TransformersBackend(model, tok, model_id="bench", device=args.device)
    naive(model, tok, items[:1])  # warm-up: first-call costs belong to neither side
    t_naive, p_naive = naive(model, tok, items)
    t_ours, p_ours = asyncio.run(ours(backend, items, args.max_batch))
    diff = max(abs(a - b) for x, y in zip(p_naive, p_ours, strict=True) for a, b in zip(x, y, strict=True))
    n = len(items)
    print(f"SNEAK scoring, {n} instances ({2 * n} prompts), device {args.device}, "
          f"{'random-weight llama ~1B' if args.random_model else 'SmolLM2-135M'}, torch threads {torch.get_num_threads()}")
    print(f"{'path':<44}{'seconds':>10}{'instances/s':>14}")
    print(f"{'naive loop (one prompt at a time, plain fwd)':<44}{t_naive:>10.2f}{n / t_naive:>14.2f}")
    print(f"{'ours (batched worker, shared prefixes)':<44}{t_ours:>10.2f}{n / t_ours:>14.2f}")
    print(f"ratio: {t_naive / t_ours:.2f}x   (max |p_naive - p_ours| = {diff:.2e})")
    if not args.skip_full:
        seconds = asyncio.run(full_bench(args.bench_cards))
        total = len(decks.cards())
        print(f"full `sneak bench --generator llm:default` (llm:default and embed:minilm): {args.bench_cards} cards in "
              f"{seconds:.0f} s -> {total} cards extrapolated: {seconds * total / args.bench_cards / 60:.1f} min")


if __name__ == "__main__":
    main()
