"""SensorHub v2 ingestion API: in-memory mock server (standard library only).

Implements the contract in openapi.yaml: single and batch reading upload with per-field
validation, duplicate detection on (sensor_id, timestamp), X-Batch-Id idempotent replays,
a rolling-window rate limit per X-Gateway-Id, and GET /v2/stats. All errors are
application/problem+json. Data lives in memory and is lost when the process stops.

Run:  python app.py [--port 8080]        (binds 127.0.0.1)
"""
import argparse
import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MAX_BATCH = 500
RATE_LIMIT = 60            # write calls per gateway per rolling window
RATE_WINDOW_S = 60.0
BATCH_ID_TTL_S = 24 * 3600
FUTURE_SLACK = timedelta(minutes=5)
SENSOR_RE = re.compile(r"^SN-[0-9]{2,4}$")
TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")
BATCH_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{8,64}$")
FIELDS = {
    "sensor_id": True, "timestamp": True, "temperature_c": True,
    "humidity_pct": False, "pressure_hpa": False,
}
RANGES = {"temperature_c": (-40, 85), "humidity_pct": (0, 100), "pressure_hpa": (300, 1100)}
METRICS = ["temperature_c", "humidity_pct", "pressure_hpa"]


def problem(status, title, detail, errors=None):
    body = {"type": f"https://sensorhub.example/problems/{title.lower().replace(' ', '-')}",
            "title": title, "status": status, "detail": detail}
    if errors:
        body["errors"] = errors
    return status, body


def validate_reading(obj, now):
    """Field errors of one reading as [{field, message}]; empty when valid."""
    if not isinstance(obj, dict):
        return [{"field": "", "message": "a reading must be a JSON object"}]
    errors = []
    for key in obj:
        if key not in FIELDS:
            errors.append({"field": key, "message": "unknown field"})
    for key, required in FIELDS.items():
        if required and key not in obj:
            errors.append({"field": key, "message": "required field is missing"})
    sid = obj.get("sensor_id")
    if "sensor_id" in obj and (not isinstance(sid, str) or not SENSOR_RE.match(sid)):
        errors.append({"field": "sensor_id", "message": "must match ^SN-[0-9]{2,4}$"})
    ts = obj.get("timestamp")
    if "timestamp" in obj:
        if not isinstance(ts, str) or not TS_RE.match(ts):
            errors.append({"field": "timestamp", "message": "must be an RFC 3339 UTC date-time ending in Z"})
        else:
            try:
                when = datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
                if when > now + FUTURE_SLACK:
                    errors.append({"field": "timestamp", "message": "more than 5 minutes in the future"})
            except ValueError:
                errors.append({"field": "timestamp", "message": "not a valid calendar date-time"})
    for key, (lo, hi) in RANGES.items():
        if key in obj:
            val = obj[key]
            if isinstance(val, bool) or not isinstance(val, (int, float)):
                errors.append({"field": key, "message": "must be a number"})
            elif not lo <= val <= hi:
                errors.append({"field": key, "message": f"must be between {lo} and {hi}"})
    return errors


class Store:
    """All server state; one lock keeps concurrent requests consistent."""

    def __init__(self, clock=time.time, rate_limit=RATE_LIMIT):
        self.clock = clock
        self.rate_limit = rate_limit
        self.lock = threading.Lock()
        self.readings = {}          # (sensor_id, timestamp) -> reading
        self.batches = {}           # batch id -> (body sha256, expires_at, status, response body)
        self.calls = {}             # gateway id -> deque of call times

    def now_utc(self):
        return datetime.fromtimestamp(self.clock(), tz=timezone.utc)

    def rate_check(self, gateway):
        """None if the call is allowed (and counted), else the Retry-After seconds."""
        now = self.clock()
        window = self.calls.setdefault(gateway, deque())
        while window and window[0] <= now - RATE_WINDOW_S:
            window.popleft()
        if len(window) >= self.rate_limit:
            return max(1, math.ceil(window[0] + RATE_WINDOW_S - now))
        window.append(now)
        return None

    def insert(self, reading):
        """'created' or 'duplicate'."""
        key = (reading["sensor_id"], reading["timestamp"])
        if key in self.readings:
            return "duplicate"
        self.readings[key] = dict(reading)
        return "created"

    def post_single(self, body):
        errors = validate_reading(body, self.now_utc())
        if errors:
            return problem(400, "Validation failed", "the reading is invalid", errors)
        if self.insert(body) == "duplicate":
            return problem(409, "Duplicate reading",
                           f"a reading for {body['sensor_id']} at {body['timestamp']} is already stored")
        return 201, body

    def post_batch(self, body):
        if not isinstance(body, dict) or not isinstance(body.get("readings"), list) or set(body) - {"readings"}:
            return problem(400, "Malformed batch", "the body must be a JSON object with a 'readings' array only")
        items = body["readings"]
        if len(items) > MAX_BATCH:
            return problem(413, "Batch too large", f"{len(items)} readings; at most {MAX_BATCH} per batch")
        now = self.now_utc()
        results, counts = [], {"created": 0, "duplicate": 0, "rejected": 0}
        for i, item in enumerate(items):
            errors = validate_reading(item, now)
            if errors:
                results.append({"index": i, "status": "rejected", "errors": errors})
                counts["rejected"] += 1
                continue
            status = self.insert(item)
            results.append({"index": i, "status": status})
            counts[status] += 1
        return 207, {"received": len(items), **counts, "results": results}

    def stats(self, sensor_id=None):
        per = {}
        for (sid, _), r in sorted(self.readings.items()):
            if sensor_id and sid != sensor_id:
                continue
            per.setdefault(sid, []).append(r)
        sensors = []
        for sid, rows in per.items():
            entry = {"sensor_id": sid, "count": len(rows)}
            for m in METRICS:
                vals = [r[m] for r in rows if m in r]
                entry[m] = ({"min": min(vals), "max": max(vals), "mean": round(sum(vals) / len(vals), 3)}
                            if vals else None)
            sensors.append(entry)
        return 200, {"total_count": sum(s["count"] for s in sensors), "sensors": sensors}


class Handler(BaseHTTPRequestHandler):
    server_version = "SensorHubMock/2.0"
    store = None  # set by make_server

    def log_message(self, fmt, *args):  # keep test output quiet
        pass

    def send_json(self, status, body, extra_headers=()):
        data = json.dumps(body, indent=2).encode("utf-8")
        self.send_response(status)
        ctype = "application/problem+json" if status >= 400 else "application/json"
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra_headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def read_json(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return raw, json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return raw, exc

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/v2/stats":
            sensor = parse_qs(url.query).get("sensor_id", [None])[0]
            with self.store.lock:
                self.send_json(*self.store.stats(sensor))
        elif url.path in ("/v2/readings", "/v2/readings:batch"):
            self.send_json(*problem(405, "Method not allowed", "use POST"), [("Allow", "POST")])
        else:
            self.send_json(*problem(404, "Not found", f"no resource at {url.path}"))

    def do_POST(self):
        path = urlsplit(self.path).path
        if path not in ("/v2/readings", "/v2/readings:batch"):
            self.send_json(*problem(404, "Not found", f"no resource at {path}"))
            return
        raw, body = self.read_json()
        gateway = self.headers.get("X-Gateway-Id") or f"addr:{self.client_address[0]}"
        with self.store.lock:
            retry = self.store.rate_check(gateway)
            if retry is not None:
                self.send_json(*problem(429, "Too many requests",
                                        f"gateway {gateway} exceeded {self.store.rate_limit