"""The default inference backend: a Hugging Face causal LM run in-process with torch.

What it adds over a plain ``model.generate`` loop:

* Prefix KV reuse. A bounded LRU of past key/values keyed by token-id
  prefixes. Each prompt is split at the boundary before its last message (the
  part later turns of the same game share: system prompt and rules); that
  prefix's KV is computed once, stored, and later requests run only their own
  new tokens on top of it. Entries are never mutated: a request works on a
  *fork* whose layers share the cached tensors, and ``DynamicLayer.update``
  concatenates into new tensors, so the stored entry stays intact.
* Label scoring from one forward pass: logits at the answer position only
  (``logits_to_keep=1``), softmax over the label token ids in float32.
* ``mode="loglik"``: summed log-likelihood of each option's tokens after the
  prompt; the context is run once and the options are batched on top of it.
* Batched, left-padded prefill for requests that share a prefix (or none), and
  a manual decode loop (greedy or seeded sampling, stop strings, EOS) that
  works the same with and without a cached prefix.

Label convention: the label is scored as the first token of the assistant's
reply, i.e. the token that follows the chat template's generation prompt. If
the template leaves whitespace (SmolLM2/ChatML leave a newline) the label is
scored bare ("A"); otherwise with one leading space (" A"). Every label must
encode to exactly one token appended to the prompt, and the ids must be
distinct; otherwise the request fails with ``ValueError``. The check is
cached per label set.

Only this module and ``default_model.py`` import torch and transformers.
"""

from __future__ import annotations

import copy
import inspect
import logging
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, DynamicCache, PreTrainedModel, PreTrainedTokenizerBase
from transformers.cache_utils import CacheLayerMixin, DynamicLayer
from transformers.utils import logging as hf_logging

from models.bundled import load_model
from models.types import GenerateRequest, GenerateResult, Message, ScoreRequest, ScoreResult, ScoringMode
from models.worker import default_model
from models.worker.per_request import Slots

_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}

log = logging.getLogger(__name__)

# For a base model that ships no chat template (Gemma 3 270M's GGUF, say): a plain transcript.
# It opens with the model's BOS token (Gemma needs it; the prompt is encoded without special
# tokens because a template writes its own), and the reply starts after "Assistant:", so labels
# are scored with a leading space (" A").
PLAIN_CHAT_TEMPLATE = (
    "{{ bos_token if bos_token else '' }}"
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}{{ m['content'] }}\n\n"
    "{% elif m['role'] == 'user' %}User: {{ m['content'] }}\n"
    "{% else %}Assistant: {{ m['content'] }}\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}"
)


def with_chat_template(tokenizer: PreTrainedTokenizerBase, model_id: str) -> PreTrainedTokenizerBase:
    """The tokenizer, given the plain transcript template when its model ships none (one WARNING says so)."""
    if not getattr(tokenizer, "chat_template", None):
        log.warning("model %s has no chat template; prompting it with a plain User:/Assistant: transcript", model_id)
        tokenizer.chat_template = PLAIN_CHAT_TEMPLATE
    return tokenizer


@dataclass(frozen=True, slots=True)
class PrefixCacheStats:
    entries: int
    hits: int
    misses: int
    stores: int
    evictions: int


class PrefixCache:
    """Bounded LRU of KV caches keyed by the token ids they were computed from."""

    def __init__(self, max_entries: int, min_tokens: int) -> None:
        self.max_entries = max_entries
        self.min_tokens = min_tokens
        self._entries: OrderedDict[tuple[int, ...], DynamicCache] = OrderedDict()
        self.hits = self.misses = self.stores = self.evictions = 0

    def longest_prefix(self, ids: Sequence[int], max_len: int) -> tuple[tuple[int, ...], DynamicCache] | None:
        """Longest stored key that is a prefix of ``ids`` and at most ``max_len`` long."""
        best: tuple[int, ...] | None = None
        for key in self._entries:
            n = len(key)
            if self.min_tokens <= n <= max_len and (best is None or n > len(best)) and tuple(ids[:n]) == key:
                best = key
        if best is None:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(best)
        return best, self._entries[best]

    def get(self, key: tuple[int, ...]) -> DynamicCache | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def put(self, key: tuple[int, ...], cache: DynamicCache) -> None:
        if self.max_entries <= 0 or len(key) < self.min_tokens:
            return
        self._entries[key] = cache
        self._entries.move_to_end(key)
        self.stores += 1
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
            self.evictions += 1

    def clear(self) -> None:
        self._entries.clear()

    def stats(self) -> PrefixCacheStats:
        return PrefixCacheStats(len(self._entries), self.hits, self.misses, self.stores, self.evictions)


