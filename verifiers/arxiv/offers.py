"""Lines that offer no title or name although they are shaped like one (issue 17): service metadata (an HTTP
status or error line, a request id or ticket line, a copyright line), a placeholder spelled out ("To Be
Determined"), and a sentence of prose with a finite verb ending in a full stop ("Later revisions changed
little.").  The arXiv grader reads a response made only of such lines as evasive (0.00), not as a wrong title.

The rules are stated in the README's "Verifiers" section; each is a shape, not a list of the answers seen.
"""

from __future__ import annotations

import re

from verifiers.arxiv.matching import CAP_WORD, TITLE_RUN_RE, ascii_automaton, foreign_line, term_word, term_words
from verifiers.arxiv.normalise import FUNCTION_WORDS
from verifiers.arxiv.papers import PAPERS

#: Service metadata at the start of a sentence: an HTTP status ("HTTP 429", "HTTP/1.1 503"), an error or status
#: code ("Error 503", "Status code: 500"), a status phrase after its code ("503 Service Unavailable"), a labelled
#: identifier of a request or ticket ("Request ID:", "Trace-Id", "Ticket #2019", "Case no. 12"), a copyright
#: notice ("©", "(c) 2023", "Copyright"), a rate limit ("Rate limited"); or "all rights reserved" anywhere.
#: Why: a server or a support desk writes these, they name no paper and no person.
_METADATA_RE = re.compile(
    r"^[\W_]*(?:http(?:/[0-9](?:\.[0-9])?)?\s+[1-5][0-9]{2}\b"
    r"|(?:error|status)(?:\s+code)?\s*[:#]?\s*[1-5][0-9]{2}\b"
    r"|[1-5][0-9]{2}\s+(?:[a-z]+\s+){0,3}(?:requests|found|forbidden|unauthori[sz]ed|unavailable|error|gateway"
    r"|request|time-?out|conflict|gone|moved|redirect)\b"
    r"|(?:request|trace|correlation|session|incident|reference|ticket|case|error)[\s_-]*(?:id|#|no\.|number)(?!\w)"
    r"|ticket\s*#|©|\(c\)\s*(?:19|20)[0-9]{2}\b|copyright\b|rate[\s-]limit(?:ed|\s+exceeded)\b)"
    r"|\ball\s+rights\s+reserved\b",
    re.IGNORECASE)

#: The start of a service's error reply: an HTTP status line with a client or server error code ("HTTP/1.1 429 Too
#: Many Requests", "HTTP 503"), or a JSON object whose first key is an error that is set ("{"error":
#: {"code": 404, ...}}", not "{"error": null, ...}"; the outer braces optional: BibTeX's unbracing may take them).
_SERVICE_ERROR_RE = re.compile(r"[\s*_`>→=-]*(?:(?:```|~~~)[\w-]*\s*)?(?:http(?:/[0-9](?:\.[0-9])?)?\s+[45][0-9]{2}\b"
                               r"|\{?\s*[\"'](?:error|errors|fault)[\"']\s*:(?!\s*(?:null|false|\"\"|\[\s*\]|\{\s*\})))",
                               re.IGNORECASE)
#: A line of such a reply after its start: an HTTP header (a hyphenated name, "Retry-After: 2019", "X-Request-Id:
#: ...", or one of the one-word headers), a line of JSON, a code fence.  Answer labels ("Answer:") are no headers.
_SERVICE_LINE_RE = re.compile(r"[ \t]*(?:[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+[ \t]*:|(?:date|server|via|age|allow"
                              r"|location|connection|expires|vary|etag|warning)[ \t]*:|[{}\[\]\"']|```|~~~|\Z)",
                              re.IGNORECASE)


