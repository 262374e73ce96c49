"""Exercise the mock over real HTTP and write examples.md with every request and response.

Starts app.make_server on a free 127.0.0.1 port in a background thread, sends the example
requests with http.client, records them verbatim, and exits non-zero if any response
differs from what the contract says. The server's clock is a pinned, manually advanced
clock (make_server(clock=...)), so rate-limit windows and Retry-After values are the same
on every run.
"""
import http.client
import json
import sys
import threading
from datetime import datetime, timezone

import app

START = datetime(2026, 3, 4, 12, 0, 0, tzinfo=timezone.utc).timestamp()


class PinnedClock:
    """Stands still until advanced, so every run sees the same times."""

    def __init__(self, start):
        self.t = start

    def __call__(self):
        return self.t

    def advance(self, seconds):
        self.t += seconds

SHOWN_HEADERS = ("Content-Type", "Retry-After", "Idempotent-Replay", "Allow")


class Recorder:
    def __init__(self, port):
        self.port = port
        self.out = []
        self.failures = []

    def call(self, title, method, path, body=None, headers=None, expect=None, quiet=False):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        raw = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        hdrs = dict(headers or {})
        if raw is not None:
            hdrs["Content-Type"] = "application/json"
        conn.request(method, path, body=raw, headers=hdrs)
        resp = conn.getresponse()
        text = resp.read().decode("utf-8")
        conn.close()
        if expect is not None and resp.status != expect:
            self.failures.append(f"{title}: expected {expect}, got {resp.status}")
        if not quiet:
            req = [f"{method} {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in hdrs.items()]
            if raw is not None:
                req += ["", raw.decode("utf-8")]
            res = [f"HTTP/1.1 {resp.status} {resp.reason}"]
            res += [f"{k}: {resp.headers[k]}" for k in SHOWN_HEADERS if resp.headers.get(k)]
            res += ["", text]
            self.out += [f"## {title}", "", "Request:", "", "```http", *req, "```", "",
                         "Response:", "", "```http", *res, "```", ""]
        return resp, text


def main():
    clock = PinnedClock(START)
    server = app.make_server(clock=clock)
    port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    r = Recorder(port)
    gw = {"X-Gateway-Id": "gw-lab-01"}
    try:
        r.call("1. Store one reading (201)", "POST", "/v2/readings",
               {"sensor_id": "SN-07", "timestamp": "2026-03-04T08:00:00Z", "temperature_c": 21.4,
                "humidity_pct": 48.2, "pressure_hpa": 1012.6}, gw, expect=201)
        r.call("2. The same reading again is a duplicate (409)", "POST", "/v2/readings",
               {"sensor_id": "SN-07", "timestamp": "2026-03-04T08:00:00Z", "temperature_c": 21.4}, gw, expect=409)
        r.call("3. Rejection path: invalid fields (400 problem+json)", "POST", "/v2/readings",
               {"sensor_id": "sensor7", "timestamp": "2026-03-04 08:15", "temperature_c": 120,
                "colour": "blue"}, gw, expect=400)
        batch = {"readings": [
            {"sensor_id": "SN-07", "timestamp": "2026-03-04T08:15:00Z", "temperature_c": 21.9},
            {"sensor_id": "SN-08", "timestamp": "2026-03-04T08:15:00Z", "temperature_c": 19.5, "humidity_pct": 51.0},
            {"sensor_id": "SN-07", "timestamp": "2026-03-04T08:00:00Z", "temperature_c": 21.4},
            {"sensor_id": "SN-08", "timestamp": "2026-03-04T08:30:00Z", "temperature_c": -55.0},
        ]}
        bid = dict(gw, **{"X-Batch-Id": "gw-lab-01:000123"})
        _, first = r.call("4. Batch with an X-Batch-Id: mixed results (207)", "POST", "/v2/readings:batch",
                          batch, bid, expect=207)
        resp, replay = r.call("5. Retry of the same batch: replayed, nothing stored twice (207)", "POST",
                              "/v2/readings:batch", batch, bid, expect=207)
        if replay != first or resp.headers.get("Idempotent-Replay") != "true":
            r.failures.append("replay did not return the identical body with Idempotent-Replay: true")
        r.call("6. Same X-Batch-Id with a different body (422)", "POST", "/v2/readings:batch",
               {"readings": batch["readings"][:1]}, bid, expect=422)
        r.call("7. Batch over the 500-reading limit (413)", "POST", "/v2/readings:batch",
               {"readings": [batch["readings"][0]] * 501}, gw, expect=413)
        r.call("8. Statistics (200)", "GET", "/v2/stats", expect=200)
        r.call("9. Statistics for one sensor (200)", "GET", "/v2/stats?sensor_id=SN-08", expect=200)
        burst = {"X-Gateway-Id": "gw-burst"}
        statuses = []
        for i in range(60):
            resp, _ = r.call("burst", "POST", "/v2/readings",
                             {"sensor_id": "SN-99", "timestamp": f"2026-03-04T09:{i:02d}:00Z", "temperature_c": 20.0},
                             burst, quiet=True)
            statuses.append(resp.status)
        if statuses != [201] * 60:
            r.failures.append(f"burst: expected 60 x 201, got {sorted(set(statuses))}")
        r.out += ["## 10. Rate limit", "",
                  "Gateway `gw-burst` sent 60 valid single-reading POSTs within a few seconds; all 60 "
                  "were answered 201. The 61st write call inside the same minute:", ""]
        resp, _ = r.call("10b. 61st write call in one minute (429 + Retry-After)", "POST", "/v2/readings",
                         {"sensor_id": "SN-99", "timestamp": "2026-03-04T10:00:00Z", "temperature_c": 20.0},
                         burst, expect=429)
        if not (resp.headers.get("Retry-After") or "").isdigit():
            r.failures.append("429 without an integer Retry-After header")
        r.call("11. Reads are not rate limited (200)", "GET", "/v2/stats?sensor_id=SN-99",
               headers=burst, expect=200)
        clock.advance(60)
        r.out += ["## 12. After the window", "", "The server clock is advanced by 60 seconds (the Retry-After value); "
                  "the same gateway may write again:", ""]
        r.call("12b. Write after Retry-After has passed (201)", "POST", "/v2/readings",
               {"sensor_id": "SN-99", "timestamp": "2026-03-04T10:00:00Z", "temperature_c": 20.0},
               burst, expect=201)
        r.call("13. Timestamp more than 5 minutes in the future (400)", "POST", "/v2/readings",
               {"sensor_id": "SN-07", "timestamp": "2026-03-04T12:30:00Z", "temperature_c": 20.5}, gw, expect=400)
    finally:
        server.shutdown()
        server.server_close()
    head = ["# SensorHub v2 mock: worked examples", "",
            "Every exchange below was produced by `make_examples.py`, which starts `app.py` on a free",
            "local port and sends real HTTP requests; requests and responses are copied verbatim",
            "(response headers limited to Content-Type, Retry-After, Idempotent-Replay and Allow).",
            "The server clock is pinned at 2026-03-04T12:00:00Z and advanced explicitly, so the",
            "rate-limit window and Retry-After values are reproducible.", "",
            f"Checks against the contract: {'all passed' if not r.failures else 'FAILED: ' + '; '.join(r.failures)}.", ""]
    with open("examples.md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(head + r.out))
    if r.failures:
        sys.exit("; ".join(r.failures))
    print("examples.md written; all checks passed")


if __name__ == "__main__":
    main()
