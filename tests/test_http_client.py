"""The HTTP client layer (extractors/http_client.py and its httpx transport): retry policy,
Retry-After, backoff bounds, token bucket, failure classification. Sleeps and clocks are fakes
that record what was asked; the transport tests talk to a real HTTP server on loopback."""

from __future__ import annotations

import random
import socket
import threading
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from extractors.http_client import (
    AttemptFailed,
    RetriesExhausted,
    RetryPolicy,
    TokenBucket,
    call_with_retries,
    genai_http_options,
    genai_policy,
    retry_after_seconds,
    status_reason,
    transport_reason,
)
from extractors.providers.http import HttpGaveUp, HttpTransport, Redactor
from extractors.sources.fetch import FetchError, PoliteFetcher


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def _failing(plan: list[AttemptFailed | str]):
    """An attempt function that raises the planned failures in order, then returns 'ok'."""
    calls: list[int] = []

    def attempt(n: int) -> str:
        calls.append(n)
        step = plan[n - 1] if n - 1 < len(plan) else "ok"
        if isinstance(step, AttemptFailed):
            raise step
        return step

    return attempt, calls


# --------------------------------------------------------------------------------------------
# policy and loop
# --------------------------------------------------------------------------------------------
def test_retry_after_is_honoured() -> None:
    sleeps = Sleeps()
    attempt, calls = _failing([AttemptFailed("rate_limited", "HTTP 429", retry_after=3.0, status=429)])
    policy = RetryPolicy(max_attempts=3, backoff_base_s=0.01, backoff_max_s=0.05, max_retry_after_s=10)
    assert call_with_retries(attempt, policy, sleep=sleeps, rng=random.Random(1)) == "ok"
    assert calls == [1, 2] and len(sleeps) == 1
    assert 3.0 <= sleeps[0] <= 3.1  # the server's wait (plus at most 0.1 s of spread), not the backoff


def test_retry_after_beyond_the_cap_fails_at_once() -> None:
    sleeps = Sleeps()
    attempt, calls = _failing([AttemptFailed("rate_limited", "HTTP 429", retry_after=3600.0, status=429)])
    policy = RetryPolicy(max_attempts=5, max_retry_after_s=120)
    with pytest.raises(RetriesExhausted) as ei:
        call_with_retries(attempt, policy, sleep=sleeps)
    assert ei.value.wait_refused and ei.value.attempts == 1 and ei.value.last.reason == "rate_limited"
    assert calls == [1] and sleeps == []


def test_clamped_retry_after_waits_at_most_the_backoff_cap() -> None:
    sleeps = Sleeps()
    attempt, calls = _failing([AttemptFailed("rate_limited", "429", retry_after=3600.0)] * 2)
    policy = RetryPolicy(max_attempts=3, backoff_base_s=0.5, backoff_max_s=2.0, jitter=False, clamp_retry_after=True)
    assert call_with_retries(attempt, policy, sleep=sleeps) == "ok"
    assert sleeps == [2.0, 2.0] and calls == [1, 2, 3]


