"""Live check of the arXiv verifier's ground truth against the arXiv API (``--validate``).

The API answers Atom XML (https://info.arxiv.org/help/api/user-manual.html); :func:`validate` asks for the 17
IDs at once and lists every title or first author that differs from ``PAPERS``.
"""

from __future__ import annotations

import re
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from http.client import HTTPException

from verifiers.arxiv.normalise import normalise_whitespace
from verifiers.arxiv.papers import PAPERS, Paper

#: arXiv API query endpoint (https://info.arxiv.org/help/api/user-manual.html).
ARXIV_API_URL = "http://export.arxiv.org/api/query"
#: Environment variable overriding the API URL for ``--validate`` (tests point it at 127.0.0.1:9).
API_URL_ENV = "ARXIV_API_URL"
#: Seconds to wait for the API.
API_TIMEOUT_S = 10.0
ATOM_NS: dict[str, str] = {"atom": "http://www.w3.org/2005/Atom"}
#: ``http://arxiv.org/abs/1706.03762v7`` -> ``1706.03762`` (API error entries do not match).
ABS_ID_RE = re.compile(r"arxiv\.org/abs/(.+?)(?:v[0-9]+)?$")


class ArxivApiError(RuntimeError):
    """The arXiv API could not be reached or answered with something that is not Atom XML."""


def parse_atom(xml_text: str) -> dict[str, dict[str, str]]:
    """Parse an arXiv API Atom response.

    Returns:
        ``{arxiv_id_without_version: {"title": whitespace-normalised title, "first_author": name}}``
        for each ``feed/entry`` whose ``id`` is an ``arxiv.org/abs/...`` URL (error entries skipped).

    Raises:
        ValueError: when ``xml_text`` is not well-formed XML.
    """
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ValueError(f"not well-formed Atom XML: {exc}") from exc
    papers: dict[str, dict[str, str]] = {}
    for entry in root.iterfind("atom:entry", ATOM_NS):
        match = ABS_ID_RE.search((entry.findtext("atom:id", "", ATOM_NS) or "").strip())
        if match is None:
            continue
        name = entry.findtext("atom:author/atom:name", "", ATOM_NS) or ""
        papers[match.group(1)] = {
            "title": normalise_whitespace(entry.findtext("atom:title", "", ATOM_NS) or ""),
            "first_author": normalise_whitespace(name),
        }
    return papers


def query_url(ids: Iterable[str], api_url: str = ARXIV_API_URL) -> str:
    """The API URL asking for exactly ``ids`` (``id_list`` plus a matching ``max_results``)."""
    id_list = list(ids)
    query = urllib.parse.urlencode({"id_list": ",".join(id_list), "max_results": len(id_list)}, safe=",")
    return f"{api_url}?{query}"


def fetch_atom(url: str, timeout: float = API_TIMEOUT_S) -> str:
    """GET ``url`` and return the body as text.

    Raises:
        ArxivApiError: one-line message naming the URL when it cannot be fetched.
    """
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - fixed http(s) API URL
            return response.read().decode("utf-8", errors="replace")
    except (OSError, HTTPException, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise ArxivApiError(f"arXiv API unreachable at {url}: {normalise_whitespace(str(reason))}") from exc


def compare_facts(papers: Sequence[Paper], fetched: Mapping[str, Mapping[str, str]]) -> list[str]:
    """One line per disagreement between ``papers`` and ``parse_atom`` output (empty when all match)."""
    problems: list[str] = []
    for paper in papers:
        got = fetched.get(paper.arxiv_id)
        if got is None:
            problems.append(f"{paper.arxiv_id}: not returned by the arXiv API")
            continue
        for key, expected in (("title", paper.title), ("first_author", paper.first_author)):
            if got.get(key, "") != expected:
                problems.append(f"{paper.arxiv_id}: {key} expected {expected!r}, arXiv says {got.get(key)!r}")
    return problems


def validate(papers: Sequence[Paper] = PAPERS, api_url: str = ARXIV_API_URL,
             timeout: float = API_TIMEOUT_S) -> list[str]:
    """Check ``papers`` against the live arXiv API; returns the mismatches (empty when all match).

    Raises:
        ArxivApiError: when the API cannot be reached or does not answer with Atom XML.
    """
    url = query_url((p.arxiv_id for p in papers), api_url)
    body = fetch_atom(url, timeout)
    try:
        fetched = parse_atom(body)
    except ValueError as exc:
        raise ArxivApiError(f"arXiv API at {url} did not answer with Atom XML: {exc}") from exc
    return compare_facts(papers, fetched)
