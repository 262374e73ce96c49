#!/usr/bin/env python3
"""Checks every scenario in this folder: the TOML parses, required keys are there,
every NDJSON line / SSE data payload / JSON body is valid JSON, and cut_after_bytes
falls inside the body. Usage: python3 check.py [files...] (default: all *.toml here)."""
import glob, json, os, sys, tomllib

here = os.path.dirname(os.path.abspath(__file__))
paths = sys.argv[1:] or sorted(glob.glob(os.path.join(here, "*.toml")))
bad = 0

def fail(p, msg):
    global bad
    bad += 1
    print(f"FAIL {os.path.basename(p)}: {msg}")

def check_body(p, where, ctype, body):
    if ctype.startswith("application/x-ndjson"):
        if not body.endswith("\n"):
            fail(p, f"{where}: NDJSON body must end with a newline")
        for i, line in enumerate(body.split("\n")[:-1]):
            try:
                json.loads(line)
            except Exception as e:
                fail(p, f"{where}: NDJSON line {i + 1}: {e}")
    elif ctype.startswith("text/event-stream"):
        if not body.endswith("\n\n"):
            fail(p, f"{where}: SSE body must end with a blank line")
        for ev in body.split("\n\n")[:-1]:
            if not ev.startswith("data: "):
                fail(p, f"{where}: SSE event without 'data: ': {ev[:40]!r}")
                continue
            payload = ev[len("data: "):]
            if payload == "[DONE]":
                continue
            try:
                json.loads(payload)
            except Exception as e:
                fail(p, f"{where}: SSE payload {payload[:40]!r}: {e}")
    elif ctype.startswith("application/json"):
        try:
            json.loads(body)
        except Exception as e:
            fail(p, f"{where}: JSON body: {e}")
    else:
        fail(p, f"{where}: unexpected content_type {ctype!r}")

for p in paths:
    try:
        d = tomllib.load(open(p, "rb"))
    except Exception as e:
        fail(p, f"TOML: {e}")
        continue
    for k in ("title", "source", "what", "api", "expect"):
        if k not in d:
            fail(p, f"missing {k}")
    if d.get("api") not in ("ollama", "openai"):
        fail(p, "api must be ollama or openai")
    if d.get("tail", "native") not in ("native", "text"):
        fail(p, "tail must be native or text")
    for i, r in enumerate(d.get("route", [])):
        check_body(p, f"route[{i}] {r.get('path')}", r["content_type"], r["body"])
    for i, c in enumerate(d.get("chat", [])):
        check_body(p, f"chat[{i}]", c["content_type"], c["body"])
        cut = c.get("cut_after_bytes", 0)
        if cut and not (0 < cut < len(c["body"].encode())):
            fail(p, f"chat[{i}]: cut_after_bytes outside the body")
    e = d.get("expect", {})
    if "exit_code" not in e:
        fail(p, "expect.exit_code missing")
    if "out_md" in e and e.get("out_md_absent"):
        fail(p, "out_md and out_md_absent both set")

print(f"{len(paths)} scenario files checked, {bad} problems")
sys.exit(1 if bad else 0)
