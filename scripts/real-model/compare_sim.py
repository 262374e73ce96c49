#!/usr/bin/env python3
"""Replays the requests a real server answered (serve_openai.py --log-bodies) to the simulator
serving the OpenAI API (`lrab sim serve --api openai`) and compares, request by request, what
serving did: prompt tokens, prompt-cache hits, context refusals, output caps, and the real
server's prefill/decode timings against the shape of the simulator's duration model.

    compare_sim.py --bodies DIR --run RUN_DIR --lrab target/debug/lrab [--model sim-2b]

Prints a Markdown report (docs/real-model.md, "The simulator against the real server"). Each
request goes to the simulator as the real server got it (model name replaced), in the order it
was sent, all on one cache slot, as the real server has one. The simulator keeps its own reply
in its cache, the real server kept the real model's; the next request carries the real one, so
both caches stop at the previous reply unless it is rendered back the same way.
"""

import argparse
import csv
import glob
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def post(url, body):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def attempts(run_dir):
    """(arm, task, first ms, last ms) of every attempt, from cells.csv and proxy.jsonl."""
    out = []
    with open(os.path.join(run_dir, "cells.csv")) as f:
        for row in csv.DictReader(f):
            path = os.path.join(run_dir, row["attempt_dir"], "proxy.jsonl")
            if not os.path.exists(path):
                continue
            times = []
            for line in open(path):
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                t = e.get("time_ms")
                if t:
                    times.append((t, t + (e.get("elapsed_ms") or 0)))
            if times:
                out.append((row["arm"], row["task"], min(a for a, _ in times), max(b for _, b in times)))
    return out


def arm_of(ms, spans):
    for arm, _task, a, b in spans:
        if a - 2000 <= ms <= b + 2000:
            return arm
    return "?"


def fit_line(xs, ys):
    """Least squares y = a + b·x."""
    if len(xs) < 2:
        return float("nan"), float("nan")
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return my, float("nan")
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - b * mx, b


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bodies", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--lrab", required=True)
    p.add_argument("--model", default="sim-2b")
    p.add_argument("--ctx", type=int, default=8192)
    a = p.parse_args()

    port = free_port()
    sim = subprocess.Popen(
        [a.lrab, "sim", "serve", "--api", "openai", "--addr", f"127.0.0.1:{port}",
         "--default-ctx", str(a.ctx)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            urllib.request.urlopen(base + "/v1/models", timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    spans = attempts(a.run)
    rows = []
    try:
        for path in sorted(glob.glob(os.path.join(a.bodies, "*.json"))):
            ex = json.load(open(path))
            # (answered whole: serving is the same either way)
            req = dict(ex["request"], model=a.model, stream=False)
            req.pop("stream_options", None)
            status, ans = post(base + "/v1/chat/completions", req)
            real = ex["reply"] if ex["status"] == 200 else {}
            ru, su = real.get("usage", {}), ans.get("usage", {}) if status == 200 else {}
            t = real.get("timings", {})
            rc = (real.get("choices") or [{}])[0]
            sc = (ans.get("choices") or [{}])[0] if status == 200 else {}
            rows.append({
                "arm": arm_of(os.path.getmtime(path) * 1000, spans),
                "real_status": ex["status"], "sim_status": status,
                "real_prompt": ru.get("prompt_tokens", 0), "sim_prompt": su.get("prompt_tokens", 0),
                "real_cached": (ru.get("prompt_tokens_details") or {}).get("cached_tokens", 0),
                "sim_cached": (su.get("prompt_tokens_details") or {}).get("cached_tokens", 0),
                "real_finish": rc.get("finish_reason"), "sim_finish": sc.get("finish_reason"),
                "max_tokens": req.get("max_tokens") or req.get("max_completion_tokens"),
                "prompt_n": t.get("prompt_n"), "prompt_ms": t.get("prompt_ms"),
                "predicted_n": t.get("predicted_n"), "predicted_ms": t.get("predicted_ms"),
                "cache_n": t.get("cache_n"),
                "real_text_call": ((rc.get("message") or {}).get("content") or "").startswith("{"),
                "sim_error": "" if status == 200 else str(ans)[:160],
            })
    finally:
        sim.kill()
        sim.wait()
    report(rows)


def pct(a, b):
    return f"{100 * a / b:.0f} %" if b else "–"


def report(rows):
    print("| arm | requests | real prompt tokens | sim prompt tokens (ratio) | real cached | sim cached | real 400 | sim 400 | real `length` | sim `length` |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for arm in sorted({r["arm"] for r in rows}) + ["all"]:
        rs = [r for r in rows if arm in ("all", r["arm"])]
        both = [r for r in rs if r["real_status"] == 200 and r["sim_status"] == 200]
        rp, sp = sum(r["real_prompt"] for r in both), sum(r["sim_prompt"] for r in both)
        rcached, scached = sum(r["real_cached"] for r in both), sum(r["sim_cached"] for r in both)
        print(f"| {arm} | {len(rs)} | {rp:,} | {sp:,} ({sp / rp if rp else 0:.2f}) | "
              f"{rcached:,} ({pct(rcached, rp)}) | {scached:,} ({pct(scached, sp)}) | "
              f"{sum(r['real_status'] == 400 for r in rs)} | {sum(r['sim_status'] == 400 for r in rs)} | "
              f"{sum(r['real_finish'] == 'length' for r in rs)} | {sum(r['sim_finish'] == 'length' for r in rs)} |")
    timed = [r for r in rows if r["prompt_ms"] is not None and r["prompt_n"]]
    if timed:
        a, b = fit_line([r["prompt_n"] for r in timed], [r["prompt_ms"] for r in timed])
        dec = [r["predicted_ms"] / r["predicted_n"] for r in rows if r["predicted_n"]]
        full = [r for r in timed if r["cache_n"] == 0]
        warm = [r for r in timed if r["cache_n"] and r["prompt_n"] <= 16]
        print()
        print(f"Real prefill: {len(timed)} timed requests; prompt_ms = {a:.0f} + {b:.2f}·uncached tokens "
              f"(least squares); cold prompts (nothing cached) {len(full)}, median "
              f"{statistics.median([r['prompt_ms'] for r in full]) if full else float('nan'):.0f} ms; "
              f"nearly all cached (≤ 16 new tokens) {len(warm)}, median "
              f"{statistics.median([r['prompt_ms'] for r in warm]) if warm else float('nan'):.0f} ms. "
              f"Decode median {statistics.median(dec) if dec else float('nan'):.1f} ms/token.")
    errs = [r["sim_error"] for r in rows if r["sim_error"]]
    for e in sorted(set(errs))[:5]:
        print(f"\nsim refusal ({errs.count(e)}×): {e}")
    json.dump(rows, sys.stderr)


if __name__ == "__main__":
    main()