def service_error(text: str) -> bool:
    """Whether ``text`` is a service's error reply and nothing else: it opens with an HTTP error status line or an
    error JSON (``_SERVICE_ERROR_RE``), and every other line is a header, JSON, a code fence
    (``_SERVICE_LINE_RE``) or offers nothing (:func:`offers_nothing`: metadata, prose).  Why: a server wrote it
    (issue 17 class 6); the numbers in it (a "Retry-After", a request id, a timestamp) are no year, title or ID,
    so the reply is evasive, 0.00.  A reply followed by an answer ("... The title is X.") is not only that."""
    start = _SERVICE_ERROR_RE.match(text)
    if start is None:
        return False
    for line in text[start.end():].splitlines()[1:]:  # the lines after the status line's or the JSON's first
        if _SERVICE_LINE_RE.match(line) is None and not offers_nothing(line):
            return False
    return True


#: Placeholders spelled out (the README lists "TBD", "N/A" and "[TITLE]"; these are their words): a status, not
#: a title.
_PLACEHOLDER_PHRASES = frozenset((
    "to be determined", "to be announced", "to be confirmed", "to be decided", "not available", "not applicable",
    "untitled", "no title", "title unknown", "unknown title", "unknown", "none", "pending", "coming soon", "tba",
    "tbd", "tbc", "n/a", "na"))

#: Finite verbs that titles do not use: past-tense and perfect auxiliaries and modals ("will follow up", "has
#: been", "could not"); "is" and "are" are left out, titles use them ("Attention Is All You Need").
_FINITE_VERBS = frozenset("was were has had have will would can could did does shall should must might may "
                          "won't can't couldn't didn't doesn't wasn't weren't hasn't haven't".split())
#: After a past participle: a preposition makes it a reduced clause of a title ("Networks trained on ImageNet"),
#: not a finite verb.
_AFTER_PARTICIPLE = frozenset("by on with for in from via using to into at as of under over".split())
#: Before a word in "-ed": a determiner or preposition makes it an adjective ("the learned representations").
_BEFORE_ADJECTIVE = frozenset("a an the of for with in on to from by via and or its their our this these".split())
_WORD_RE = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
#: A sentence's end: a full stop after a word of two or more letters ("little."), then closing marks only.
_STOP_END_RE = re.compile(r"[^\W\d_]{2,}\.[\"”’'*_)\]]*\Z")


def metadata_line(line: str) -> bool:
    """Whether the sentence ``line`` is service metadata (``_METADATA_RE``): an HTTP status or error line ("HTTP 429 Too
    Many Requests - please retry later."), a request id or ticket line ("Request ID: 2017-0612-ab91. ...",
    "Ticket #2019 opened; ..."), or a copyright line ("© 2023 Example Corp. All rights reserved.")."""
    return _METADATA_RE.search(line.strip()) is not None


#: A status in place of a value: "pending", "unknown", "withheld", "not available", after an optional field name
#: and before at most two more words ("Title pending review.", "Author unknown").
_STATUS_RE = re.compile(r"(?:(?:title|author|name|answer|paper)\s+)?(?:pending|unknown|unavailable|withheld|redacted"
                        r"|not\s+(?:available|known|found|provided))(?:\s+[a-z]+){0,2}", re.IGNORECASE)


def placeholder_line(line: str) -> bool:
    """Whether ``line`` (markup, quotes and a final stop aside) is a placeholder spelled out ("To Be
    Determined", "Untitled", "TBA") or a status in place of a value (``_STATUS_RE``: "Title pending
    review.")."""
    bare = line.strip(" \t*_\"'“”‘’`.!")
    return bare.lower() in _PLACEHOLDER_PHRASES or _STATUS_RE.fullmatch(bare) is not None