def test_backoff_is_exponential_and_bounded() -> None:
    policy = RetryPolicy(max_attempts=40, backoff_base_s=0.5, backoff_max_s=8.0)
    rng = random.Random(7)
    for n in range(40):
        ceiling = min(8.0, 0.5 * 2 ** n)
        assert ceiling / 2 <= policy.backoff(n, rng) <= ceiling <= 8.0
    fixed = RetryPolicy(backoff_base_s=0.5, backoff_max_s=8.0, jitter=False)
    assert [fixed.backoff(n) for n in range(7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def test_attempts_are_bounded_and_the_last_failure_is_reported() -> None:
    sleeps = Sleeps()
    failures: list[tuple[str, int, bool]] = []
    attempt, calls = _failing([AttemptFailed("server_error", f"HTTP 503 #{i}", status=503) for i in range(10)])
    policy = RetryPolicy(max_attempts=4, backoff_base_s=1.0, backoff_max_s=2.0)
    with pytest.raises(RetriesExhausted) as ei:
        call_with_retries(attempt, policy, sleep=sleeps, rng=random.Random(3),
                          on_failure=lambda f, n, final: failures.append((f.reason, n, final)))
    assert calls == [1, 2, 3, 4] and len(sleeps) == 3 and max(sleeps) <= 2.0
    assert ei.value.attempts == 4 and ei.value.last.detail == "HTTP 503 #3" and not ei.value.wait_refused
    assert failures == [("server_error", 1, False), ("server_error", 2, False), ("server_error", 3, False),
                        ("server_error", 4, True)]


def test_other_exceptions_are_not_retried() -> None:
    calls: list[int] = []

    def attempt(n: int) -> None:
        calls.append(n)
        raise KeyError("not an attempt failure")

    with pytest.raises(KeyError):
        call_with_retries(attempt, RetryPolicy(max_attempts=5), sleep=Sleeps())
    assert calls == [1]


def test_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError):
        RetryPolicy(backoff_base_s=-1)


# --------------------------------------------------------------------------------------------
# rate limit
# --------------------------------------------------------------------------------------------
def test_token_bucket_spaces_requests_on_a_fake_clock() -> None:
    now = [0.0]

    def sleep(s: float) -> None:
        now[0] += s

    bucket = TokenBucket(4.0, 1.0, clock=lambda: now[0], sleep=sleep)
    waits = [bucket.acquire() for _ in range(5)]
    assert waits == pytest.approx([0.0, 0.25, 0.25, 0.25, 0.25])
    assert now[0] == pytest.approx(1.0)
    burst = TokenBucket(2.0, 3.0, clock=lambda: now[0], sleep=sleep)
    assert [burst.acquire() for _ in range(4)] == pytest.approx([0.0, 0.0, 0.0, 0.5])
    with pytest.raises(ValueError):
        TokenBucket(0)


# --------------------------------------------------------------------------------------------
# classification
# --------------------------------------------------------------------------------------------
def test_retry_after_forms() -> None:
    now = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
    assert retry_after_seconds({"Retry-After": "7"}) == 7.0
    assert retry_after_seconds({"retry-after": format_datetime(now + timedelta(seconds=90), usegmt=True)},
                               now=now) == pytest.approx(90.0)
    assert retry_after_seconds({"RateLimit-Reset": "4"}) == 4.0
    assert retry_after_seconds({"Retry-After": "soon"}) is None and retry_after_seconds({}) is None


def test_status_and_transport_reasons() -> None:
    assert [status_reason(s) for s in (429, 503, 404, 410, 401, 403, 418)] == [
        "rate_limited", "server_error", "not_found", "not_found", "auth_failed", "auth_failed", "bad_response"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    with pytest.raises(httpx.TransportError) as ei:
        httpx.get(f"http://127.0.0.1:{port}/", timeout=2.0)
    assert transport_reason(ei.value) == "network"
    assert transport_reason(httpx.ReadTimeout("slow")) == "timeout"
    assert transport_reason(httpx.RemoteProtocolError("peer closed connection without sending complete message body")) == "truncated"
    assert transport_reason(ValueError("x")) is None


def test_genai_options_follow_the_policy() -> None:
    opts = genai_http_options(genai_policy(3, 0.5, 4.0), base_url="http://127.0.0.1:1", api_version=None, timeout_s=2.5)
    r = opts.retry_options
    assert (r.attempts, r.initial_delay, r.max_delay, r.jitter) == (3, 0.5, 4.0, 0.0)
    assert r.http_status_codes == [408, 429, 500, 502, 503, 504] and opts.timeout == 2500


# --------------------------------------------------------------------------------------------
# the httpx transport against a loopback server
# --------------------------------------------------------------------------------------------
class _Scripted:
    """A loopback HTTP server answering each request with the next (status, headers) of a script."""

    def __init__(self, script: list[tuple]):
        self.script = list(script)
        self.seen: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                owner.seen.append(self.path)
                status, headers, *rest = owner.script.pop(0) if owner.script else (200, {})
                body = rest[0] if rest else b'{"ok": true}' if status == 200 else b'{"message": "no"}'
                self.send_response(status)
                for k, v in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/x"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _Scripted:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _transport(sleeps: Sleeps, **policy: float) -> HttpTransport:
    kw = dict(max_attempts=4, backoff_base_s=0.01, backoff_max_s=0.04, max_retry_after_s=30.0) | policy
    return HttpTransport(name="t", redactor=Redactor(), user_agent="cinesub-test", timeout_s=5.0,
                         policy=RetryPolicy(**kw), sleep=sleeps, rng=random.Random(0))


def test_non_retryable_status_is_returned_after_one_request() -> None:
    sleeps = Sleeps()
    with _Scripted([(404, {}), (200, {})]) as srv, _transport(sleeps) as t:
        result = t.request("GET", srv.url, what="GET /x")
    assert result.status == 404 and result.attempts == 1 and len(srv.seen) == 1 and sleeps == []


def test_transport_retries_5xx_and_honours_retry_after() -> None:
    sleeps = Sleeps()
    with _Scripted([(503, {}), (429, {"Retry-After": "2"}), (200, {})]) as srv, _transport(sleeps) as t:
        result = t.request("GET", srv.url, what="GET /x")
    assert result.status == 200 and result.attempts == 3 and len(srv.seen) == 3
    assert sleeps[0] <= 0.04 and 2.0 <= sleeps[1] <= 2.1
    assert t.stats["retry_server_error"] == 1 and t.stats["retry_rate_limited"] == 1 and t.stats["retries"] == 2


def test_transport_gives_up_with_a_typed_error() -> None:
    sleeps = Sleeps()
    with _Scripted([(500, {})] * 10) as srv, _transport(sleeps, max_attempts=3) as t:
        with pytest.raises(HttpGaveUp) as ei:
            t.request("GET", srv.url, what="GET /x")
    err = ei.value
    assert err.reason_code == "server_error" and err.retryable and err.status == 500 and err.attempts == 3
    assert "gave up after 3 attempts" in err.detail and not err.wait_refused
    assert len(srv.seen) == 3 and len(sleeps) == 2
    with _Scripted([(429, {"Retry-After": "3600"})]) as srv, _transport(sleeps) as t:
        with pytest.raises(HttpGaveUp) as ei:
            t.request("GET", srv.url, what="GET /x")
    assert ei.value.reason_code == "rate_limited" and ei.value.wait_refused and "asks to wait 3600s" in ei.value.detail
    assert len(srv.seen) == 1 and len(sleeps) == 2  # no wait for a refused Retry-After


def test_page_fetcher_reports_a_waf_challenge(tmp_path) -> None:
    """IMDb's AWS WAF answers 202 with an empty body and x-amzn-waf-action (realdata MANIFEST §3):
    a typed refusal, not a page, not retried, not cached."""
    script = [(404, {}), (202, {"x-amzn-waf-action": "challenge"}, b""), (200, {}, b"<html>page</html>")]
    with _Scripted(script) as srv, PoliteFetcher(tmp_path / "c", requests_per_second=1000.0, sleep=Sleeps()) as f:
        with pytest.raises(FetchError) as ei:
            f.fetch(srv.url)
        assert ei.value.reason_code == "waf_challenge" and ei.value.status == 202
        assert srv.seen == ["/robots.txt", "/x"]
        assert f.fetch(srv.url).body == b"<html>page</html>"  # asked again: the challenge was not cached