@dataclass(frozen=True, slots=True)
class _Prompt:
    text: str
    ids: tuple[int, ...]
    boundary: int  # tokens shared with later turns (everything before the last message); 0 if none


@dataclass(slots=True)
class _Prefill:
    """A prompt whose KV is ready: where its own tokens start and how many were served from cache."""

    key: tuple[int, ...]  # the prefix whose KV the request starts from (may be empty)
    cached_tokens: int


def _fork(cache: DynamicCache) -> DynamicCache:
    """A cache that starts with ``cache``'s content and can grow without changing it.

    Layers are shallow-copied: the tensors are shared, and DynamicLayer.update
    replaces them with new concatenated tensors rather than writing in place.
    """
    if not all(type(layer) is DynamicLayer for layer in cache.layers):
        return copy.deepcopy(cache)
    forked = copy.copy(cache)
    forked.layers = [copy.copy(layer) for layer in cache.layers]
    return forked


def _kv_bytes_per_token(cache: DynamicCache) -> int:
    total = 0
    for layer in cache.layers:
        # Only attention layers hold keys and values that grow per token; linear-attention
        # state and transformers' DummyLayer (keys None) hold none.
        if not isinstance(layer, CacheLayerMixin) or not layer.is_initialized:
            continue
        k, v = layer.keys, layer.values
        if k is not None and v is not None and k.numel():
            total += (k[0, :, :1].numel() * k.element_size()) + (v[0, :, :1].numel() * v.element_size())
    return total