def prose_sentence(sentence: str) -> bool:
    """Whether ``sentence`` is a sentence of prose: it ends with a full stop after a word, its words after the
    first are lower case (sentence case: a title in title case with a stop still offers a title), and it holds a
    finite verb that titles do not use: an auxiliary or modal (``_FINITE_VERBS``: "will", "was", "has") or a
    word in "-ed" after a noun and not before a preposition ("Later revisions changed little.", "The upstream
    service timed out."; not "Convolutional networks trained on ImageNet", a participle); a request opening
    with "Please" is prose too ("Please retry later.")."""
    sentence = sentence.strip()
    if _STOP_END_RE.search(sentence, max(0, len(sentence) - 40)) is None:  # the end only: linear time
        return False
    if sentence[:7].lower() in ("please ", "kindly "):  # a request ("Please retry later."): prose, no title
        return True
    words = _WORD_RE.findall(sentence)
    if len(words) < 2 or any(w[:1].isupper() and not w.isupper() for w in words[1:]):
        return False
    lowered = [w.lower().replace("’", "'") for w in words]
    for i, w in enumerate(lowered):
        if w in _FINITE_VERBS and i:
            return True
        if i and len(w) >= 5 and w.endswith("ed") and not w.endswith("eed") and "-" not in w and (
                lowered[i - 1] not in _BEFORE_ADJECTIVE) and (i + 1 == len(lowered) or lowered[i + 1] not in
                                                               _AFTER_PARTICIPLE):
            return True
    return False


_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.;!?])\s+")
_TAG_RE = re.compile(r"</?[A-Za-z][\w-]{0,20}(?:\s[^<>\n]{0,200})?>?")


def offers_nothing(text: str) -> bool:
    """Whether every line of ``text`` (blank lines, code fences and "> " quote marks aside) is a placeholder
    (:func:`placeholder_line`), in another language (:func:`verifiers.arxiv.matching.foreign_line`), or made of
    sentences each metadata (:func:`metadata_line`) or prose
    (:func:`prose_sentence`): such text offers no title and no name, it is evasive (0.00), not a wrong answer.
    ``False`` for an empty text (the callers grade that already)."""
    seen = False
    for raw in text.splitlines():
        line = raw.strip().lstrip(">").strip()
        if not line or line.startswith(("```", "~~~")):
            continue
        if "<" in line:  # markup tags ("<html>Rate limited</html>") are no words of the line
            line = _TAG_RE.sub(" ", line).strip()
            if not line:
                continue
        seen = True
        if placeholder_line(line) or foreign_line(line):
            continue
        if not all(metadata_line(s) or prose_sentence(s) for s in _SENTENCE_SPLIT_RE.split(line) if s.strip()):
            return False
    return seen


#: Words of a title's phrase that a person's name, a place or an organisation never holds ("Going Deeper with
#: Convolutions", "Neural Word Vectors for Everyone", "Attention Is All You Need"); "of", "at", "in" and "and"
#: are left out ("Quoc Le of Google Brain", "Le and Mikolov" stay names).
_TITLE_JOINERS = frozenset("for with via into to on the a an is are towards using without".split())


def _title_run(words: list[str]) -> bool:
    """Whether the words of a title-case run read as a title, not as a name: three or more, with a title's
    joining word (``_TITLE_JOINERS``) and a word naming a thing (a noun ending as a field's,
    :func:`verifiers.arxiv.matching.term_word`, or a plural after two words), or with "of" and a plural of such
    a noun ("Distributed Representations of Sentences"; "Quoc Le of Northeastern University" names a person)."""
    if len(words) < 3:
        return False
    lowered = [w.lower() for w in words]
    if not _TITLE_JOINERS.isdisjoint(lowered):
        return any(term_word(w) or i >= 2 and term_words(words[i - 2:i + 1]) for i, w in enumerate(lowered))
    return "of" in lowered and any(w.endswith("s") and term_word(w) for w in lowered)


#: Title words joined on after "and" ("... of Sentences and Documents"), ending in a noun of a thing.
_AND_MORE_RE = re.compile(rf"[ \t]+and[ \t]+{CAP_WORD}(?:[ \t]+{CAP_WORD})*")


#: A separator inside a title-case run: a colon or a dash ("Pipelines: Noam Shazeer", "Models - ZHIHONG SHAO").
_RUN_SEPARATOR_RE = re.compile(r"\s*[:–—-]+\s+|\s+[:–—-]+\s*")
_ET_AL_RE = re.compile(r"[ \t,]*et\.?[ \t]+al\b")
_FUNCTION_LIKE = _TITLE_JOINERS | frozenset("of in at and or from by".split())


