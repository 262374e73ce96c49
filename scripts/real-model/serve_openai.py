#!/usr/bin/env python3
"""A real small model behind an OpenAI-compatible chat API, with working tool calls.

Why this exists: the registries here ship a real inference engine (llama-cpp-python) and real
small GGUF models, but no server whose tool calling works for agents: llama-cpp-python's own
`chatml-function-calling` format drops `role: "tool"` messages, so tool results never reach the
model (docs/runner.md, "A real model on this machine"). This server keeps the engine and the
model's own chat template and does the one thing that is missing: every message, tool results
included, is rendered through the model's template, and when the request offers tools the reply
is constrained by a grammar to one JSON object, either a call of an offered tool (its arguments
fitted to the tool's JSON schema) or a message. The reply goes back in OpenAI's shape
(`tool_calls`, `finish_reason`, `usage.prompt_tokens_details.cached_tokens`), as vLLM or
llama-server would send it.

Only the standard library and llama_cpp are used. One request is computed at a time (one model,
one KV cache); the prompt cache is llama.cpp's own prefix reuse, and `cached_tokens` reports the
prefix it reused.
"""

import argparse
import itertools
import os
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import llama_cpp.llama_cpp as llama_c
from llama_cpp import Llama, LlamaGrammar
from llama_cpp.llama_chat_format import Jinja2ChatFormatter

CALL_HINT = (
    "You can use tools. To call one, reply with exactly one JSON object "
    '{"name": <tool name>, "arguments": {...}}. To answer without a tool, reply with '
    '{"message": <your answer>}. The tools:\n'
)


def text_of(content):
    """OpenAI content is a string, null or a list of parts; the template wants text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def call_text(call):
    """An earlier tool call, written as the model would have written it (keeps the prefix)."""
    fn = call.get("function", {})
    args = fn.get("arguments", "{}")
    try:
        args = json.loads(args) if isinstance(args, str) else args
    except ValueError:
        pass
    return json.dumps({"name": fn.get("name", ""), "arguments": args}, ensure_ascii=False)


def tool_list(tools):
    lines = []
    for t in tools:
        fn = t.get("function", t)
        params = json.dumps(fn.get("parameters", {}), ensure_ascii=False)
        lines.append(f"- {fn.get('name')}: {fn.get('description', '')} parameters: {params}")
    return "\n".join(lines)


def template_messages(messages, tools):
    """The request's messages as plain role/content pairs for the model's template."""
    out = []
    for m in messages:
        role = m.get("role", "user")
        body = text_of(m.get("content"))
        if role == "assistant" and m.get("tool_calls"):
            calls = "\n".join(call_text(c) for c in m["tool_calls"])
            body = (body + "\n" + calls).strip()
        elif role == "assistant" and tools and body and not body.lstrip().startswith("{"):
            body = json.dumps({"message": body}, ensure_ascii=False)
        elif role == "tool":
            name = m.get("name") or m.get("tool_call_id") or "tool"
            body = f"Result of {name}:\n{body}"
        out.append({"role": role, "content": body})
    if tools:
        hint = CALL_HINT + tool_list(tools)
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": out[0]["content"] + "\n\n" + hint}
        else:
            out.insert(0, {"role": "system", "content": hint})
    return out


def reply_schema(tools):
    """One JSON object: a call of an offered tool with its arguments' schema, or a message."""
    choices = []
    for t in tools:
        fn = t.get("function", t)
        params = fn.get("parameters") or {"type": "object"}
        choices.append(
            {
                "type": "object",
                "properties": {"name": {"const": fn.get("name")}, "arguments": params},
                "required": ["name", "arguments"],
            }
        )
    choices.append(
        {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}
    )
    return {"anyOf": choices}


def grammar_for(tools, log):
    """The grammar for a request's tools; a schema the converter refuses loosens to objects."""
    try:
        return LlamaGrammar.from_json_schema(json.dumps(reply_schema(tools)), verbose=False)
    except Exception as err:  # the converter's coverage of JSON Schema is partial
        log(f"schema not convertible ({err}); arguments left free-form")
        loose = [dict(t, function=dict(t.get("function", t), parameters={"type": "object"})) for t in tools]
        return LlamaGrammar.from_json_schema(json.dumps(reply_schema(loose)), verbose=False)


def without_extra_buffers():
    """Load weights without llama.cpp's extra buffer types (AMX, repacking).

    Why: on these machines' CPUs (AMX advertised), llama.cpp's AMX matrix multiply crashes
    with a segmentation fault inside the first decode; the plain CPU path is correct.
    """
    default = llama_c.llama_model_default_params

    def params():
        p = default()
        p.use_extra_bufts = False
        return p

    llama_c.llama_model_default_params = params


