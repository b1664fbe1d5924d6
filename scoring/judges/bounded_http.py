"""The HTTP transport every OpenAI-compatible judge request goes through, with three limits the openai client does
not have:

- a total deadline per request: connect, send, headers and body together, not per read (a server dripping one
  byte a second kept a request alive for as long as it liked: each read arrived within the read timeout);
- a cap on the reply's size, counted as the bytes arrive and again after decompression, so neither a huge reply
  nor a compressed bomb is ever held in memory;
- no redirect to another host: the answers of a judge elsewhere would be stored under the configured endpoint.

The deadline is kept per thread (each request runs on one worker thread, from connect to the last body byte), and
every socket read, write, connect and TLS handshake waits at most what is left of it. Used through
`bounded_client` (an `httpx2.Client` for `openai.OpenAI(http_client=...)`) and `bounded_get` (the endpoint probes).
"""

from __future__ import annotations

import functools
import ssl
import threading
import time
import urllib.request
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore2
import httpx2

from scoring.judges.redact import redact_url

ENV_MAX_REPLY_BYTES = "REJUDGE_JUDGE_MAX_REPLY_BYTES"
DEFAULT_MAX_REPLY_BYTES = 4 * 2**20
"""A chat completion of 400 tokens is a few kB; 4 MiB leaves room for verbose servers (logprobs, echoes)."""