class TransformersBackend:
    """A Backend (models.types.Backend) over a transformers causal LM with prefix KV reuse."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: Any,
        *,
        model_id: str,
        device: str | None = None,
        prefix_cache_size: int = 32,
        prefix_cache: bool = True,
        min_prefix_tokens: int = 16,
        kv_budget_bytes: int = 1 << 30,
    ) -> None:
        self.model_id = model_id
        # No device named: the model stays where it is. A second backend over a model already on a
        # GPU (the benchmark's no-reuse twin) must not pull it back to the CPU under the first one.
        self.device = torch.device(device) if device is not None else model.device
        self.model = default_model.eval_mode(default_model.model_to(model, self.device))
        self.tokenizer = tokenizer
        self.prefix_cache_enabled = prefix_cache and prefix_cache_size > 0
        self.prefix_cache = PrefixCache(prefix_cache_size if self.prefix_cache_enabled else 0, min_prefix_tokens)
        # Batched rows over a shared prefix each need their own copy of its KV;
        # chunk groups so that copy stays under this many bytes.
        self.kv_budget_bytes = kv_budget_bytes
        params = inspect.signature(self.model.forward).parameters
        self._keep_kw = next((k for k in ("logits_to_keep", "num_logits_to_keep") if k in params), None)
        # transformers 5.x renames past_key_values to cache; older releases only know the former.
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.pad_id = int(pad if pad is not None else 0)
        eos: set[int] = set()
        if tokenizer.eos_token_id is not None:
            eos.add(int(tokenizer.eos_token_id))
        gen_eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        if gen_eos is not None:
            eos.update(int(e) for e in ([gen_eos] if isinstance(gen_eos, int) else gen_eos))
        self.eos_ids = frozenset(eos)
        # The batcher counts tokens on the event loop while a batch runs in its
        # worker thread; a fast tokenizer used from two threads at once can fail
        # ("Already borrowed"), so tokenizer calls take this lock.
        self._tok_lock = threading.Lock()
        self.max_context = int(getattr(self.model.config, "max_position_embeddings", 0) or 0)
        self._label_sep = self._detect_label_separator()
        self._label_cache: dict[tuple[str, ...], tuple[int, ...] | ValueError] = {}

    # ------------------------------------------------------------------ loading

    @classmethod
    def load(
        cls,
        spec: str,
        device: str = "cpu",
        dtype: str = "float32",
        *,
        cache_dir: str | Path | None = None,
        threads: int | None = None,
        **kwargs: Any,
    ) -> TransformersBackend:
        """Load "default" (bundled SmolLM2), "gemma3-270m" (Gemma 3 270M, when its package is installed),
        a local HF model folder, or a .gguf file.

        On a CPU the model gets all cores but one (``threads`` overrides): the bot's event
        loop and database share the process, and torch's spinning worker threads slow down
        tenfold and more when another thread wants their core (measured here on 2 cores).
        """
        torch_dtype = _DTYPES[dtype]
        if torch.device(device).type == "cpu":
            torch.set_num_threads(threads or max(1, (os.cpu_count() or 1) - 1))
        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # transformers' logging is untyped; a chat bot's console is no place for loading bars

        def read() -> tuple[PreTrainedModel, PreTrainedTokenizerBase, str]:
            model: PreTrainedModel
            tok: PreTrainedTokenizerBase
            if spec == "default":
                folder = default_model.ensure_converted(cache_dir)
                tok = AutoTokenizer.from_pretrained(str(folder))
                model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch_dtype)
                return model, tok, default_model.MODEL_ID
            if spec == default_model.GEMMA_ID:
                folder = default_model.ensure_gemma_converted(cache_dir)
                tok = with_chat_template(AutoTokenizer.from_pretrained(str(folder)), default_model.GEMMA_ID)
                model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch_dtype)
                return model, tok, default_model.GEMMA_ID
            path = Path(spec).expanduser()
            if path.suffix == ".gguf" and path.is_file():
                # De-quantized once into the model cache, like the bundled model; later loads read that copy.
                folder = default_model.ensure_converted(cache_dir, gguf=path)
                tok = AutoTokenizer.from_pretrained(str(folder))
                model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch_dtype)
                return model, with_chat_template(tok, path.stem), path.stem
            if path.is_dir():
                tok = AutoTokenizer.from_pretrained(str(path))
                model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch_dtype)
                return model, with_chat_template(tok, path.name), path.name
            raise FileNotFoundError(f"model spec {spec!r} is neither 'default', 'gemma3-270m', a model folder nor a .gguf file")

        def build() -> TransformersBackend:
            model, tok, model_id = read()
            # Moving the weights to the device is part of the load: a model built while another
            # load ran elsewhere would fail here ("Cannot copy out of meta tensor").
            return cls(model, tok, model_id=model_id, device=device, **kwargs)

        # One load at a time in this process (models/bundled.py), retried once on failure.
        return load_model(spec, build)

    def close(self) -> None:
        self.prefix_cache.clear()

    # ------------------------------------------------------------ tokenization

    def _template(self, messages: Sequence[Message], generation_prompt: bool) -> str:
        with self._tok_lock:
            text = self.tokenizer.apply_chat_template(
                [m.to_json() for m in messages], add_generation_prompt=generation_prompt, tokenize=False
            )
        return str(text)

    def _encode(self, text: str) -> list[int]:
        # The chat template already writes any special tokens (BOS, <|im_start|>).
        with self._tok_lock:
            return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _decode_text(self, ids: Sequence[int]) -> str:
        with self._tok_lock:
            return str(self.tokenizer.decode(list(ids), skip_special_tokens=True))

    def _prompt(self, messages: Sequence[Message], prefill: str = "") -> _Prompt:
        text = self._template(messages, True) + prefill
        ids = self._encode(text)
        boundary = 0
        if len(messages) >= 2:
            try:
                head = self._template(messages[:-1], False)
            except Exception:  # some templates refuse a conversation that ends early
                head = ""
            if head and text.startswith(head):
                head_ids = self._encode(head)
                n = min(len(head_ids), len(ids) - 1)
                while boundary < n and head_ids[boundary] == ids[boundary]:
                    boundary += 1
        if self.max_context and len(ids) >= self.max_context:
            raise ValueError(f"prompt is {len(ids)} tokens; {self.model_id} takes at most {self.max_context}")
        return _Prompt(text, tuple(ids), boundary)

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return len(self._encode(self._template(messages, True)))

    def _detect_label_separator(self) -> str:
        probe = self._template([Message("user", "Which one?")], True)
        return "" if probe[-1:].isspace() else " "

    def label_token_ids(self, labels: Sequence[str]) -> tuple[int, ...]:
        """Token id of each label as the reply's first token; ValueError if a label set cannot be scored."""
        key = tuple(labels)
        cached = self._label_cache.get(key)
        if cached is None:
            cached = self._check_labels(key)
            if len(self._label_cache) >= 1024:  # label sets come from code and are few; bound it anyway
                self._label_cache.clear()
            self._label_cache[key] = cached
        if isinstance(cached, ValueError):
            raise cached
        return cached

    def _check_labels(self, labels: tuple[str, ...]) -> tuple[int, ...] | ValueError:
        if not labels:
            return ValueError("at least one label is needed")
        probe_text = self._template([Message("user", "Which one?")], True)
        probe = self._encode(probe_text)
        ids: list[int] = []
        for label in labels:
            if not label.strip():
                return ValueError(f"label {label!r} is empty")
            full = self._encode(probe_text + self._label_sep + label)
            extra = full[len(probe) :]
            if full[: len(probe)] != probe or len(extra) != 1:
                pieces = self._encode(self._label_sep + label)
                return ValueError(
                    f"label {label!r} is {max(len(extra), len(pieces))} tokens {pieces} after the prompt; "
                    "first-token scoring needs single-token labels (use A, B, C... or mode='loglik')"
                )
            ids.append(extra[0])
        if len(set(ids)) != len(ids):
            dup = [lab for lab, i in zip(labels, ids, strict=False) if ids.count(i) > 1]
            return ValueError(f"labels {dup} share a token id; labels must be distinct tokens")
        return tuple(ids)

    # ------------------------------------------------------------ forward core

    def _keep(self, n: int) -> dict[str, Any]:
        return {self._keep_kw: n} if self._keep_kw else {}

    def _forward(
        self,
        rows: Sequence[Sequence[int]],
        past: DynamicCache | None,
        past_len: int,
        *,
        left_pad: bool,
        keep_last: bool,
    ) -> tuple[torch.Tensor, DynamicCache, torch.Tensor]:
        """Run ``rows`` (padded) after ``past``; returns logits, the grown cache and the full attention mask.

        ``keep_last`` computes logits at the last column only: the last real
        token of every row when rows are left-padded (or there is one row).
        """
        if keep_last and not left_pad and len({len(r) for r in rows}) > 1:
            raise ValueError("keep_last needs left padding when rows differ in length")
        b = len(rows)
        width = max(len(r) for r in rows)
        ids = torch.full((b, width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((b, width), dtype=torch.long)
        for i, r in enumerate(rows):
            if left_pad:
                ids[i, width - len(r) :] = torch.tensor(r)
                mask[i, width - len(r) :] = 1
            else:
                ids[i, : len(r)] = torch.tensor(r)
                mask[i, : len(r)] = 1
        full_mask = torch.cat([torch.ones((b, past_len), dtype=torch.long), mask], dim=1)
        # Explicit positions: left padding after a prefix leaves a gap that the
        # default (cache-length based) positions would count.
        positions = (full_mask.cumsum(-1) - 1).clamp(min=0)[:, past_len:]
        if past is None:
            past = DynamicCache(config=self.model.config)
        # Without padding the default mask and positions are right, and leaving
        # them out lets attention take its faster purely causal path.
        padded = bool((mask == 0).any())
        out = self.model(
            input_ids=ids.to(self.device),
            attention_mask=full_mask.to(self.device) if padded else None,
            position_ids=positions.to(self.device) if padded else None,
            use_cache=True,
            **{self._cache_kw: past},
            **(self._keep(1) if keep_last else {}),
        )
        return out.logits, _out_cache(out), full_mask

    def _base_cache(self, key: tuple[int, ...], rows: int) -> DynamicCache | None:
        if not key:
            return None
        entry = self.prefix_cache.get(key)
        if entry is None:  # evicted in the middle of a batch: rebuild it
            _, entry, _ = self._forward([list(key)], None, 0, left_pad=False, keep_last=True)
            self.prefix_cache.put(key, entry)
        forked = _fork(entry)
        if rows > 1:
            forked.batch_repeat_interleave(rows)
        return forked

    def _prepare_prefixes(self, prompts: Sequence[_Prompt]) -> list[_Prefill]:
        """Pick each prompt's starting prefix, computing and storing boundary prefixes once per batch."""
        out: list[_Prefill] = []
        built: set[tuple[int, ...]] = set()
        for p in prompts:
            if not self.prefix_cache_enabled:
                out.append(_Prefill((), 0))
                continue
            hit = self.prefix_cache.longest_prefix(p.ids, len(p.ids) - 1)
            start_key = hit[0] if hit else ()
            boundary_key = p.ids[: p.boundary]
            if p.boundary > len(start_key) and p.boundary >= self.prefix_cache.min_tokens:
                if boundary_key in built:
                    out.append(_Prefill(boundary_key, len(boundary_key)))  # shared with an earlier request in this batch
                    continue
                base = _fork(hit[1]) if hit else None
                _, cache, _ = self._forward([list(boundary_key[len(start_key) :])], base, len(start_key), left_pad=False, keep_last=True)
                self.prefix_cache.put(boundary_key, cache)
                built.add(boundary_key)
                out.append(_Prefill(boundary_key, len(start_key)))
            else:
                out.append(_Prefill(start_key, len(start_key)))
        return out

    def _groups(self, prefills: Sequence[_Prefill]) -> list[list[int]]:
        """Indices grouped by starting prefix, each group chunked to the KV budget."""
        by_key: dict[tuple[int, ...], list[int]] = {}
        for i, pf in enumerate(prefills):
            by_key.setdefault(pf.key, []).append(i)
        groups: list[list[int]] = []
        for key, idx in by_key.items():
            per_row = 0
            if key:
                entry = self.prefix_cache.get(key)
                per_row = _kv_bytes_per_token(entry) * len(key) if entry is not None else 0
            chunk = max(1, self.kv_budget_bytes // per_row) if per_row else len(idx)
            groups.extend(idx[j : j + chunk] for j in range(0, len(idx), chunk))
        return groups

    # ----------------------------------------------------------------- scoring

    @torch.inference_mode()
    def score_batch(self, reqs: Sequence[ScoreRequest]) -> list[ScoreResult | Exception]:
        t0 = time.perf_counter()
        slots: Slots[ScoreResult] = Slots(len(reqs))
        prompts: dict[int, _Prompt] = {}

        def check(i: int) -> None:
            r = reqs[i]
            if r.mode not in tuple(ScoringMode):  # a request built from untyped input may carry anything
                raise ValueError(f"unknown scoring mode {r.mode!r}; use 'first_token' or 'loglik'")
            prompts[i] = self._prompt(r.messages)
            if r.mode == ScoringMode.FIRST_TOKEN:
                self.label_token_ids(r.labels)

        valid = slots.each(range(len(reqs)), check)
        first = [i for i in valid if reqs[i].mode == ScoringMode.FIRST_TOKEN]
        prefills: list[_Prefill] = []
        with slots.together(first):
            prefills = self._prepare_prefixes([prompts[i] for i in first]) if first else []
        for group in self._groups(prefills):
            idx = [first[g] for g in group]
            with slots.together(idx):
                key = prefills[group[0]].key
                rows = [list(prompts[i].ids[len(key) :]) for i in idx]
                logits, _, _ = self._forward(rows, self._base_cache(key, len(rows)), len(key), left_pad=True, keep_last=True)
                last = logits[:, -1, :].float()
                for row, (i, g) in enumerate(zip(idx, group, strict=False)):
                    label_ids = list(self.label_token_ids(reqs[i].labels))
                    full = torch.softmax(last[row], dim=-1)
                    probs = torch.softmax(last[row, label_ids], dim=-1)
                    slots[i] = ScoreResult(
                        probs=tuple(float(x) for x in probs),
                        model=self.model_id,
                        prompt_tokens=len(prompts[i].ids),
                        cached_tokens=prefills[g].cached_tokens,
                        extra={"label_mass": float(full[label_ids].sum())},
                    )
        loglik = [i for i in valid if reqs[i].mode == ScoringMode.LOGLIK and slots.empty(i)]
        slots.each(loglik, lambda i: self._score_loglik(reqs[i], prompts[i]))
        return slots.results(latency_s=time.perf_counter() - t0, missing="not scored")

    def _option_ids(self, prompt: _Prompt, option: str) -> list[int]:
        if not option.strip():
            raise ValueError(f"option {option!r} is empty")
        full = self._encode(prompt.text + self._label_sep + option)
        if tuple(full[: len(prompt.ids)]) == prompt.ids and len(full) > len(prompt.ids):
            return full[len(prompt.ids) :]
        return self._encode(self._label_sep + option)

    def _score_loglik(self, req: ScoreRequest, prompt: _Prompt) -> ScoreResult:
        if not req.labels:
            raise ValueError("at least one option is needed")
        options = [self._option_ids(prompt, o) for o in req.labels]
        (pf,) = self._prepare_prefixes([prompt])
        base = self._base_cache(pf.key, 1)
        logits, ctx_cache, _ = self._forward([list(prompt.ids[len(pf.key) :])], base, len(pf.key), left_pad=False, keep_last=True)
        first_lp = torch.log_softmax(logits[0, -1].float(), dim=-1)
        sums = [float(first_lp[o[0]]) for o in options]
        # The options share the context: run it once, then each option's tokens
        # (all but the last, whose logits nothing needs) as one right-padded batch.
        tails = [o[:-1] for o in options]
        if any(tails):
            live = [i for i, t in enumerate(tails) if t]
            fork = _fork(ctx_cache)
            if len(live) > 1:
                fork.batch_repeat_interleave(len(live))
            out, _, _ = self._forward([tails[i] for i in live], fork, len(prompt.ids), left_pad=False, keep_last=False)
            lps = torch.log_softmax(out.float(), dim=-1)
            for row, i in enumerate(live):
                opt = options[i]
                for j in range(1, len(opt)):
                    sums[i] += float(lps[row, j - 1, opt[j]])
        probs = torch.softmax(torch.tensor(sums, dtype=torch.float64), dim=-1)
        return ScoreResult(
            probs=tuple(float(x) for x in probs),
            model=self.model_id,
            prompt_tokens=len(prompt.ids),
            cached_tokens=pf.cached_tokens,
            extra={"loglik": sums, "option_tokens": [len(o) for o in options]},
        )

    # -------------------------------------------------------------- generation

    @torch.inference_mode()
    def generate_batch(self, reqs: Sequence[GenerateRequest]) -> list[GenerateResult | Exception]:
        t0 = time.perf_counter()
        slots: Slots[GenerateResult] = Slots(len(reqs))
        prompts: dict[int, _Prompt] = {}

        def check(i: int) -> None:
            r = reqs[i]
            if r.max_tokens < 1:
                raise ValueError("max_tokens must be at least 1")
            if r.temperature < 0 or not math.isfinite(r.temperature):
                raise ValueError("temperature must be a finite number >= 0")
            prompts[i] = self._prompt(r.messages, r.prefill)

        ok = slots.each(range(len(reqs)), check)
        prefills: list[_Prefill] = []
        with slots.together(ok):
            prefills = self._prepare_prefixes([prompts[i] for i in ok]) if ok else []
        for group in self._groups(prefills):
            idx = [ok[g] for g in group]
            with slots.together(idx):
                key = prefills[group[0]].key
                rows = [list(prompts[i].ids[len(key) :]) for i in idx]
                texts = self._decode([reqs[i] for i in idx], rows, key)
                for (text, n), i, g in zip(texts, idx, group, strict=False):
                    slots[i] = GenerateResult(
                        text=reqs[i].prefill + text,
                        model=self.model_id,
                        prompt_tokens=len(prompts[i].ids),
                        completion_tokens=n,
                        cached_tokens=prefills[g].cached_tokens,
                    )
        return slots.results(latency_s=time.perf_counter() - t0, missing="not generated")

    def _decode(self, reqs: Sequence[GenerateRequest], rows: list[list[int]], key: tuple[int, ...]) -> list[tuple[str, int]]:
        b = len(reqs)
        logits, cache, mask = self._forward(rows, self._base_cache(key, b), len(key), left_pad=True, keep_last=True)
        padded = bool((mask == 0).any())
        gens: list[torch.Generator | None] = []
        for r in reqs:
            if r.temperature > 0 and r.seed is not None:
                g = torch.Generator(device=self.device)
                g.manual_seed(r.seed)
                gens.append(g)
            else:
                gens.append(None)
        out: list[list[int]] = [[] for _ in range(b)]
        texts: list[str | None] = [None] * b
        done = [False] * b
        for _ in range(max(r.max_tokens for r in reqs)):
            last = logits[:, -1, :].float()
            greedy = last.argmax(dim=-1).tolist()  # one device sync for the whole batch
            nxt = torch.full((b, 1), self.pad_id, dtype=torch.long)
            for i, r in enumerate(reqs):
                if done[i]:
                    continue
                if r.temperature > 0:
                    probs = torch.softmax(last[i] / r.temperature, dim=-1)
                    tok = int(torch.multinomial(probs, 1, generator=gens[i]))
                else:
                    tok = int(greedy[i])
                if tok in self.eos_ids:
                    done[i] = True
                    continue
                out[i].append(tok)
                nxt[i, 0] = tok
                if r.stop:
                    text = self._decode_text(out[i])
                    cut = _first_stop(text, r.stop)
                    if cut is not None:
                        texts[i] = text[:cut]
                        done[i] = True
                if len(out[i]) >= r.max_tokens:
                    done[i] = True
            if all(done):
                break
            mask = torch.cat([mask, torch.ones((b, 1), dtype=torch.long)], dim=1)
            positions = (mask.sum(-1, keepdim=True) - 1)
            res = self.model(
                input_ids=nxt.to(self.device),
                attention_mask=mask.to(self.device) if padded else None,
                position_ids=positions.to(self.device) if padded else None,
                use_cache=True,
                **{self._cache_kw: cache},
                **self._keep(1),
            )
            logits, cache = res.logits, _out_cache(res)
        final: list[tuple[str, int]] = []
        for i, r in enumerate(reqs):
            stopped = texts[i]
            if stopped is None:
                full = self._decode_text(out[i])
                cut = _first_stop(full, r.stop) if r.stop else None
                stopped = full[:cut] if cut is not None else full
            final.append((stopped, len(out[i])))
        return final


def _out_cache(out: Any) -> DynamicCache:
    # transformers 5.x outputs carry the cache as `cache`; older ones as `past_key_values`.
    cache = out.get("cache") if hasattr(out, "get") else None
    return cast(DynamicCache, cache if cache is not None else out.past_key_values)


def _first_stop(text: str, stops: Sequence[str]) -> int | None:
    found = [text.find(s) for s in stops if s]
    found = [f for f in found if f >= 0]
    return min(found) if found else None
