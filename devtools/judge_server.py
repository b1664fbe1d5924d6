"""A scripted OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks (no network, no model).

`JudgeServer` serves `POST /v1/chat/completions` from a `ThreadingHTTPServer` in a daemon thread. Answers come
from a script (prompt -> text, by default the CHIMERA rule "Yes iff the two spans are equal ignoring case"),
and failures can be injected: 429s for the first K requests, 500s on chosen request numbers, a fixed or
per-prompt delay, malformed JSON bodies, truncated answers, a "hold" that stops answering after N answers
(so a test can kill a client mid-run without it receiving anything more), a server that dies after N answers
(`die_after`: it closes its listening socket and every open connection, as a killed llama.cpp does, so later
requests are refused), 5xx for every request (`always_status`), a non-numeric `usage` block, a reply that echoes
the request's Authorization header (`echo_auth_in_reply`), Basic auth (`basic_auth`) and an endpoint under another
path (`root`, e.g. a key in the path). The server counts what it received and answered, the most requests it had in
flight at once, and the Authorization headers it saw.

Use it as a context manager:

    with JudgeServer(delay=0.2) as srv:
        os.environ["OPENAI_BASE_URL"] = srv.base_url
        ...
        assert srv.max_in_flight <= 8

or from the shell (`python devtools/judge_server.py --delay 0.2`) to point a manual run at it.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SPANS_RE = re.compile(r"<span1>\n(.*?)\n</span1>\s*<span2>\n(.*?)\n</span2>", re.S)
YES_TEXT = "<justification>The spans name the same idea.</justification>\n<answer>Yes</answer>"
NO_TEXT = "<justification>The spans name different ideas.</justification>\n<answer>No</answer>"
TRUNCATED_TEXT = "<justification>The first span talks about a method that, when compared to the second"

Script = Callable[[str], "str | tuple[str, str]"]
"""prompt -> answer text, or (answer text, finish_reason)."""


def spans_of(prompt: str) -> tuple[str, str] | None:
    """The (span1, span2) of a CHIMERA span-comparison prompt, or None for another prompt."""
    m = SPANS_RE.search(prompt)
    return (m.group(1), m.group(2)) if m else None


def equal_spans_script(prompt: str) -> str:
    """The default script: Yes iff the two spans are equal case-insensitively (and whitespace-trimmed)."""
    spans = spans_of(prompt)
    if spans is None:
        return "<answer>No</answer>"
    return YES_TEXT if spans[0].strip().casefold() == spans[1].strip().casefold() else NO_TEXT


def equal_spans_json(prompt: str) -> str:
    """The default script's answer as a structured JSON reply (sent when the request has a `response_format`)."""
    spans = spans_of(prompt)
    same = spans is not None and spans[0].strip().casefold() == spans[1].strip().casefold()
    return json.dumps({"justification": "The spans name the same idea." if same else "They differ.",
                       "answer": "yes" if same else "no"})


PAD_MARK = "@@pad@@"
"""Where `pad_reply` padding goes in a reply (written in pieces, never built whole)."""