class Engine:
    def __init__(self, args):
        if not args.extra_buffers:
            without_extra_buffers()
        self.llm = Llama(
            model_path=args.model,
            n_ctx=args.n_ctx,
            n_threads=args.threads,
            n_threads_batch=args.threads,
            verbose=False,
            seed=args.seed,
        )
        self.n_ctx = args.n_ctx
        self.max_tokens = args.max_tokens
        self.alias = args.alias
        meta = self.llm.metadata
        template = meta.get("tokenizer.chat_template")
        if not template:
            sys.exit(f"{args.model}: the model file carries no chat template")
        eos = self.llm.detokenize([self.llm.token_eos()]).decode("utf-8", "replace")
        bos = self.llm.detokenize([self.llm.token_bos()]).decode("utf-8", "replace")
        self.formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        self.lock = threading.Lock()

    def cached_prefix(self, tokens):
        """How many of the prompt's tokens llama.cpp will reuse from its KV cache."""
        have = list(self.llm._input_ids[: self.llm.n_tokens])
        n = 0
        for a, b in zip(have, tokens):
            if a != b:
                break
            n += 1
        return min(n, max(len(tokens) - 1, 0))

    def complete(self, req, log):
        tools = req.get("tools") or []
        if req.get("tool_choice") == "none":
            tools = []
        msgs = template_messages(req.get("messages", []), tools)
        fmt = self.formatter(messages=msgs)
        tokens = self.llm.tokenize(fmt.prompt.encode("utf-8"), add_bos=False, special=True)
        if len(tokens) >= self.n_ctx:
            raise ContextError(len(tokens), self.n_ctx)
        room = self.n_ctx - len(tokens)
        want = req.get("max_completion_tokens") or req.get("max_tokens") or self.max_tokens
        max_tokens = max(1, min(int(want), room, self.max_tokens))
        grammar = grammar_for(tools, log) if tools else None
        stops = [s for s in (fmt.stop or []) if s] if not tools else []
        with self.lock:
            cached = self.cached_prefix(tokens)
            t0 = time.monotonic()
            # streamed from llama.cpp so that prefill (to the first token) and decode are timed
            # apart, as llama-server's `timings` report them
            first, text, finish, n = None, "", None, 0
            for part in self.llm.create_completion(
                prompt=tokens,
                max_tokens=max_tokens,
                temperature=float(req.get("temperature", 0.8)),
                top_p=float(req.get("top_p", 0.95)),
                seed=req.get("seed"),
                stop=stops or None,
                grammar=grammar,
                stream=True,
            ):
                if first is None:
                    first = time.monotonic() - t0
                c = part["choices"][0]
                text += c.get("text") or ""
                finish = c.get("finish_reason") or finish
                n += 1
            took = time.monotonic() - t0
        first = took if first is None else first
        choice = {"text": text, "finish_reason": finish}
        n_completion = len(self.llm.tokenize(text.encode("utf-8"), add_bos=False)) if text else 0
        usage = {"prompt_tokens": len(tokens), "completion_tokens": n_completion,
                 "total_tokens": len(tokens) + n_completion}
        timings = {"cache_n": cached, "prompt_n": len(tokens) - cached,
                   "prompt_ms": round(first * 1e3, 1), "predicted_n": n_completion,
                   "predicted_ms": round((took - first) * 1e3, 1)}
        log(
            json.dumps(
                {"messages": len(msgs), "tools": len(tools), "prompt": len(tokens), "cached": cached,
                 "completion": n_completion, "max_tokens": max_tokens,
                 "finish": finish, "seconds": round(took, 2), "first_token_s": round(first, 3)}
            )
        )
        return shape_reply(self.alias, choice, usage, cached, tools, timings)


class ContextError(Exception):
    def __init__(self, have, limit):
        super().__init__(
            f"This model's maximum context length is {limit} tokens. However, your messages "
            f"resulted in {have} tokens."
        )


def shape_reply(alias, choice, usage, cached, tools, timings):
    text = choice.get("text", "")
    finish = choice.get("finish_reason") or "stop"
    message = {"role": "assistant", "content": text}
    if tools:
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and "name" in obj:
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_" + uuid.uuid4().hex[:12],
                        "type": "function",
                        "function": {
                            "name": obj["name"],
                            "arguments": json.dumps(obj.get("arguments", {}), ensure_ascii=False),
                        },
                    }
                ],
            }
            finish = "tool_calls"
        elif isinstance(obj, dict) and "message" in obj:
            message = {"role": "assistant", "content": str(obj["message"])}
    return {
        "id": "chatcmpl-" + uuid.uuid4().hex[:16],
        "object": "chat.completion",
        "created": int(time.time()),
        "model": alias,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": usage.get("prompt_tokens", 0),
            "completion_tokens": usage.get("completion_tokens", 0),
            "total_tokens": usage.get("total_tokens", 0),
            "prompt_tokens_details": {"cached_tokens": cached},
        },
        "timings": timings,
    }


