#!/usr/bin/env python3
"""A scripted Ollama-compatible server for measuring lrab-harness peak RSS on a 100-turn run.

Usage: python3 benches/rss_server.py PORT_FILE
Writes the bound port to PORT_FILE, serves /api/show and /api/chat (streaming NDJSON) with a
100-turn conversation (plan, writes, reads, edits, listings, then finish), and exits after the
script is used up or after 10 minutes. Standard library only.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def script(turns=100):
    out = [("todo", {"action": "create", "items": ["write the parts", "check them", "finish"]})]
    i = 0
    while len(out) < turns - 3:
        f = "notes/part%d.md" % (i % 40)
        out.append(("write_file", {"path": f, "content": "# Part %d\n%s\n" % (i, "text " * 60)}))
        out.append(("read_file", {"path": f}))
        out.append(("edit_file", {"path": f, "old": "# Part %d" % i, "new": "# Part %d (checked)" % i}))
        out.append(("list_dir", {"path": "notes"}))
        i += 1
    out = out[: turns - 3]
    out.append(("todo", {"action": "done_all"}))
    out.append(("finish", {"summary": "done"}))
    out.append(("finish", {"summary": "done, re-read"}))
    return out


SCRIPT = script()
LOCK = threading.Lock()


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        if self.path == "/api/show":
            body = json.dumps({"details": {}, "model_info": {"general.architecture": "llama",
                               "llama.context_length": 32768}, "capabilities": ["completion", "tools"]})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())
            return
        with LOCK:
            name, args = SCRIPT.pop(0) if SCRIPT else ("finish", {"summary": "done"})
        lines = [
            {"model": "m", "created_at": "2026-01-01T00:00:00Z",
             "message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name, "arguments": args}}]},
             "done": False},
            {"model": "m", "created_at": "2026-01-01T00:00:00Z", "message": {"role": "assistant", "content": ""},
             "done": True, "done_reason": "stop", "prompt_eval_count": 2000, "eval_count": 50},
        ]
        body = "".join(json.dumps(x) + "\n" for x in lines).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    with open(sys.argv[1], "w") as f:
        f.write(str(srv.server_address[1]))
    threading.Timer(600, srv.shutdown).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
