"""A stand-in for one platform service, for the launcher's tests (the real services are other
engineers' and are tested by them; the launcher only needs processes that behave like them).

Usage: python standin_service.py NAME. The gateway stand-in answers GET /v0/envs on
PLATFORM_HOST:PLATFORM_PORT. STANDIN_<NAME> picks a behaviour: ``serve`` (default; exits 0 on
SIGTERM), ``fail`` (exits 3 at once), ``crash`` (exits 3 after STANDIN_CRASH_AFTER seconds),
``crash-once`` (``crash`` on its first run, ``serve`` on the next ones: it leaves a marker file
beside STANDIN_RECORD), ``stubborn`` (ignores SIGTERM). STANDIN_RECORD names a file where it appends its environment
and its clean stops, one line each, so a test can check the order.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import sys
import threading
import time

name = sys.argv[1]
behaviour = os.environ.get(f"STANDIN_{name.upper()}", "serve")
record = os.environ.get("STANDIN_RECORD")
if behaviour == "crash-once":
    marker = f"{record}.{name}.crashed"
    behaviour = "serve" if os.path.exists(marker) else "crash"
    open(marker, "a").close()


def note(event: str) -> None:
    if record:
        with open(record, "a", encoding="utf-8") as f:
            f.write(f"{name} {event}\n")


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"[]" if self.path == "/v0/envs" else b"{}"
        self.send_response(200 if self.path == "/v0/envs" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


stop = threading.Event()
signal.signal(signal.SIGTERM, signal.SIG_IGN if behaviour == "stubborn" else lambda *_: stop.set())
print(f"{name} starting (nats {os.environ.get('PLATFORM_NATS_URL')})", flush=True)
if os.environ.get("PLATFORM_LOG_FORMAT") == "json":  # a line of its logging, as a service writes it
    print(json.dumps({"time": "2025-01-01T00:00:00.000Z", "level": "INFO", "service": name,
                      "logger": f"platform_{name}", "message": "logging in JSON"}), flush=True)
note("env " + json.dumps({k: v for k, v in os.environ.items() if k.startswith("PLATFORM_")}))
if behaviour == "fail":
    print("boom: bad settings", flush=True)
    sys.exit(3)
if name == "gateway":
    server = http.server.ThreadingHTTPServer((os.environ["PLATFORM_HOST"], int(os.environ["PLATFORM_PORT"])),
                                             Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
if behaviour == "crash":
    time.sleep(float(os.environ.get("STANDIN_CRASH_AFTER", "1")))
    print("boom: crashed", flush=True)
    sys.exit(3)
while not stop.wait(0.1):
    pass
note("stopped")