class JudgeServer:
    """A scripted `/v1/chat/completions` endpoint; see the module docstring.

    Args:
        script: prompt -> answer text (or (text, finish_reason)); default `equal_spans_script`, or
            `equal_spans_json` for a request with a `response_format`.
        delay: seconds to wait before each answer, or a function prompt -> seconds.
        rate_limit_first: the first K requests get `429` (with `Retry-After: 0`).
        server_error_on: 1-based request numbers that get `500`.
        malformed_on: 1-based request numbers that get `200` with a body that is not JSON.
        hold_after: after this many answers, further requests wait (unanswered) until `release()` or
            `drop_held()`.
        usage: include a `usage` block (prompt/completion tokens = whitespace word counts).
        api_key: when set, a request with another bearer token gets `401` whose message repeats the token it
            was given (as OpenAI's does), to check that clients keep keys out of what they store.
        echo_auth: the `401` message repeats the whole `Authorization` header (`Basic ...` too) instead.
        status_on: 1-based request number -> HTTP status to answer with (e.g. {1: 400} for a context overflow).
        slots: when set, `GET /props` answers `{"total_slots": slots}` as llama.cpp's server does (with
            `api_key` set, only to a request that carries it; `props_auth` records what each probe carried).
        die_after: after this many answers the server dies: requests in flight get their connection closed
            unanswered and the port refuses new connections.
        always_status: every chat request gets this HTTP status (e.g. 503).
        usage_value: when set, the `usage` token counts are this value (e.g. "n/a") instead of numbers.
        model_name: the `model` a reply names (default: the request's), as a real server names what it serves.
        models: when set, `GET /v1/models` lists these model ids (a llama.cpp server lists the one it serves).
        port: the port to listen on (default: a free one); a test restarts a dead server at its old address.
        echo_auth_in_reply: every successful reply ends with the request's `Authorization` header (a server that
            echoes it back), to check that clients keep keys out of the answers they store.
        basic_auth: (user, password) every request (chat, `/props`, `/models`) must carry as Basic auth, else 401.
        root: the path the OpenAI-compatible routes live under (default `/v1`; e.g. `/v1/key-3f9a…`).
        drip: seconds between the bytes of every chat reply, headers included (a server that answers at one byte
            a second: each read arrives in time, the request never ends).
        pad_reply: bytes of padding added to every chat reply's answer text (a huge reply, sent without a
            `Content-Length`: read to the end of the connection).
        gzip_reply: every chat reply is gzip-compressed (`Content-Encoding: gzip`), e.g. a padded one: a bomb.
        redirect_to: every chat request is answered `307` with `Location: redirect_to` + the request's path (a
            judge behind a redirect, e.g. to another host).
    """

    def __init__(self, script: Script | None = None, *, delay: float | Callable[[str], float] = 0.0,
                 rate_limit_first: int = 0, server_error_on: Iterable[int] = (), malformed_on: Iterable[int] = (),
                 hold_after: int | None = None, usage: bool = True, api_key: str | None = None,
                 echo_auth: bool = False, status_on: dict[int, int] | None = None, slots: int | None = None,
                 die_after: int | None = None, always_status: int | None = None, usage_value: object = None,
                 model_name: str | None = None, models: list[str] | None = None, port: int = 0,
                 echo_auth_in_reply: bool = False, basic_auth: tuple[str, str] | None = None,
                 root: str = "/v1", drip: float = 0.0, pad_reply: int = 0, gzip_reply: bool = False,
                 redirect_to: str | None = None) -> None:
        self.drip = drip
        self.pad_reply = pad_reply
        self.gzip_reply = gzip_reply
        self.redirect_to = redirect_to
        self.script = script
        self.delay = delay
        self.rate_limit_first = rate_limit_first
        self.server_error_on = set(server_error_on)
        self.malformed_on = set(malformed_on)
        self.hold_after = hold_after
        self.usage = usage
        self.api_key = api_key
        self.echo_auth = echo_auth
        self.status_on = dict(status_on or {})
        self.slots = slots
        self.die_after = die_after
        self.always_status = always_status
        self.usage_value = usage_value
        self.model_name = model_name
        self.models = models
        self._port = port
        self.echo_auth_in_reply = echo_auth_in_reply
        self.basic_auth = basic_auth
        self.root = "/" + root.strip("/")
        self.props_auth: list[str] = []
        self.bytes_sent = 0
        """Bytes of padded replies written (`pad_reply`): what a client took before hanging up."""
        self.dead = threading.Event()
        self.lock = threading.Lock()
        self.requests = 0
        """POSTs received (every attempt, including failures and held ones)."""
        self.answered = 0
        """Requests answered with a completion (status 200, well-formed)."""
        self.status_counts: Counter[int] = Counter()
        self.prompts_received: Counter[str] = Counter()
        self.prompts_answered: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.auth_headers: list[str] = []
        self.bodies: list[dict] = []
        """Request JSON bodies (model, temperature, max_tokens, messages...)."""
        self._reserved = 0
        self._gate = threading.Event()
        self._drop = False
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """What to pass as `OPENAI_BASE_URL`."""
        return f"http://127.0.0.1:{self.port}{self.root}"

    def start(self) -> JudgeServer:
        handler = type("Handler", (_Handler,), {"judge_server": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", self._port), handler, bind_and_activate=False)
        httpd.daemon_threads = True
        httpd.request_queue_size = 256  # the default backlog of 5 stalls 32 clients connecting at once
        httpd.server_bind()
        httpd.server_activate()
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="judge-server", daemon=True)
        self._thread.start()
        return self

    def die(self) -> None:
        """Die as a killed server does: stop listening (new connections are refused) and close every open
        connection without an answer. Idempotent; `stop` still cleans up."""
        with self.lock:
            if self.dead.is_set():
                return
            self.dead.set()
        self._gate.set()
        httpd = self._httpd
        if httpd is not None:
            httpd.shutdown()  # called from a handler thread, never the serving one
            httpd.socket.close()  # the port refuses connections from now on

    def stop(self) -> None:
        self.drop_held()
        self.dead.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> JudgeServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def release(self) -> None:
        """Stop holding: held requests (and all later ones) are answered."""
        with self.lock:
            self.hold_after = None
        self._gate.set()

    def drop_held(self) -> None:
        """Stop holding: held requests are closed without an answer; later ones are answered."""
        with self.lock:
            self.hold_after = None
            self._drop = True
        self._gate.set()

    def reset_counts(self) -> None:
        with self.lock:
            self.requests = self.answered = self.max_in_flight = 0
            self.status_counts.clear()
            self.prompts_received.clear()
            self.prompts_answered.clear()
            self.auth_headers.clear()
            self.bodies.clear()

    # ------------------------------------------------------------ request handling

    def _admit(self, body: dict, prompt: str, auth: str) -> tuple[int, bool]:
        """Count the request; returns (request number, whether to hold it)."""
        with self.lock:
            self.requests += 1
            n = self.requests
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.prompts_received[prompt] += 1
            self.auth_headers.append(auth)
            self.bodies.append(body)
            hold = False
            faulty = (n <= self.rate_limit_first or n in self.server_error_on or n in self.malformed_on
                      or n in self.status_on)
            if not faulty and self.hold_after is not None:
                if self._reserved >= self.hold_after:
                    hold = True
                else:
                    self._reserved += 1
        return n, hold

    def _leave(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def _completion(self, body: dict, prompt: str, auth: str = "") -> dict:
        script = self.script or (equal_spans_json if body.get("response_format") else equal_spans_script)
        out = script(prompt)
        text, finish = (out, "stop") if isinstance(out, str) else out
        if self.echo_auth_in_reply:
            text += f"\n(request headers: Authorization: {auth}; token {auth.split(' ')[-1]})"
        doc: dict = {
            "id": f"chatcmpl-{self.requests}", "object": "chat.completion", "created": int(time.time()),
            "model": self.model_name if self.model_name is not None else body.get("model", ""),
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": text}}],
        }
        if self.usage:
            pt, ct = len(prompt.split()), len(text.split())
            doc["usage"] = {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}
            if self.usage_value is not None:
                doc["usage"] = {k: self.usage_value for k in doc["usage"]}
        return doc


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1  # one write per response (headers + body); http.server flushes after each request
    judge_server: JudgeServer

    def setup(self) -> None:
        super().setup()
        # Without this, Nagle + delayed ACK add ~40 ms to every keep-alive request.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002, ARG002 - silence the access log
        return

    def handle(self) -> None:
        try:
            super().handle()
        except OSError:  # a client that hung up on a huge or dripping reply (as it should)
            self.close_connection = True

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None, *, count: bool = True) -> None:
        if self.judge_server.drip and count:
            self._drip(status, payload, headers or {})
            return
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if self.judge_server.pad_reply and count:  # no length announced: the client learns the size by reading
            self.send_header("Connection", "close")
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.judge_server.pad_reply and count:
            self._write_padded(payload)
        else:
            self.wfile.write(payload)
        if count:  # chat requests only: `GET /props` probes are in `props_auth`
            with self.judge_server.lock:
                self.judge_server.status_counts[status] += 1

    def _write_padded(self, payload: bytes) -> None:
        """`payload` with `pad_reply` spaces in place of its `PAD_MARK`, written 64 KiB at a time (never held
        whole), gzip-compressed on the way if `gzip_reply`; `bytes_sent` counts what the client took."""
        srv = self.judge_server
        head, _, tail = payload.partition(PAD_MARK.encode())
        packer = zlib.compressobj(wbits=16 + zlib.MAX_WBITS) if srv.gzip_reply else None
        pieces = [head, *[b" " * 65536] * (srv.pad_reply // 65536), b" " * (srv.pad_reply % 65536), tail]
        try:
            for piece in pieces:
                data = packer.compress(piece) if packer else piece
                self.wfile.write(data)
                with srv.lock:
                    srv.bytes_sent += len(data)
            if packer:
                self.wfile.write(packer.flush())
        except OSError:  # the client stopped reading
            pass

    def _drip(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
        head = f"HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        self.close_connection = True
        try:
            for byte in head.encode() + payload:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(self.judge_server.drip)
        except OSError:  # the client gave up
            pass

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None, *, count: bool = True) -> None:
        self._send(status, json.dumps({"error": {"message": message, "type": "test", "code": status}}).encode(),
                   headers, count=count)

    def _unauthorized(self, auth: str) -> bool:
        srv = self.judge_server
        if srv.basic_auth is not None:
            import base64

            return auth != "Basic " + base64.b64encode(":".join(srv.basic_auth).encode()).decode()
        return srv.api_key is not None and auth != f"Bearer {srv.api_key}"

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        srv = self.judge_server
        auth = self.headers.get("Authorization", "")
        with srv.lock:
            srv.props_auth.append(auth)
        if self._unauthorized(auth):
            self._error(401, "Incorrect API key provided.", count=False)
        elif self.path.partition("?")[0].rstrip("/") == f"{srv.root}/models" and srv.models is not None:
            data = [{"id": m, "object": "model", "owned_by": "test"} for m in srv.models]
            self._send(200, json.dumps({"object": "list", "data": data}).encode(), count=False)
        elif self.path.partition("?")[0].rstrip("/") == "/props" and srv.slots is not None:
            self._send(200, json.dumps({"total_slots": self.judge_server.slots}).encode(), count=False)
        else:
            self._error(404, f"no route {self.path}", count=False)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        srv = self.judge_server
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.partition("?")[0].rstrip("/") != f"{srv.root}/chat/completions":
            self._error(404, f"no route {self.path}")
            return
        try:
            body = json.loads(raw)
            prompt = "\n".join(m.get("content") or "" for m in body.get("messages", []))
        except (json.JSONDecodeError, AttributeError):
            self._error(400, "request body is not JSON")
            return
        auth = self.headers.get("Authorization", "")
        if srv.dead.is_set():
            self.close_connection = True
            return
        if srv.redirect_to is not None:
            self._send(307, b"", {"Location": srv.redirect_to.rstrip("/") + self.path})
            return
        n, hold = srv._admit(body, prompt, auth)
        try:
            if self._unauthorized(auth):
                shown = f"you sent Authorization: {auth}" if srv.echo_auth else auth.removeprefix("Bearer ")
                self._error(401, f"Incorrect API key provided: {shown}.")
                return
            if n in srv.status_on:
                self._error(srv.status_on[n], f"scripted HTTP {srv.status_on[n]}")
                return
            if srv.always_status is not None:
                self._error(srv.always_status, f"scripted HTTP {srv.always_status}")
                return
            if n <= srv.rate_limit_first:
                self._error(429, "rate limited (scripted)", {"Retry-After": "0"})
                return
            if n in srv.server_error_on:
                self._error(500, "internal error (scripted)")
                return
            if hold:
                srv._gate.wait()
                if srv._drop or srv.dead.is_set():
                    self.close_connection = True
                    return
            if srv.dead.is_set():
                self.close_connection = True
                return
            delay = srv.delay(prompt) if callable(srv.delay) else srv.delay
            if delay:
                time.sleep(delay)
            if n in srv.malformed_on:
                self._send(200, b'{"id": "chatcmpl-broken", "choices": [')
                return
            completion = srv._completion(body, prompt, auth)
            if srv.pad_reply:
                completion["choices"][0]["message"]["content"] += PAD_MARK
            payload = json.dumps(completion).encode()
            extra = {"Content-Encoding": "gzip"} if srv.gzip_reply else {}
            with srv.lock:
                if srv.dead.is_set():
                    self.close_connection = True
                    return
                srv.answered += 1
                srv.prompts_answered[prompt] += 1
                dies = srv.die_after is not None and srv.answered >= srv.die_after
            self._send(200, payload, extra)
            if dies:
                self.close_connection = True
                srv.die()
        finally:
            srv._leave()


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description="Serve scripted CHIMERA judge answers on 127.0.0.1.")
    ap.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    args = ap.parse_args()
    with JudgeServer(delay=args.delay) as srv:
        print(f"OPENAI_BASE_URL={srv.base_url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()


def point_openai_at(server: JudgeServer, monkeypatch, concurrency: int | None = None) -> JudgeServer:
    """Aim the `openai` client of this process at `server` (a placeholder key; optionally the judge's concurrency)
    through pytest's `monkeypatch`, so the environment is restored after the test."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    if concurrency is not None:
        monkeypatch.setenv("REJUDGE_JUDGE_CONCURRENCY", str(concurrency))
    return server
