"""Servers that are not chat endpoints, on 127.0.0.1: `python -m http.server` serving an
index.html (a POST gets its 501 HTML page), one that answers every POST with that page and
HTTP 200 — what a user gets when base_url points at a web site — and two other APIs: one that
answers a POST with a JSON object that is not a chat completion, one with server-sent events
of another protocol."""

from __future__ import annotations

import functools
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PAGE = "<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body><h1>It works</h1></body></html>\n"


def page_folder(root: Path) -> Path:
    folder = root / "site"
    folder.mkdir(exist_ok=True)
    (folder / "index.html").write_text(PAGE)
    return folder


@contextmanager
def http_server_module(root: Path) -> Iterator[str]:
    """`python -m http.server 0` in a subprocess; yields its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", str(page_folder(root))],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""  # "Serving HTTP on 127.0.0.1 port 41234 (...)"
        port = int(line.split(" port ")[1].split()[0])
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.kill()
        proc.wait()


class _PagePost(SimpleHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 — http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.path = "/index.html"
        self.do_GET()

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def page_on_post(root: Path) -> Iterator[str]:
    """A server answering every request, POST included, with index.html and HTTP 200."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_PagePost, directory=str(page_folder(root))))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


class _OtherApi(SimpleHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 — http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.server.events:  # type: ignore[attr-defined]
            body = b'event: message_start\ndata: {"type": "message_start", "message": {"id": "m1"}}\n\n'
            body += b'event: message_stop\ndata: {"type": "message_stop"}\n\n'
            kind = "text/event-stream"
        else:
            body, kind = b'{"status": "ok", "version": "1.2.0"}', "application/json"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def other_api(root: Path, events: bool = False) -> Iterator[str]:
    """A server answering a POST with JSON (or, `events`, a stream) of another protocol."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OtherApi)
    server.events = events  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
