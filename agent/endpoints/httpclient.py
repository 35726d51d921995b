"""The httpx client a ChatClient sends through: TLS set up only for an https endpoint, and the
cookies a server sets kept (as httpx keeps them) but looked for only in a reply that sets one."""

from __future__ import annotations

import functools
import ssl
from http.cookiejar import CookieJar

import httpx


def http_client(
    base_url: str, timeout_s: float, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    return _Client(transport=transport, timeout=httpx.Timeout(timeout_s), verify=_ssl_context(base_url))


class _Cookies(httpx.Cookies):
    """httpx wraps every reply in urllib's request and message objects to look for cookies in it
    (~20 us a call, a third of what its client adds to one); a reply without Set-Cookie has none
    to give (urllib's default policy ignores Set-Cookie2), so it is not wrapped."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers:
            super().extract_cookies(response)


class _Client(httpx.AsyncClient):
    """httpx's AsyncClient with _Cookies: it reads `self.cookies` for every reply it gets."""

    def __init__(self, *, transport: httpx.AsyncBaseTransport | None, timeout: httpx.Timeout, verify: ssl.SSLContext):
        super().__init__(transport=transport, timeout=timeout, verify=verify)
        self.cookies = super().cookies  # the jar httpx made, as _Cookies

    @property
    def cookies(self) -> httpx.Cookies:
        return self._reply_cookies

    @cookies.setter
    def cookies(self, cookies: httpx.Cookies | CookieJar | dict[str, str] | list[tuple[str, str]]) -> None:
        self._reply_cookies = _Cookies(cookies)


def _ssl_context(base_url: str) -> ssl.SSLContext:
    """The verifying context for an https endpoint. A plain-http one never does TLS (the client
    only asks its base URL and follows no redirects), so it gets a context that trusts no CA
    at all — were it ever used, every certificate would be refused — instead of paying ~50 ms
    to load the system's CAs before the run's first call."""
    return _verifying_context() if base_url.lower().startswith("https:") else _trusting_nothing()


@functools.cache
def _verifying_context() -> ssl.SSLContext:  # one for every client: building one costs ~50 ms
    return httpx.create_ssl_context()


@functools.cache
def _trusting_nothing() -> ssl.SSLContext:
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies certificates and hostnames, against no CAs