def _name_at_end(line: str, run: re.Match[str]) -> bool:
    """Whether the title-case ``run`` of ``line`` ends in a person's name rather than a title's words: "et al."
    right after it, or a part of it between colons or dashes is shaped as a name (:func:`_name_shaped`:
    "Models: Noam Shazeer", "JONATHAN HO - Learning ..."; not "Models: A Survey", "A: PyTorch Edition")."""
    if _ET_AL_RE.match(line, run.end()):
        return True
    parts = _RUN_SEPARATOR_RE.split(run.group())
    return len(parts) >= 2 and any(_name_shaped(_WORD_RE.findall(part)) for part in parts)


def _name_shaped(words: list[str]) -> bool:
    """Whether ``words`` (a part of a title-case run between colons or dashes) may be a person's name: two to
    four words, none a joining word, a noun of a thing or a plural ("Noam Shazeer", "JONATHAN HO"; not "A
    Survey", "PyTorch Edition", "Large Language Models")."""
    return 2 <= len(words) <= 4 and not any(w.lower() in _FUNCTION_LIKE or term_word(w.lower()) or (
        w.lower().endswith("s") and len(w) > 3) for w in words)


#: The known papers' first-author surnames of three letters or more that are no English function word
#: ("Vaswani", "Brown"; not "He"), capitalised or in capitals: such a word is a name wherever it stands.
_SURNAME_FORMS: tuple[str, ...] = tuple(sorted(
    {f for p in PAPERS if len(p.last_name) >= 3 and p.last_name.lower() not in FUNCTION_WORDS
     for f in (p.last_name, p.last_name.upper())}))
_KNOWN_SURNAME_RE = re.compile(r"(?<![^\W_])(?:" + "|".join(map(re.escape, _SURNAME_FORMS)) + r")(?![^\W_])")
#: The same surnames in one automaton, for ASCII text: one pass instead of trying the lookbehind and every
#: surname at each character.
_KNOWN_SURNAME_AC = ascii_automaton(f.encode() if f.isascii() else b"\xff\xff" for f in _SURNAME_FORMS)


def _names_known_surname(text: str) -> bool:
    """Whether ``_KNOWN_SURNAME_RE`` occurs in ``text``: a known first author's surname as a whole word (no letter
    or digit on either side)."""
    if not text.isascii():
        return _KNOWN_SURNAME_RE.search(text) is not None
    n = len(text)
    return any((s == 0 or not text[s - 1].isalnum()) and (e == n or not text[e].isalnum())
               for _, s, e in _KNOWN_SURNAME_AC.find_matches_as_indexes(text.encode(), overlapping=True))


def only_titles(text: str) -> bool:
    """Whether ``text`` offers titles and nothing else that could name a person: every line holding a capital
    letter is title-case runs that read as titles (:func:`_title_run`: "Going Deeper with Convolutions",
    "\"Attention Is All You Need\", or maybe \"Self-Attention Networks for Translation\"") with only lower-case
    words, quotes, markup and list markers around them, and no known first author's surname
    (``_KNOWN_SURNAME_RE``) anywhere.  A title given on an author task names no one; a name beside it
    ("Attention Is All You Need, Vaswani et al.", a line "Omar Khattab", "Vaswani - Language Models ...")
    still does."""
    if _names_known_surname(text):  # "Vaswani - Language Models are ...": a known author's surname names
        return False
    seen = False
    for line in text.splitlines():
        if not any(c.isupper() for c in line):
            continue
        rest, at = [], 0
        for run in TITLE_RUN_RE.finditer(line):
            if not _title_run(_WORD_RE.findall(run.group())) or _name_at_end(line, run):
                return False
            end = run.end()
            more = _AND_MORE_RE.match(line, end)
            if more is not None and term_word(more.group().split()[-1].lower()):
                end = more.end()
            rest.append(line[at:run.start()])
            at = end
        rest.append(line[at:])
        if any(c.isupper() for piece in rest for c in piece):
            return False
        seen = True
    return seen


__all__ = ["metadata_line", "offers_nothing", "only_titles", "placeholder_line", "prose_sentence", "service_error"]