def sse_events(reply):
    """The reply as a chat.completion.chunk stream (computed first, then sent in pieces)."""
    base = {k: reply[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    msg = reply["choices"][0]["message"]
    yield dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}}])
    if msg.get("tool_calls"):
        calls = [dict(c, index=i) for i, c in enumerate(msg["tool_calls"])]
        yield dict(base, choices=[{"index": 0, "delta": {"tool_calls": calls}}])
    else:
        text = msg.get("content") or ""
        for i in range(0, len(text), 16):
            yield dict(base, choices=[{"index": 0, "delta": {"content": text[i : i + 16]}}])
    finish = reply["choices"][0]["finish_reason"]
    yield dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}])
    yield dict(base, choices=[], usage=reply["usage"])


def make_handler(engine, api_key, log, bodies):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            log(fmt % args)

        def send_json(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def error(self, code, message, kind, err_code=None):
            self.send_json(code, {"error": {"message": message, "type": kind, "code": err_code}})

        def authorized(self):
            if not api_key:
                return True
            if self.headers.get("Authorization", "") == f"Bearer {api_key}":
                return True
            self.error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
            return False

        def do_GET(self):
            if not self.authorized():
                return
            if self.path.rstrip("/") == "/v1/models":
                data = [{"id": engine.alias, "object": "model", "owned_by": "local",
                         "max_model_len": engine.n_ctx}]
                return self.send_json(200, {"object": "list", "data": data})
            if self.path == "/health":
                return self.send_json(200, {"status": "ok"})
            self.error(404, f"no route {self.path}", "not_found_error")

        def do_POST(self):
            if not self.authorized():
                return
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self.error(404, f"no route {self.path}", "not_found_error")
            try:
                size = int(self.headers.get("Content-Length", "0"))
                req = json.loads(self.rfile.read(size) or b"{}")
            except ValueError as err:
                return self.error(400, f"request body is not JSON: {err}", "invalid_request_error")
            if req.get("model") not in (None, engine.alias):
                return self.error(404, f"The model `{req.get('model')}` does not exist.",
                                  "invalid_request_error", "model_not_found")
            try:
                reply = engine.complete(req, log)
            except ContextError as err:
                bodies(req, 400, {"error": str(err)})
                return self.error(400, str(err), "invalid_request_error", "context_length_exceeded")
            bodies(req, 200, reply)
            if not req.get("stream"):
                return self.send_json(200, reply)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in sse_events(reply):
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="a GGUF file with a chat template")
    p.add_argument("--alias", required=True, help="the model name clients ask for")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8090)
    p.add_argument("--n-ctx", type=int, default=8192)
    p.add_argument(
        "--max-tokens",
        type=int,
        default=512,
        help="cap on a reply's tokens (a tiny model in a JSON grammar can write one string forever)",
    )
    p.add_argument("--threads", type=int, default=1, help="one is robust on a shared machine")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--api-key-env", default="", help="require this variable's value as bearer key")
    p.add_argument("--extra-buffers", action="store_true", help="allow AMX/repacked weights")
    p.add_argument("--log", default="-", help="request log file ('-' = stderr)")
    p.add_argument("--log-bodies", default="", help="write every chat request and answer here")
    args = p.parse_args()
    import os

    api_key = os.environ.get(args.api_key_env, "") if args.api_key_env else ""
    sink = sys.stderr if args.log == "-" else open(args.log, "a", buffering=1)

    def log(line):
        sink.write(time.strftime("%H:%M:%S ") + line + "\n")

    seq = itertools.count()

    def bodies(req, status, reply):
        """Every chat request and its answer, for replaying the same requests elsewhere."""
        if args.log_bodies:
            os.makedirs(args.log_bodies, exist_ok=True)
            path = os.path.join(args.log_bodies, f"{next(seq):06d}.json")
            with open(path, "w") as f:
                json.dump({"request": req, "status": status, "reply": reply}, f)

    engine = Engine(args)
    server = ThreadingHTTPServer((args.host, args.port), make_handler(engine, api_key, log, bodies))
    log(f"serving {args.alias} ({args.model}, n_ctx {args.n_ctx}) on http://{args.host}:{server.server_port}")
    print(f"ready http://{args.host}:{server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