class ReplyRefused(Exception):
    """A reply this transport will not pass on: over the size cap, an encoding it did not ask for, or a redirect to
    another host (`fatal`: every request would be redirected alike)."""

    def __init__(self, reason: str, *, fatal: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fatal = fatal


_deadline = threading.local()


def _left(timeout: float | None) -> float | None:
    """The socket timeout to use now: `timeout` bounded by what is left of this thread's deadline.

    Raises:
        httpcore2.ReadTimeout: the deadline has passed.
    """
    end = getattr(_deadline, "end", None)
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise httpcore2.ReadTimeout(f"deadline of {_deadline.seconds:g} s per request passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,  # noqa: ANN401 - httpcore's signature
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout)))

    def get_extra_info(self, info: str) -> Any:  # noqa: ANN401 - httpcore's signature
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore2.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore2.NetworkStream:
        return _DeadlineStream(self._inner.connect_tcp(host, port, _left(timeout), local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore2.NetworkStream:
        return _DeadlineStream(self._inner.connect_unix_socket(path, _left(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


_ERRORS: tuple[tuple[type[Exception], type[httpx2.HTTPError]], ...] = (
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout), (httpcore2.WriteTimeout, httpx2.WriteTimeout),
    (httpcore2.PoolTimeout, httpx2.PoolTimeout), (httpcore2.TimeoutException, httpx2.ReadTimeout),
    (httpcore2.ConnectError, httpx2.ConnectError), (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.NetworkError, httpx2.ReadError), (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
    (httpcore2.ProxyError, httpx2.ProxyError), (httpcore2.ProtocolError, httpx2.RemoteProtocolError))
"""httpcore's exceptions as httpx's (which the openai client sorts into timeouts and connection errors)."""


def _as_httpx(e: Exception) -> Exception:
    for theirs, ours in _ERRORS:
        if isinstance(e, theirs):
            return ours(str(e))
    return e


_DECODERS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
ACCEPT_ENCODING = "gzip, deflate"


def _decoded(body: bytes, encoding: str, cap: int, url: str) -> bytes:
    """`body` decompressed, at most `cap` bytes of it.

    Raises:
        ReplyRefused: more than `cap` bytes decoded, or an encoding not asked for.
    """
    out = body
    for name in [e.strip().lower() for e in encoding.split(",") if e.strip()][::-1]:
        if name == "identity":
            continue
        if name not in _DECODERS:
            raise ReplyRefused(f"{url} answered in encoding {name!r}, which was not asked for ({ACCEPT_ENCODING})")
        d = zlib.decompressobj(_DECODERS[name])
        try:
            out = d.decompress(out, cap + 1)
        except zlib.error as e:
            raise ReplyRefused(f"{url} sent a reply that does not decode as {name}: {e}") from None
        if len(out) > cap:
            raise ReplyRefused(_too_large(url, cap, "decompressed"))
    return out


def _too_large(url: str, cap: int, how: str = "") -> str:
    return (f"the reply from {url} is larger than {cap:,} bytes{' ' + how if how else ''} (the reply size limit, "
            f"{ENV_MAX_REPLY_BYTES})")


def _origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.host.lower(), url.scheme, url.port or default


def _same_host(a: httpx2.URL, b: httpx2.URL) -> bool:
    """Same host and port; `http` -> `https` on the same host is allowed (an endpoint moving to TLS)."""
    ha, sa, pa = _origin(a)
    hb, sb, pb = _origin(b)
    return ha == hb and (pa == pb or (sa, sb) == ("http", "https") and pb == 443)


POOL_LIMITS = {"max_connections": 1000, "max_keepalive_connections": 100, "keepalive_expiry": 5.0}
"""The openai client's own connection limits (httpcore's default of 10 connections would make requests beyond the
tenth in flight wait for a connection, and time out, at a higher concurrency)."""


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context per process, made when the first pool needs it: loading the certificate bundle took about
    20 ms per judge (each judge and each endpoint probe made its own transport), and a context is safe to share
    between threads and clients."""
    return httpx2.create_ssl_context()


class BoundedTransport(httpx2.BaseTransport):
    """An `httpx2` transport with a total `deadline` (seconds) per request and a reply cap of `max_bytes`, that
    refuses a redirect to another host. Proxies come from the environment (`HTTPS_PROXY`, `NO_PROXY`...), as the
    openai client's own transport takes them."""

    def __init__(self, deadline: float, max_bytes: int) -> None:
        self.deadline = deadline
        self.max_bytes = max_bytes
        self._pools: dict[str | None, httpcore2.ConnectionPool | httpcore2.HTTPProxy] = {}
        self._lock = threading.Lock()

    def _pool(self, url: httpx2.URL) -> httpcore2.ConnectionPool | httpcore2.HTTPProxy:
        proxies = urllib.request.getproxies_environment()
        proxy = proxies.get(url.scheme) or proxies.get("all")
        if proxy and urllib.request.proxy_bypass_environment(url.host, proxies):
            proxy = None
        with self._lock:
            if proxy not in self._pools:
                kw = {"ssl_context": _tls_context(), "network_backend": _DeadlineBackend(), **POOL_LIMITS}
                self._pools[proxy] = (httpcore2.HTTPProxy(proxy_url=proxy, **kw) if proxy
                                      else httpcore2.ConnectionPool(**kw))
            return self._pools[proxy]

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        shown = redact_url(str(url.copy_with(query=None)))
        request.headers["Accept-Encoding"] = ACCEPT_ENCODING
        _deadline.end, _deadline.seconds = time.monotonic() + self.deadline, self.deadline
        try:
            req = httpcore2.Request(method=request.method, url=httpcore2.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
                headers=request.headers.raw, content=request.stream, extensions=request.extensions)
            try:
                resp = self._pool(url).handle_request(req)
                try:
                    body = b"".join(self._capped(resp.iter_stream(), resp.headers, shown))
                finally:
                    resp.close()
            except httpcore2.TimeoutException as e:
                raise httpx2.ReadTimeout(f"no complete reply within {self.deadline:g} s: {e}") from e
            except Exception as e:
                mapped = _as_httpx(e)
                if mapped is e:
                    raise
                raise mapped from e
        finally:
            _deadline.end = None
        headers = httpx2.Headers(resp.headers)
        if 300 <= resp.status < 400 and "location" in headers:
            target = url.join(headers["location"])
            if not _same_host(url, target):
                raise ReplyRefused(f"the judge endpoint {shown} redirected to {redact_url(str(target))}, another "
                                   "host: refused (its answers would be stored as this endpoint's); set "
                                   "OPENAI_BASE_URL to the server that answers", fatal=True)
        encoding = headers.pop("content-encoding", "")
        body = _decoded(body, encoding, self.max_bytes, shown)
        headers.pop("content-length", None)
        headers.pop("transfer-encoding", None)
        return httpx2.Response(resp.status, headers=headers, content=body, extensions=resp.extensions)

    def _capped(self, chunks: Iterator[bytes], headers: Iterable[tuple[bytes, bytes]], url: str) -> Iterator[bytes]:
        for name, value in headers:
            if name.lower() == b"content-length" and value.strip().isdigit() and int(value) > self.max_bytes:
                raise ReplyRefused(_too_large(url, self.max_bytes, f"(it announces {int(value):,})"))
        seen = 0
        for chunk in chunks:
            seen += len(chunk)
            if seen > self.max_bytes:
                raise ReplyRefused(_too_large(url, self.max_bytes))
            yield chunk

    def close(self) -> None:
        with self._lock:
            for pool in self._pools.values():
                pool.close()
            self._pools.clear()


def bounded_client(deadline: float, max_bytes: int) -> httpx2.Client:
    """The `http_client` for `openai.OpenAI`: a `BoundedTransport`, redirects followed (each hop checked by it)."""
    return httpx2.Client(transport=BoundedTransport(deadline, max_bytes), follow_redirects=True, trust_env=False,
                         timeout=deadline)


def bounded_get(url: str, headers: dict[str, str], deadline: float, max_bytes: int) -> bytes | None:
    """The body of `GET url` (a probe of the endpoint: `/props`, `/models`) within the same limits, or None when
    the endpoint does not answer it with 200."""
    with bounded_client(deadline, max_bytes) as client:
        try:
            r = client.get(url, headers=headers)
        except (httpx2.HTTPError, ReplyRefused):
            return None
        return r.content if r.status_code == 200 else None
