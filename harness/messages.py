"""Exception text for one-line messages (CLI errors, skip notes), and URLs with their credentials redacted."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


def first_line(exc: BaseException, limit: int | None = None) -> str:
    """The first line of ``str(exc)`` (stripped), or the exception's type name when the message is empty;
    at most ``limit`` characters when given (cut, no marker)."""
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else type(exc).__name__
    return text if limit is None else text[:limit]


#: query parameters whose values are credentials (matched case-insensitively, also as a suffix: ``x-api-key``)
CREDENTIAL_PARAMS: tuple[str, ...] = ("key", "api_key", "apikey", "api-key", "token", "access_token", "auth",
                                      "password", "passwd", "pwd", "secret", "client_secret", "sig", "signature",
                                      "credential", "credentials", "session")
REDACTED = "REDACTED"

_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>()\[\]{}]+")


def _credential_param(name: str) -> bool:
    lowered = name.lower()
    return any(lowered == p or lowered.endswith(("_" + p, "-" + p, "." + p)) for p in CREDENTIAL_PARAMS)


def redact_url(url: str) -> str:
    """``url`` with its userinfo (``user:password@``) and the values of credential-like query parameters
    (:data:`CREDENTIAL_PARAMS`) replaced by ``REDACTED``; anything that is not a URL comes back unchanged.

    Example: ``http://u:p@host:8000/v1?api_key=abc&x=1`` -> ``http://REDACTED@host:8000/v1?api_key=REDACTED&x=1``.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@" + netloc.rsplit("@", 1)[1]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_credential_param(k) for k, _ in pairs):
            query = urlencode([(k, REDACTED if _credential_param(k) else v) for k, v in pairs], safe="")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


#: ``user:password@host`` without a scheme, as HTTP clients print an address they failed to reach
_USERINFO_RE = re.compile(r"(?<![\w/.:@-])[^\s/@:'\"<>()]+:[^\s/@'\"<>()]+@(?=[\w\[])")


def redact_text(text: str) -> str:
    """Every URL inside ``text`` passed through :func:`redact_url`, and any bare ``user:password@host`` reduced
    to ``REDACTED@host`` (error messages, tracebacks, params)."""
    if "://" in text:
        text = _URL_RE.sub(lambda m: redact_url(m.group(0)), text)
    if "@" in text:
        text = _USERINFO_RE.sub(f"{REDACTED}@", text)
    return text
