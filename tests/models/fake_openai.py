"""A small OpenAI-compatible server for tests: a real aiohttp server on 127.0.0.1, port 0.

It speaks the parts of the API that ``OpenAIInference`` uses, in the shapes
vLLM returns them:

- ``POST /v1/chat/completions``: a scripted reply; with ``logprobs`` it lists
  ``top_logprobs`` from the scripted ``next_token_logprobs`` (most likely
  first, cut to the requested count), restricted to ``allowed_token_ids``
  when given (through ``vocab``), as vLLM does;
- ``POST /v1/completions`` with ``echo`` and ``logprobs``: a toy tokenizer
  (``\\s*\\S+`` pieces, so tokens carry their leading space) and a
  per-token logprob function, with character offsets.

Every request body is kept in ``requests`` so tests can check what was sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

_TOKEN = re.compile(r"\s*\S+|\s+$")


def toy_tokens(text: str) -> list[tuple[str, int]]:
    """(token, character offset) pairs; each token keeps the spaces before it."""
    return [(m.group(0), m.start()) for m in _TOKEN.finditer(text)]


def default_token_logprob(token: str) -> float:
    # Longer tokens are less likely: easy to compute by hand in a test.
    return -0.5 * len(token.strip())


@dataclass
class FakeOpenAI:
    model: str = "fake-vllm"
    reply: str = "hello there"
    # (token, logprob) the model would list for its next token, any order.
    next_token_logprobs: list[tuple[str, float]] = field(default_factory=list)
    vocab: dict[int, str] = field(default_factory=dict)  # token id -> token text, for allowed_token_ids
    token_logprob: Callable[[str], float] = default_token_logprob
    supports_echo: bool = True
    fail_next: int = 0  # answer this many requests with 500 first
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # The Authorization header of every request that reached the server (None when absent).
    auth: list[str | None] = field(default_factory=list)
    _server: TestServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() first"
        return str(self._server.make_url("/v1"))

    async def start(self) -> FakeOpenAI:
        app = web.Application(middlewares=[self._record_auth])
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/completions", self._completions)
        app.router.add_route("*", "/{tail:.*}", self._other)
        self._server = TestServer(app, host="127.0.0.1", port=0)
        await self._server.start_server()
        return self

    async def close(self) -> None:
        if self._server is not None:
            await self._server.close()

    @web.middleware
    async def _record_auth(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.auth.append(request.headers.get("Authorization"))
        response: web.StreamResponse = await handler(request)
        return response

    async def _other(self, request: web.Request) -> web.Response:
        self.requests.append((request.path, {}))
        return web.json_response({"error": {"message": "not found"}}, status=404)

    def _usage(self, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
        return {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": prompt_tokens // 2},
        }

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(("chat", body))
        if self.fail_next > 0:
            self.fail_next -= 1
            return web.json_response({"error": {"message": "scripted failure"}}, status=500)
        prompt_tokens = sum(len(toy_tokens(m["content"])) for m in body["messages"])
        if body.get("logprobs"):
            cands = list(self.next_token_logprobs)
            allowed = body.get("allowed_token_ids")
            if allowed is not None:
                texts = {self.vocab[i] for i in allowed}
                cands = [(t, lp) for t, lp in cands if t in texts]
            cands.sort(key=lambda c: -c[1])
            top = cands[: int(body.get("top_logprobs") or 0)]
            best = cands[0]
            content = best[0]
            logprobs: dict[str, Any] | None = {
                "content": [
                    {
                        "token": best[0],
                        "logprob": best[1],
                        "bytes": list(best[0].encode()),
                        "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top],
                    }
                ]
            }
        else:
            content = self.reply
            logprobs = None
        return web.json_response(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": self.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "logprobs": logprobs,
                        "finish_reason": "length",
                    }
                ],
                "usage": self._usage(prompt_tokens, len(toy_tokens(content))),
            }
        )

    async def _completions(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(("completions", body))
        if not self.supports_echo:
            return web.json_response({"error": {"message": "echo is not supported"}}, status=400)
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        choices = []
        total = 0
        for i, p in enumerate(prompts):
            toks = toy_tokens(p)
            total += len(toks)
            gen = " x"
            choices.append(
                {
                    "index": i,
                    "text": p + gen,
                    "logprobs": {
                        "tokens": [t for t, _ in toks] + [gen],
                        # The first prompt token has no context: null, as in vLLM.
                        "token_logprobs": [None] + [self.token_logprob(t) for t, _ in toks[1:]] + [-0.1],
                        "text_offset": [o for _, o in toks] + [len(p)],
                        "top_logprobs": None,
                    },
                    "finish_reason": "length",
                }
            )
        # Reverse the list: clients must order by "index", not by position.
        return web.json_response(
            {"object": "text_completion", "model": self.model, "choices": choices[::-1], "usage": self._usage(total, len(prompts))}
        )
