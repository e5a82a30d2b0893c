"""Per-kind graders of the arXiv verifier: ``(PaperMatcher, Response) -> (correctness, well_formed, feedback)``.

The scale (shared by all verifiers, :mod:`verifiers.base`): composite = 0.5 correctness + 0.3 well_formed
+ 0.2 conciseness, so correct and concise 1.00, correct but hedged 0.75 (correctness ``HEDGED_CREDIT``),
confidently wrong 0.50, evasive or empty 0.00 (well_formed 0).

Rules, per kind (what counts as an answer is read by :mod:`verifiers.arxiv.matching`: echoes of the question
or rubric, refusal clauses and metadata numbers are removed first; negated or corrected candidates are
retracted and do not count):

* **well formed** means the response offers an answer of the kind's shape: an arXiv ID, a year (also inside a
  date: ``2017-06-12``, ``2017.06.12``, ``12/06/2017``), a title, a name.  Filler, an echoed question or
  rubric, a refusal (even one holding a request id or a cut-off year) offer none and score 0.00 for every kind.
* **committed part**: a response that takes back what it said ("Final answer: B", "scratch that", "I meant B")
  or concedes what others say ("Some say A; in fact B") is graded on what it commits to
  (:func:`grade_committed`; the whole response when that part offers no answer); so is a chat transcript's last
  assistant turn, and the text after reasoning or a tool call (:func:`verifiers.arxiv.matching.turn_spans`).  A
  service's error reply (:func:`verifiers.arxiv.offers.service_error`) is evasive.
* **id / year**: the right value alone is correct; with other distinct values it is hedged; only wrong values
  are wrong.  An arXiv ID is never a year (``2005.14165`` is not 2005); old-style IDs (``cs/0601001``) are IDs.
  A value given as context right after a cue ("see also", "cf.", "related:", "the YYMM prefix"), or that its
  clause attributes to another work (:func:`_other_work_before`: "for comparison, X is ...", "its follow-up
  ... is ...", a line under "References:"), is no rival when a value without such a cue remains.
* **conditionals**: the right answer under one condition and another under another ("If you mean X, A;
  otherwise B") is hedged, whichever branch comes first (:func:`_conditional_hedge`); so are titles on lines
  labelled as options ("Option A: X\nOption B: Y", :func:`_labelled_rival`).
* **title**: correct when the title occurs up to normalisation (case, punctuation, spacing, quotes, LaTeX,
  hyphenation) and is not part of a longer title (``Attention Is All You Need in Speech Separation`` is
  another paper).  Another known paper's title or a longer title alone is wrong; with the right title, or any
  other title listed with it ("A or B", list items), hedged.  A title-like answer with at least half of the
  title's content words in the title's order, and no content word the title lacks (a title with other words,
  "Denoising Diffusion Implicit Models", is another paper's: wrong), earns ``PARTIAL_TITLE_WEIGHT`` x that
  share, at most 0.3 (composite 0.65), clearly below hedged.  A one-line answer shaped as a title in any case
  that is not the title is wrong, not evasive (:func:`_title_shaped_line`).
* **author**: correct when the first author's surname occurs in a citation form (see
  :func:`verifiers.arxiv.matching.author_pattern`, as a whole name: "Smith-Vaswani" is someone else); naming
  co-authors too is fine, offering another name as an alternative ("Kingma or Ba") is hedged, giving them a role
  other than first ("Kingma is the second author") retracts them, and a list of authors in any citation style
  ("Shazeer N, Vaswani A", "N. Shazeer, A. Vaswani") names its first author first.  The same surname with
  another given name or initial is another person ("Pavel Mikolov", "Mikolov, Pavel", "X. He", "Jerry Wei" for
  Jason Wei: :func:`_another_person`; initials compared after APA 7's "Surname, Initials.", whole given names
  by :func:`same_given_name`), and a name split over two lines or inside emphasis is one name
  (:func:`_join_split_name`, :func:`_name_start`).  A surname that is also an English word ("He") counts alone
  in an answer position only (:func:`_bare_surname_spans`), and a cue calling names candidates reaches its own
  sentence (:func:`_names_under_listing_cue`).  An explicit ordering (a numbered author list, a table's
  position column, "second_author") gives every name its place (:func:`_explicit_position`): the first is
  the first author, the others are co-authors, not rivals.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Callable

from verifiers.arxiv.matching import (
    _MONTHS,
    CORRECTION_AFTER_RE,
    ID_RE,
    INITIALS_AFTER_RE,
    LIST_ITEM,
    MAX_GRADED_CHARS,
    METADATA_IN_BRACKET_RE,
    REFUSAL_RE,
    TITLE_RUN_RE,
    WINDOW,
    YEAR_RE,
    CaseFree,
    KeyTable,
    PaperMatcher,
    Response,
    alternative_after,
    alternative_before,
    blank,
    column_field,
    committed_part,
    contains_any,
    content_words,
    institution_after,
    interjection,
    is_extended,
    item_offers,
    listed_items,
    lower_case_twin,
    matches_at,
    may_be_listed,
    name_like,
    name_tokens,
    position_label,
    prose_line,
    record_tag,
    remark_line,
    retracted,
    sentence_span,
    spans_dehyphenated,
    superseded,
    term_word,
    title_like,
    title_spans,
    year_of,
)
from verifiers.arxiv.normalise import DISCOURSE_WORDS, NON_CONTENT_WORDS, NON_NAME_WORDS, listing, quote, words_of
from verifiers.arxiv.offers import offers_nothing, only_titles, service_error
from verifiers.arxiv.papers import GIVEN_NAME_FORMS, PAPERS

#: Conciseness is 1.0 up to this many characters of (stripped) output ...
CONCISE_CHARS = 800
#: ... and falls linearly to 0.0 at this many.
MAX_CHARS = 4000
#: Correctness when the right answer is given among other distinct candidates.
HEDGED_CREDIT = 0.5
#: A partial title needs at least this share of the title's content words ...
PARTIAL_TITLE_MIN_SHARE = 0.5
#: ... and earns this times that share (at most 0.3, composite 0.65: clearly below a hedged answer's 0.5, 0.75).
PARTIAL_TITLE_WEIGHT = 0.3

#: At most this many occurrences of the title or the author's name are examined (bounds the work on huge,
#: repetitive outputs; an ordinary answer has a handful).
MAX_OCCURRENCES = 50

Verdict = tuple[float, float, str]

_ROLE_AFTER = re.compile(  # on the name's own line: "X\nCo-authors: Y", "X (co-author: Y)" give X no role
    r"[ \t]*[,(]?[ \t]*(?:(?:who|is|was|as|being|listed|named|credited|appears|appearing|only|also|actually|just"
    r"|merely)[ \t]+){0,4}(?:the|a|an)?[ \t]*"
    r"(?:second|third|fourth|fifth|sixth|seventh|last|senior|corresponding|middle|final|other|another|co-?)"
    r"[\s-]*(?:author|writer|contributor)(?!s?[ \t]*:)|\s+(?:is|was)\s*n[o’']?t\s+(?:the\s+)?first"
    r"|\s+(?:is|was)\s+(?:the\s+)?(?:second|third|fourth|fifth|last)\s*(?=[.,;)\n]|\Z)"
    r"|\s+(?:is|was)\s+(?:listed|named|credited|placed|given|ranked)\s+(?:as\s+)?(?:the\s+)?(?:second|third|fourth"
    r"|fifth|last)\b",
    re.IGNORECASE,
)
_ROLE_BEFORE = re.compile(
    r"(?:(?:second|third|fourth|fifth|sixth|seventh|last|senior|corresponding|middle|final|other|co-?)[\s-]*"
    r"authors?\s*(?:is|was|are|were|:|-|—|–)?\s*(?:the\s+)?"
    r"|(?:co-?wrote|co-?authored|wrote|written|worked)\s+(?:it\s+|the\s+paper\s+)?(?:together\s+)?with\s+"
    r"|\([ \t*_]*(?:(?:along|together)\s+)?with\s+)"  # "X\n(with Y and others)": Y co-wrote it
    r"(?:\w+\s+)?$",
    re.IGNORECASE,
)


#: Every _ROLE_AFTER match holds one of these (its first branch ends in a role noun, its second in "first", its
#: third in an ordinal); on ASCII text only, where no other character case-folds to their letters ("ı" does to
#: "i", "ſ" to "s").
_ROLE_AFTER_KEYS: tuple[str, ...] = ("author", "writer", "contributor", "first", "second", "third", "fourth",
                                     "fifth", "last")
_ROLE_AFTER_CF = CaseFree(_ROLE_AFTER)
_has_role_after_key = contains_any(_ROLE_AFTER_KEYS)
_ROLE_BEFORE_CF = CaseFree(_ROLE_BEFORE)


def _role_after(r: Response, end: int) -> bool:
    """Whether ``_ROLE_AFTER`` gives the name ending at ``end`` a role other than first ("X is the second
    author"), within 60 characters; a window without a key (``_ROLE_AFTER_KEYS``) is not matched."""
    if r.ascii:
        window = r.lower[end:end + 60]
        if not _has_role_after_key(window):
            return False
    return _ROLE_AFTER_CF.match(r, end, end + 60) is not None


def _role_before(r: Response, start: int) -> bool:
    """Whether ``_ROLE_BEFORE`` gives the name at ``start`` a role other than first ("the second author is X",
    "who co-wrote it with X").  Every match holds "author" or "with" (no other character case-folds to their
    letters), so a window without them is not searched (the search tries every position of the window)."""
    lo = max(0, start - 40)
    window = r.text[lo:start].lower()
    return ("author" in window or "with" in window) and _ROLE_BEFORE_CF.search(r, lo, start) is not None


def conciseness(n_chars: int) -> float:
    """Length credit in [0, 1]: 1.0 up to ``CONCISE_CHARS`` characters, linear to 0.0 at ``MAX_CHARS``."""
    if n_chars <= CONCISE_CHARS:
        return 1.0
    if n_chars >= MAX_CHARS:
        return 0.0
    return (MAX_CHARS - n_chars) / (MAX_CHARS - CONCISE_CHARS)


def no_answer(expected: str, shape: str, r: Response, hint: str = "") -> Verdict:
    """Not well formed: no answer of ``shape`` was found; the feedback says why (too long, refusal, echo)."""
    if r.truncated:
        return 0.0, 0.0, (f"expected {expected}; the output was too long to grade: only its first "
                          f"{MAX_GRADED_CHARS:,} characters are searched, and they hold nothing of the expected "
                          f"shape ({shape}){hint}")
    why = ("; the response refuses or says it does not know" if r.refuses() else
           "; the response repeats the question or rubric" if r.echoed else "")
    return 0.0, 0.0, (f"expected {expected}; no answer of the expected shape ({shape}) was found{why}{hint}; "
                      f"response: {quote(r.raw)}")


def committed_or_hedged(found: list[str], want: str, what: str, hint: str = "") -> Verdict:
    """The rule of the ID and year kinds, for a non-empty list of distinct values ``found``: the right
    value alone is correct (1), the right value among others is hedging (``HEDGED_CREDIT``), only wrong
    values are confidently wrong (0, but well formed)."""
    if found == [want]:
        return 1.0, 1.0, f"correct: expected {what} {want}, response said {want}{hint}"
    if want in found:
        others = [v for v in found if v != want]
        return HEDGED_CREDIT, 1.0, (f"expected {what} {want}; the right {what} was given among others "
                                    f"({listing(others)}); commit to one {what}{hint}")
    return 0.0, 1.0, f"expected {what} {want}, response said {listing(found)}{hint}"


#: Every arXiv ID has a dot and four digits; every year starts "19" or "20".  Patterns with a literal first
#: character are scanned fast by ``re``; the full ID_RE / YEAR_RE then runs only where these hit.
_ID_HIT_RE = re.compile(r"\.[0-9]{4}")
_YEAR_HIT_RES = (re.compile(r"19[0-9]{2}"), re.compile(r"20[0-9]{2}"))
_NUMBER_CHARS = frozenset("0123456789.")
#: A unit right after a number makes it a quantity, not a year ("2022 tokens/min", "after 2020 ms", "$2020/month").
_UNIT_AFTER_RE = re.compile(
    r"[ \t]?(?:%|/[ \t]?(?:min|month|mo|s|sec|hour|hr|day|week|year|yr|token|request)s?\b|(?:ms|milliseconds?|secs?"
    r"|seconds?|mins?|minutes?|hours?|tokens?|requests?|calls?|queries|results|words|characters|chars|bytes"
    r"|[kmgt]i?b|usd|eur|gbp|dollars|euros|px)\b)",
    re.IGNORECASE)
#: The groups of an international phone number before its last one: "+", a digit, then digits, spaces, brackets
#: and hyphens up to the candidate.
_PHONE_BEFORE_RE = re.compile(r"\+[0-9][0-9 ()-]*\Z")


def _values(r: Response, matches: list[tuple[str, int, int]]) -> list[str]:
    """The values of :func:`_offered`, in order."""
    return list(_offered(r, matches))


def _offered(r: Response, matches: list[tuple[str, int, int]]) -> dict[str, tuple[int, int]]:
    """Distinct values of ``matches`` (value, start, end) that count as offered answers, in order (a value is
    checked only until one of its occurrences counts); a value negated or corrected anywhere is withdrawn
    everywhere, so a later mention of it ("not 2005 (that is just the prefix 2005)") offers it no more, unless
    the correction restates the same value right away ("2402.03300v1, or rather 2402.03300v2")."""
    found: dict[str, tuple[int, int]] = {}
    withdrawn: set[str] = set()
    text = r.text
    for i, (value, start, end) in enumerate(matches):
        if value in found or value in withdrawn:
            continue
        # a value written inside a URL or a date is negated or corrected as the URL or date is: "It isn't
        # arxiv.org/abs/A", "Neither May 6, 2013 nor B", "2013-10 (no, B)"
        lo, hi = _value_bounds(text, start, end)
        if r.counts(start, end, numeric=True) and (lo == start and hi == end or not retracted(text, lo, hi)):
            found[value] = (lo, hi)
        elif (retracted(text, start, end) or retracted(text, lo, hi)) and not (  # "not 2005 (the prefix 2005
                CORRECTION_AFTER_RE.match(text, end, end + WINDOW)  # ...)": stays negated, unless a correction
                and any(v == value and s - end <= WINDOW for v, s, _ in matches[i + 1:i + 3])):  # restates it:
            # "A v1, or rather A v2"
            withdrawn.add(value)
    for value in withdrawn & found.keys():
        del found[value]
    if len(found) > 1:  # "2016. Actually, it was 2017": the first value is superseded by the later one
        starts = [start for start, _ in found.values()]
        return {v: span for v, span in found.items() if not superseded(r, span[1], lambda: starts)}
    return found


#: What a value written as part of a URL or a date has before it: an arXiv URL ("https://arxiv.org/abs/",
#: "arxiv.org/pdf/"), a month name with or without a day ("May 6, ", "8 Jun ", "October "), a day and month
#: ("09/06/", "11.02.") or a month ("06/").
_VALUE_BEFORE_RE = re.compile(
    r"(?:(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/"
    r"|(?<![^\W\d_])(?:[0-9]{1,2}(?:st|nd|rd|th)?[ \t]+(?:of[ \t]+)?)?(?:" + _MONTHS + r")\.?,?[ \t]+"
    r"(?:[0-9]{1,2}(?:st|nd|rd|th)?,?[ \t]+)?"
    r"|(?<![0-9./-])(?:[0-9]{1,2}[./-]){1,2})\Z",
    re.IGNORECASE)
#: What a year written as part of a date has after it: a month, and a day ("2013-10", "2022-03-16").
_VALUE_AFTER_RE = re.compile(r"[./-](?:0?[1-9]|1[0-2])(?:[./-][0-9]{1,2})?(?![0-9])")
_MONTH_WORDS = frozenset(_MONTHS.split("|"))
#: The last three letters of a month's name, and the characters a day or an abbreviated month ends with: cheap
#: tests before :func:`_month_or_day_before`.
_MONTH_ENDS = frozenset(m[-3:] for m in _MONTH_WORDS)
_DAY_OR_MONTH_ENDS = frozenset("0123456789,.")


def _value_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of the URL or date that the ID or year at ``text[start:end]`` is written in
    (``_VALUE_BEFORE_RE``, ``_VALUE_AFTER_RE``), or ``(start, end)`` when it stands alone.  A negation or a
    correction is read around that span, since it governs the URL or date as a whole.  The patterns run only
    where a character test allows them (a slash, dot or hyphen next to the value, a month or a day before it):
    most values stand alone."""
    year = end - start == 4
    if start:
        c = text[start - 1]
        if c in "/.-" or c == " " and year and start > 1 and (
                text[start - 2] in _DAY_OR_MONTH_ENDS or text[max(0, start - 4):start - 1].lower() in _MONTH_ENDS) and (
                _month_or_day_before(text, start - 1)):
            before = _VALUE_BEFORE_RE.search(text, max(0, start - 40), start)
            if before is not None:
                start = before.start()
    if year and end < len(text) and text[end] in "/.-":
        after = _VALUE_AFTER_RE.match(text, end)
        if after is not None:
            end = after.end()
    return start, end


def _month_or_day_before(text: str, space: int) -> bool:
    """Whether the word before the space at ``space`` is a month ("May", "Jun.") or a day ("6,", "21st")."""
    word = text[max(0, text.rfind(" ", max(0, space - 12), space) + 1):space].rstrip(",.")
    return word.lower() in _MONTH_WORDS or 0 < len(word) <= 4 and word[0].isdigit() and (
        word.isdigit() or word[-2:].lower() in ("st", "nd", "rd", "th"))


#: A cue right before a number that makes it context for another paper or another field, not a rival answer:
#: a cross-reference ("see also 1810.04805", "cf.", "related:", "not to be confused with", "follow-up:", "later
#: work:"; also the further items of its list: "see also: A, B") or the YYMM prefix read out ("the prefix 2005
#: means May 2020").
_CONTEXT_BEFORE_RE = re.compile(
    r"(?:\bsee\s+also|\bcf\.|\bcompare(?:\s+with)?|\brelated(?:\s+(?:paper|work|id|identifier))?|\bnot\s+to\s+be"
    r"\s+confused\s+with|\bfollow[\s-]?ups?(?:\s+(?:paper|work))?|\bsuccessor|\bpredecessor|\bbuilds?\s+on"
    r"|\bbased\s+on|\bcited\s+by|\bcites|\bprefix(?:\s+is)?|\byymm|\blater\s+work|\bsubsequent(?:\s+work)?)"
    r"(?:\s*[:(]?\s*(?:arxiv\s*:?\s*)?|(?:[^.;!?\n]|\.(?=[0-9])){0,40}(?:[,&]|\sand)\s*)\Z")
_CONTEXT_KEYS: tuple[str, ...] = ("see", "cf", "compar", "relat", "confus", "follow", "success", "predecess",
                                  "build", "based", "cite", "prefix", "yymm", "later", "subsequent")
_has_context_key = contains_any(_CONTEXT_KEYS)


def _without_context(r: Response, offered: dict[str, tuple[int, int]], own: str = "") -> list[str]:
    """The values of ``offered`` (value -> span), without those given as context (``_CONTEXT_BEFORE_RE``: "see also
    X", "the prefix X") when a value without such a cue remains: context for another paper is no rival answer."""
    if len(offered) < 2:
        return list(offered)
    context = set()
    for value, (start, _) in offered.items():
        window = r.lower[max(0, start - 40):start]
        if _has_context_key(window) and _CONTEXT_BEFORE_RE.search(window) or _other_work_before(r, start, own) or (
                ("with" in window or "like" in window or "such" in window) and _PREFIX_BEFORE_RE.search(window)):
            context.add(value)
    return [v for v in offered if v not in context] if context and len(context) < len(offered) else list(offered)


#: How far back the clause of a candidate is read for a cue naming another work (characters).
CLAUSE_REACH = 200
#: A cue, earlier in a candidate's clause, that the candidate belongs to another work than the answer: a
#: cross-reference ("see also", "for comparison", "cf."), a related, earlier or later work ("the related paper",
#: "its follow-up", "it was later followed by", "the predecessor", "not to be confused with", "a different
#: paper"), or a reference list's heading ("References:", "Further reading:").
_OTHER_WORK_RE = re.compile(
    r"\b(?:see\s+also|cf\.|for\s+comparison|in\s+comparison|by\s+contrast|compared?\s+(?:with|to)|compare"
    r"|related\s+(?:paper|work|article|preprint|study|model)s?|follow[\s-]?ups?|followed\s+by|succeeded\s+by"
    r"|superseded\s+by|successors?|predecessors?|sequels?|companion\s+paper|not\s+to\s+be\s+confused"
    r"|(?:a|an)\s+(?:different|separate|another|other|earlier|later|newer|older)\s+(?:paper|work|article|preprint)"
    r"|(?:another|other)\s+(?:paper|work|article|preprint)s?|references|bibliography|further\s+reading"
    r"|builds?\s+on|built\s+on|based\s+on|extends|extended\s+by|cited\s+by|cites)\b")
_OTHER_WORK_KEYS: tuple[str, ...] = ("see also", "cf.", "compar", "contrast", "related", "follow", "succe",
                                     "supersed", "predecess", "sequel", "companion", "confused", "different",
                                     "separate", "another", "other", "earlier", "later", "newer", "older",
                                     "references", "bibliography", "reading", "built", "build", "based", "extend",
                                     "cite")
_has_other_work_key = contains_any(_OTHER_WORK_KEYS)
#: What ends the clause a cue governs: a sentence's end, a semicolon, a line break (unless a reference list's
#: heading opens the lines below), "but", "whereas", "while", or what states an answer after it ("... with a related
#: paper, in which case the answer would be B": B is offered as the answer, not as the related paper's).
_CLAUSE_BREAK_RE = re.compile(r"[.!?](?=\s)|;|\n|\b(?:but|whereas|while|in\s+which\s+case)\b"
                              r"|\b(?:answer|it)\s+(?:would|could|might|may)\s+(?:also\s+|instead\s+)?be\b")
#: A heading that makes every line below it a reference to other works ("References:", "## Related work").
_REFERENCE_HEADING_RE = re.compile(r"(?:^|\n)[ \t#*_>]*(?:references|bibliography|further\s+reading|related"
                                   r"\s+(?:work|papers)|see\s+also|sources)[ \t*_]*:?[ \t*_]*(?=\n)")


#: The start of a number read out ("the identifier 2005.14165 starts with 2005"): a part, not a value of its own.
#: Also an example of a kind of identifier ("old-style ones like cs/0112017").
_PREFIX_BEFORE_RE = re.compile(r"\b(?:(?:starts?|begins?|starting|beginning|prefixed)\s+with|(?:ones|those|ids"
                               r"|identifiers|numbers|formats?)\s+(?:such\s+as|like))\s*\Z")


def _other_work_before(r: Response, start: int, own: str = "") -> bool:
    """Whether the candidate at ``start`` is attributed to another work than the answer: a cue of
    ``_OTHER_WORK_RE`` earlier in its clause (at most ``CLAUSE_REACH`` characters back; "See also the related
    paper "..." (arXiv:1310.4546)", "For comparison, "..." is 1503.02531", "its follow-up, ..., is
    1310.4546"), or a reference list's heading above it ("References:\n[1] ..., arXiv:1310.4546").  A
    substring test on the window comes first; most candidates have no cue near them."""
    lower = r.lower
    lo = max(0, start - CLAUSE_REACH)
    window = lower[lo:start]
    if _has_possessive_key(window) and _possessed_work_before(lower, lo, start, own):
        return True
    if not _has_other_work_key(window):
        return False
    breaks = [b.end() for b in _CLAUSE_BREAK_RE.finditer(lower, lo, start)]
    if _OTHER_WORK_RE.search(lower, breaks[-1] if breaks else lo, start) is not None:
        return True
    return ("\n" in window and _REFERENCE_HEADING_RE.search(lower, lo, start) is not None)


#: A work attributed to someone by a possessive or "by": "Jason Wei's paper", "Hinton's 2015 work", "the paper
#: by Wei et al." (group 1: the possessor; group 2: the words after "by", to the clause's end).
_POSSESSED_WORK_RE = re.compile(
    r"(?<![\w'’])([^\W\d_][\w-]*)['’]s\s+(?:[\w-]+\s+){0,2}?(?:paper|work|article|preprint|study|report)s?\b"
    r"|\b(?:paper|work|article|preprint|study|report)s?\s+(?:by|from)\s+([^\W\d_][^\n]*)")
#: Possessors that are no one's work: contractions ("it's paper 1301.3781") and the answer's own paper.
_NOT_POSSESSORS = frozenset("it that what there here he she who let this one today year paper article work "
                            "author authors its".split())
_has_possessive_key = contains_any(("'s ", "’s ", " by ", " from "))


def _possessed_work_before(lower: str, lo: int, start: int, own: str) -> bool:
    """Whether the clause of the candidate at ``start`` (from ``lo``) attributes it to a work of someone other
    than the first author ``own`` (a lower-case surname; "" for none known): "Jason Wei's paper 2201.11903",
    "the paper by Wei et al. is 2201.11903"; "Mikolov's paper is 1301.3781" on Mikolov's paper is no other
    work."""
    breaks = [b.end() for b in _CLAUSE_BREAK_RE.finditer(lower, lo, start)
              if not lower.endswith(_ABBREVIATIONS, lo, b.end())]  # "by Wei et al. is 2201.11903": one clause
    clause = breaks[-1] if breaks else lo
    for cue in _POSSESSED_WORK_RE.finditer(lower, clause, start):
        if cue.group(1) is not None and cue.group(1) in _NOT_POSSESSORS:
            continue
        # whose: the possessor with the words just before it ("Mikolov et al.'s"), or all after "by"
        whose = lower[max(clause, cue.start() - 24):cue.end(1)] if cue.group(1) else lower[cue.start(2):start]
        if not own or own not in _WORDS_RE.findall(whose):
            return True
    return False


_WORDS_RE = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
#: Full stops that end an abbreviation, not a clause.
_ABBREVIATIONS: tuple[str, ...] = (" al.", " cf.", "e.g.", "i.e.", " vs.", " etc.")


#: A pointer to a source in a candidate's clause: "see", "refer to", "consult", "check".
_SOURCE_BEFORE_RE = re.compile(r"\b(?:see|refer\s+to|consult|check)\b")


def _only_cited(r: Response, offered: dict[str, tuple[int, int]], found: list[str]) -> bool:
    """Whether a response that refuses offers the values ``found`` only as part of a source it points to ("I
    cannot answer; see arXiv policy (2019)", "I can't say. Refer to the 2021 FAQ."): each one's clause, before it,
    holds a pointer (``_SOURCE_BEFORE_RE``).  Such a number is no answer; a refusal offers none."""
    if not found:
        return False
    lower = r.lower
    for value in found:
        start = offered[value][0]
        lo = max(0, start - 80)
        if not _has_source_key(lower[lo:start]):
            return False
        breaks = [b.end() for b in _CLAUSE_BREAK_RE.finditer(lower, lo, start)]
        if _SOURCE_BEFORE_RE.search(lower, breaks[-1] if breaks else lo, start) is None:
            return False
    return r.refuses()  # last: a search of the whole response, read once


_has_source_key = contains_any(("see", "refer", "consult", "check"))


#: An old-style arXiv identifier (to March 2007): archive, optional subject class, "/", YYMMNNN ("cs/0601001",
#: "hep-th/9901001", "math.AG/0601001"), optional version.  A wrong one is a wrong ID, not a missing one.
OLD_ID_RE = re.compile(r"(?<![\w.-])((?:[a-z]+(?:-[a-z]+)?)(?:\.[A-Z]{2})?/[0-9]{2}(?:0[1-9]|1[0-2])[0-9]{3})"
                       r"(?:v[0-9]+)?(?![0-9])", re.IGNORECASE)


def find_ids(text: str) -> list[tuple[str, int, int]]:
    """``(id, start, end)`` of every :data:`ID_RE` identifier in ``text`` (version suffix in the span), and of
    every old-style one (:data:`OLD_ID_RE`), in order."""
    out: list[tuple[str, int, int]] = []
    if "." not in text and "/" not in text:  # every ID has a dot, every old-style one a slash
        return out
    for hit in _ID_HIT_RE.finditer(text):
        if hit.start() >= 4:
            x = ID_RE.match(text, hit.start() - 4)
            if x is not None:
                out.append((x.group(1), x.start(), x.end()))
    if "/" in text:
        old = [(x.group(1).lower(), x.start(), x.end()) for x in OLD_ID_RE.finditer(text)]
        if old:
            out = sorted(out + old, key=lambda row: row[1])
    return out


def find_years(text: str) -> list[tuple[str, int, int]]:
    """``(year, start, end)`` of every year :data:`YEAR_RE` finds in ``text``, in order.  Each run of digits and
    dots (a number, an ID, a date) is read once, from its start, however many "19"/"20" it holds."""
    if "19" not in text and "20" not in text:
        return []
    hits = sorted(h.start() for pattern in _YEAR_HIT_RES for h in pattern.finditer(text))
    out, covered, n = [], 0, len(text)
    for hit in hits:
        if hit < covered:
            continue
        start = hit
        while start > covered and (text[start - 1].isdigit() or text[start - 1] in ".-" and start >= 2
                                   and text[start - 2].isdigit()):  # the whole dotted or hyphenated number
            start -= 1
        if text[start] in ".-":  # the separator after the number before, already read ("2019-2020")
            start += 1
        if "+" in text and _PHONE_BEFORE_RE.search(text, max(0, start - 30), start):
            continue  # the end of an international phone number ("+44 20 7946 2017")
        covered = hit
        while covered < n and text[covered] in _NUMBER_CHARS:
            covered += 1
        x = YEAR_RE.match(text, start)
        if x is not None and x.end() > hit and _UNIT_AFTER_RE.match(text, x.end()) is None:
            year = year_of(x)
            if year:
                out.append((year, x.start(), x.end()))
    return out


def grade_id(m: PaperMatcher, r: Response) -> Verdict:
    """Correctness 1 for the right ID alone (repeats and ``vN`` allowed), 0.5 among other IDs,
    0 for wrong IDs only; not well formed when no ``YYMM.NNNN(N)`` identifier is offered."""
    want = m.paper.arxiv_id
    offered = _offered(r, find_ids(r.text))
    found = _without_context(r, offered, m.last_name.lower())
    if found and r.may_refuse() and _only_cited(r, offered, found):
        found = []  # "I can't answer; see the arXiv FAQ (1501.00001)": a source cited by a refusal
    if not found:
        return no_answer(f"ID {want}", "an arXiv ID like YYMM.NNNNN", r)
    return committed_or_hedged(found, want, "ID")


def grade_year(m: PaperMatcher, r: Response) -> Verdict:
    """Years are whole-word ``19xx`` / ``20xx`` or the year of a dotted or slashed date, after skipping
    ID-shaped numbers (``2005.14165`` is not the year 2005).  One distinct year: 1 if right else 0; several
    including the right one: 0.5; none: not well formed.  With several, a year dating another event
    (``_EVENT_BEFORE_RE``: a venue, a revision, an award) is context and no rival, as long as a year without
    such a cue remains."""
    p, want = m.paper, m.year
    hint = f" (the YYMM prefix {p.yymm} of {p.arxiv_id} gives the year 2000 + {p.arxiv_id[:2]})"
    years = find_years(r.text)
    if "(" in r.text or "[" in r.text:  # a date in a bracket's metadata is no answer
        years = [y for y in years if not _bracket_metadata(r, y[1])]
    if years and ":" in r.text:  # a log's timestamp in a refusal or a service's message: no answer
        stamped = [y for y in years if _timestamp(r, y[1])]
        if stamped and (METADATA_IN_BRACKET_RE.search(r.lower) is not None or r.may_refuse() and r.refuses()):
            years = [y for y in years if y not in stamped]
    offered = _offered(r, years)
    if not offered:
        return no_answer(f"year {want}", "a 4-digit year", r, hint)
    found = _without_context(r, offered, m.last_name.lower())
    if r.may_refuse() and _only_cited(r, offered, found):  # "I cannot answer; see arXiv policy (2019)"
        return no_answer(f"year {want}", "a 4-digit year", r, hint)
    offered = {v: offered[v] for v in found}
    if len(found) > 1:  # "2015. It won the best paper award at CVPR 2016": 2016 dates another event
        events = {v for v, (start, end) in offered.items()
                  if (_EVENT_BEFORE_RE.search(r.lower, max(0, start - EVENT_WINDOW), start)
                      and not _submission_before(r.lower, start, offered)
                      or _EVENT_AFTER_RE.match(r.lower, end, end + 2 * EVENT_WINDOW)  # (its lookahead reads on)
                      or _work_after(r.lower, start, end))
                  and not _ALTERNATIVE_BEFORE_RE.search(r.lower, max(0, start - 16), start)}
        if events and len(events) < len(found):
            found = [v for v in found if v not in events]
    return committed_or_hedged(found, want, "year", hint)


#: A time of day right after a date ("12/03/2021 14:05", "2015-07-01T10:22:00Z").
_TIME_AFTER_RE = re.compile(r"[\w/.-]*[T\s,]+\d{1,2}:\d{2}")


def _bracket_metadata(r: Response, start: int) -> bool:
    """Whether the year at ``start`` sits in an open bracket ("(" or "[", on its line, at most 80 characters back) as
    metadata: after a metadata label in the same bracket (:data:`verifiers.arxiv.matching.METADATA_IN_BRACKET_RE`,
    the labels of the shared metadata rule: "(error 503, 12/03/2021)", "[retrieved 03.04.2015]", "(arXiv, accessed
    2023-05-01)"), or, in a response that refuses, as a date with a time of day (a log line's timestamp: "I can't
    reach arXiv (12/03/2021 14:05)").  A date
    given plainly ("It was submitted on 12/06/2017", "2017 (submitted 12 Jun 2017)") stays an answer."""
    text, lo = r.text, max(0, start - 80)
    opening = max(text.rfind("(", lo, start), text.rfind("[", lo, start))
    if opening < 0 or text.find(")", opening, start) >= 0 or text.find("]", opening, start) >= 0 or text.find(
            "\n", opening, start) >= 0:  # a bracket closed before the year, or left open on an earlier line
        return False
    if METADATA_IN_BRACKET_RE.search(r.lower, opening, start):
        return True
    return r.may_refuse() and r.refuses() and _TIME_AFTER_RE.match(text, start, start + 40) is not None


#: A time of day right before a date ("10:45 on 12.03.2024", "at 14:32 on 2020-05-01", "14:32 UTC, 1 May 2020",
#: "at 10:45 UTC on 12/03/2024"), read on the lower-case text up to the year: only the date's day and month (or
#: weekday) may follow the time.
_TIME_BEFORE_RE = re.compile(r"(?<![\w:])\d{1,2}:\d{2}(?::\d{2})?(?:[ \t]*(?:[ap]\.?m\.?|utc|gmt|[a-z]{3}))?"
                             r"[ \t,]*(?:on[ \t]+)?"
                             r"(?:(?:the[ \t]+)?(?:\d{1,2}(?:st|nd|rd|th)?|[a-z]{3,9}\.?)[ \t,]+){0,2}[\d/.-]{0,6}\Z")


def _timestamp(r: Response, start: int) -> bool:
    """Whether the year at ``start`` is part of a date with a time of day after it ("12/03/2021 14:05",
    "2021-06-12 10:00", "2015-07-01T10:22:00Z") or before it ("10:45 on 12.03.2024", "failed at 14:32 on
    2020-05-01"): a log line's or a status page's timestamp, which in a refusal or beside a service's metadata
    ("status 500", "try again"; the caller checks that) dates the failure, not the paper (README, Refusals;
    issue 17 class 6).  A submission cue
    before it ("submitted on 2017-06-12 17:57") keeps it an answer."""
    if _TIME_AFTER_RE.match(r.text, start, start + 40) is None and _TIME_BEFORE_RE.search(
            r.lower, max(0, start - 40), start) is None:
        return False
    return not _submission_before(r.lower, start, {})


#: An alternation right before a year: it offers the year as an alternative, whatever event a cue before names
#: ("2017, unless you mean the v2, otherwise 2018").
_ALTERNATIVE_BEFORE_RE = re.compile(r"(?:\bor|\botherwise|\bif\s+not|/)[\s,:]*\Z")
#: An event named in brackets right after a year: "2018 (journal version)", "2023 (v7)", "2017 (NeurIPS)" (not
#: a bracket holding another year: "2017 (v2 posted 2018)" dates the v2 by 2018).
_EVENT_AFTER_RE = re.compile(
    r"\s*\((?=[^)\n]{0,30}\b(?:journal|conference|proceedings|version|revision|revised|published|publication"
    r"|camera[\s-]?ready|v[2-9]|neurips|nips|icml|iclr|cvpr|acl|emnlp)\b)(?![^)\n]*(?:19|20)[0-9]{2})")
#: How far before a year an event other than the submission is looked for (characters).
EVENT_WINDOW = 40
#: A year that dates another event than the submission: publication at a venue, a later revision, an award
#: ("published at ICLR 2015", "the latest revision (v7) is dated 02.08.2023", "best paper at CVPR 2016").
#: Such a year is context, not a rival answer, when the response also gives a year without such a cue.
_EVENT_BEFORE_RE = re.compile(
    r"\b(?:published|publication|presented|appeared|accepted|revised|revision|updated|latest|version|v[2-9]"
    r"|follow[\s-]?ups?|successor|sequel|later\s+work"
    r"|award|conference|proceedings|journal|venue|cvpr|iccv|eccv|iclr|icml|neurips|nips|acl|emnlp|naacl|aaai"
    r"|ijcai|tmlr|jmlr|coling|icassp)\b[^.;!?\n]*\Z")


#: A cue that a year dates the submission itself, not another event: the first, original or arXiv version, v1,
#: the preprint, posted or submitted ("The first version dates from 2013", "The arXiv version was posted on 22
#: December 2014").
_SUBMISSION_BEFORE_RE = re.compile(
    r"\b(?:(?:first|original|initial|earliest|arxiv|preprint)\s+(?:version|revision|draft|release)|v1|preprint"
    r"|(?:first\s+)?(?:posted|submitted|uploaded))\b[^.;!?\n]*\Z")
_SUBMISSION_KEYS: tuple[str, ...] = ("first", "original", "initial", "earliest", "arxiv", "preprint", "v1",
                                     "posted", "submitted", "uploaded")
_has_submission_key = contains_any(_SUBMISSION_KEYS)


def _submission_before(lower: str, start: int, offered: dict[str, tuple[int, int]]) -> bool:
    """Whether a cue of ``_SUBMISSION_BEFORE_RE`` dates the year at ``start`` as the submission's, read from the
    previous candidate's end (or ``EVENT_WINDOW`` characters back): the nearest cue names the event, so "posted
    on 22 December 2014, with ICLR 2015 acceptance" dates 2015 by ICLR, not by "posted"."""
    lo = max([start - EVENT_WINDOW, 0] + [end for s, end in offered.values() if end <= start])
    if not _has_submission_key(lower[lo:start]):
        return False
    cue = _SUBMISSION_BEFORE_RE.search(lower, lo, start)
    return cue is not None and _LATER_VERSION_RE.search(lower, lo, cue.start()) is None  # "v7 was posted in 2023"


#: A later version named before a submission cue: then "posted" dates that version ("v7 was posted in 2023").
_LATER_VERSION_RE = re.compile(r"\b(?:v[2-9]|v[1-9][0-9]|latest|revised|revision|current|updated|camera[\s-]?ready"
                               r"|final|journal|conference)\b")


#: A year inside the name of another work right after an article: "a 2016 survey", "another 2019 study", "the
#: 2021 review by ..." (not "the 2017 paper": that may be the paper itself).
_ARTICLE_BEFORE_RE = re.compile(r"(?:^|[^\w])(?:a|an|another|the|one|their|his|her)[ \t]+\Z")
_WORK_AFTER_RE = re.compile(
    r"[ \t]+(?:[a-z-]+[ \t]+)?(?:survey|review|study|studies|article|book|blog|talk|tutorial|workshop|follow[\s-]?up"
    r"|re-?implementation|benchmark|competition|challenge|edition|textbook|lecture|course|report|analysis"
    r"|overview|thesis|dissertation|keynote|interview|podcast|video|post|paper\s+by)s?\b")


def _work_after(lower: str, start: int, end: int) -> bool:
    """Whether the year at ``lower[start:end]`` dates another work: an article before it and a work's noun after
    it (``_WORK_AFTER_RE``: "a 2016 survey called it foundational")."""
    return _ARTICLE_BEFORE_RE.search(lower, max(0, start - 10), start) is not None and _WORK_AFTER_RE.match(
        lower, end, end + 40) is not None


def _other_titles(m: PaperMatcher, r: Response) -> list[tuple[str, int, int]]:
    """The other known titles the response offers: ``(title, start, end)`` of the first occurrence of each
    that counts, in gate-group order."""
    text, lower, found = r.text, r.lower, []
    counts = r.counts
    for gate, group in m.other_titles:
        if gate in lower:
            for t in group:
                if t.key in lower:
                    for s, e in t.spans(text, lower):
                        if counts(s, e):
                            found.append((t.phrase, s, e))
                            break
    return found


def _listed_rival(r: Response, spans: list[tuple[int, int]], offered: Callable[[str], bool],
                  kind: str | None = None) -> bool:
    """Whether another candidate (``offered(phrase)``) is offered with the one at ``spans``: by an alternation,
    as another item of the list it is an item of (an item labelled with another field than ``kind`` offers
    none: a record's "First author:" line is no second title), or as another element of a JSON array of
    candidates (:func:`_candidate_array`)."""
    text = r.text
    if _alternated(text, spans, offered):
        return True
    items = listed_items(text) if may_be_listed(text, spans) else []
    if items and _has_closing_key(r.lower):  # a letter's closing ("Best regards,") and the signature below it
        closing = next((s for s, e in items if _CLOSING_RE.match(text, s, e)), -1)  # offer nothing
        if closing >= 0:
            items = [(s, e) for s, e in items if s < closing]
    if items:
        mine = [i for i in items if any(i[0] <= s and e <= i[1] for s, e in spans)]
        if mine and any(item_offers(text, i, offered, kind) for i in items if i not in mine):
            return True
    return "[" in text and _candidate_array(r, spans, offered)


def _alternated(text: str, spans: list[tuple[int, int]], offered: Callable[[str], bool]) -> bool:
    """Whether an alternation right after or before a candidate at ``spans`` offers another one
    (``offered(phrase)``; :func:`verifiers.arxiv.matching.alternative_after`, ``alternative_before``): "A or B",
    "B or A", also inside one field's value ({"first_author": "A or B"})."""
    return any(alternative_after(text, end, offered) or alternative_before(text, start, offered, end)
               for start, end in spans)


#: A JSON array under a key (group 1), its inside (group 2).
_JSON_ARRAY_RE = re.compile(r"[\"']([\w -]{1,40})[\"']\s*:\s*\[([^\[\]]{0,3000})\]")
#: A key naming several candidates (not a list of authors or other fields of one paper).
_CANDIDATE_KEY_RE = re.compile(r"candidate|option|alternative|possib|guess|answers|choices|suggestion|likely",
                               re.IGNORECASE)
_JSON_STRING_RE = re.compile(r"\"((?:[^\"\\\n]|\\.){1,300})\"")
#: A key of one answer ({"first_author": [...]}, "title", "answer"): an array under it holds candidates too.
_ONE_ANSWER_KEY_RE = re.compile(r"(?:title|first[_ -]?author|answer|arxiv[_ -]?id|id|year|name)\Z", re.IGNORECASE)


def _candidate_array(r: Response, spans: list[tuple[int, int]], offered: Callable[[str], bool]) -> bool:
    """Whether one of ``spans`` is an element of a JSON array whose key names candidates ({"candidates": ["A",
    "B"]}, "options", "possible_titles") and another element offers a candidate too: hedged.  An array under
    another key ({"authors": ["A", "B"]}) is one field's value, in its order."""
    lower = r.lower
    if '":' not in lower and "':" not in lower:  # no JSON key at all
        return False
    if not any(k in lower for k in ("candidat", "option", "alternativ", "possib", "guess", "answers", "choices",
                                    "suggest", "likely", "first", "title", "answer", "id", "year", "name")):
        return False
    for array in _JSON_ARRAY_RE.finditer(r.text):
        if _CANDIDATE_KEY_RE.search(array.group(1)) is None and _ONE_ANSWER_KEY_RE.match(array.group(1)) is None:
            continue
        lo, hi = array.span(2)
        if not any(lo <= s and e <= hi for s, e in spans):
            continue
        for element in _JSON_STRING_RE.finditer(r.text, lo, hi):
            es, ee = element.span(1)
            if not any(es <= s and e <= ee for s, e in spans) and offered(element.group(1)):
                return True
    return False


_QUOTES = "\"“”‘’'`*_«»"
#: What may stand between two titles offered side by side: list separators ("A; B", "A | B", "A? B?",
#: "A and B", "A / B"), or a line break with an optional short label ("Option 2:", "Alternative title:");
#: quotes, brackets and spaces around them, and an inline enumerator ("(a) A; (b) B").  A comma separates
#: unquoted titles only after a listing cue.
_TITLE_GAP_RE = re.compile(
    r"[\s\"“”‘’'`*_«»()\[\]]*(?:[;|/&?]|,|\b(?:and|or|nor|vs\.?|versus)\b|\n[ \t]*(?:[^\W\d_][\w ]{0,24}:)?)"
    r"[\s\"“”‘’'`*_«»()\[\]]*(?:(?:and|or|maybe|perhaps|possibly|also)\s+)?(?:\(?[a-h1-9][.)]\s*)?"
    r"[\"“‘'`*_«(\[]*")
_UNQUOTED_GAP_RE = re.compile(r"[^,]*\Z|[\s\S]*\n")  # without a listing cue: no bare comma between unquoted titles
#: A label on the other title's line ("Option B:", "Authors:"): only one naming a title, an option or an
#: alternative offers another title.
_LABEL_AT_RE = re.compile(r"(?:^|(?<=\n))[ \t*_]*([^\W\d_][\w ]{0,24}?)[ \t*_]*:", re.MULTILINE)
_TITLE_LABEL_WORDS = frozenset({"title", "titles", "option", "options", "candidate", "candidates", "alternative",
                                "alternatively", "answer", "choice", "maybe", "possibly", "perhaps", "or"})
_LISTING_CUE_RE = re.compile(r"\b(?:one\s+of|either|candidates?|options?|possibilit(?:y|ies)|possible\s+titles?"
                             r"|alternatives?|choices?)\b", re.IGNORECASE)


#: An attribution, not a title: "by ...", "Authors ...", "... et al.", or a name with a middle initial.
_ATTRIBUTION_STARTS: tuple[str, ...] = ("by ", "authors", "author ", "written by", "from ")
_REFERENCE_NAMES_RE = re.compile(r"[\W_]*(?-i:[A-Z])[^\W\d_'’-]*(?:['’-][^\W\d_]+)*,[ \t]+(?-i:[A-Z])")
_MIDDLE_INITIAL_RE = re.compile(r"\b[A-Z][a-z]+\s+[A-Z]\.\s+[A-Z]")
#: A person's full name: two to four capitalised words or initials, each maybe hyphenated ("Tomas Mikolov", "Jean
#: Pouget-Abadie", "Ming-Wei Chang").
_NAME_WORD = r"(?-i:[A-Z])[^\W\d_'’-]*(?:['’-][^\W\d_]+)*\.?"
_FULL_NAME = rf"{_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{1,3}}"
#: An author line: two or more full names joined by commas, "and" or "&" and nothing else (a title's list
#: elements are single words or hold lower-case words: "Deep, Wide and Narrow Networks").
_AUTHOR_LINE_RE = re.compile(rf"[\W_]*{_FULL_NAME}(?:[ \t]*(?:,|&|\band\b)[ \t]*(?:and[ \t]+)?{_FULL_NAME})+"
                             r"[\W_]*\Z")


def _reads_as_title(phrase: str) -> bool:
    """Whether a list item or alternative reads as a title, not as a name: a title-case run of four words or
    more with a minor word, a colon or a dash inside ("DSPy: Compiling Declarative Language Model Calls into
    ...", "Generative Adversarial Networks for Images")."""
    run = TITLE_RUN_RE.search(phrase)
    if run is None:
        return False
    words = run.group().split()
    return len(words) >= 4 and (any(w.lower() in _MINOR_TITLE_WORDS for w in words) or any(
        c in run.group() for c in ":–—-"))


_MINOR_TITLE_WORDS = frozenset("a an the of in on at to for with via into over under is are as vs its".split())


#: A line of code or data that is no title: a statement of code ("print(answer)", "return title"), a markup
#: element or a JSON key of another field than a title or a candidate ("<confidence>high</confidence>",
#: '"arguments": {"query": ...}'), a letter's closing formula ("Best regards,", "Sincerely,").
_CODE_LINE_RE = re.compile(r"[ \t]*(?:[A-Za-z_][\w.]*\([^()]*\)|return[ \t].*|[A-Za-z_][\w.]*[ \t]*\+?=(?!=).*);?"
                           r"[ \t]*\Z")
_FIELD_AT_START_RE = re.compile(r"[ \t{\[]*(?:<([A-Za-z][\w-]{0,30})>|[\"']?([\w -]{1,30})[\"'][ \t]*:)")
_TITLE_FIELD_RE = re.compile(r"title|answer|candidate|option|alternative|guess|possib|choice|suggest|likely",
                             re.IGNORECASE)
_has_closing_key = contains_any(("regards", "sincerely", "cheers", "thanks", "wishes", "yours", "best"))
_CLOSING_RE = re.compile(r"[ \t]*(?:(?:best|kind|warm|many|with|all[ \t]+the)[ \t]+)?(?:regards|wishes|thanks"
                         r"|sincerely|cheers|best|yours(?:[ \t]+(?:truly|sincerely))?)[ \t]*[,!.]?[ \t]*\Z",
                         re.IGNORECASE)


def _not_prose_field(phrase: str) -> bool:
    """Whether ``phrase`` (a line or an item) is code, another field of a record or a letter's closing, not an
    offer of a title (``_CODE_LINE_RE``, ``_FIELD_AT_START_RE``, ``_CLOSING_RE``).  Why: issue 17 (e), such a
    line beside the title is no second candidate; a record's title or candidate field still is one."""
    if _CODE_LINE_RE.match(phrase) or _CLOSING_RE.match(phrase):
        return True
    field = _FIELD_AT_START_RE.match(phrase)
    return field is not None and _TITLE_FIELD_RE.search(field.group(1) or field.group(2)) is None


def _title_offer(phrase: str) -> bool:
    """Whether a list item or an alternative offers another title: it reads as a title
    (:func:`verifiers.arxiv.matching.title_like`) and is not an attribution ("by Kingma and Ba", "Kingma et
    al.", "Diederik P. Kingma, Jimmy Ba", an author line ``_AUTHOR_LINE_RE``: "Tomas Mikolov, Kai Chen")."""
    if not title_like(phrase) or "://" in phrase or phrase.lstrip().startswith(("www.", "@")):  # a link, a
        return False  # BibTeX entry's key line ("@article{vaswani2017attention,"): no title
    if _not_prose_field(phrase):
        return False
    if phrase.lstrip()[:10].lower().startswith(_ATTRIBUTION_STARTS) or "et al" in phrase or "Et al" in phrase:
        return False
    if _REFERENCE_NAMES_RE.match(phrase) or _AUTHOR_LINE_RE.match(phrase) and not any(  # "Vaswani, Ashish and
            term_word(w.lower()) for w in _WORDS_RE.findall(phrase)):  # Shazeer, Noam", "Tomas Mikolov, Kai Chen":
        return False  # an author list (a noun of a thing, "Representations", makes it a title's)
    return "." not in phrase or _MIDDLE_INITIAL_RE.search(phrase) is None


#: Cheap necessary conditions of a :data:`_TITLE_GAP_RE` gap right after / right before a title (on
#: ``r.lower``): a separator, a joining word, or a line break into a label, after quotes and spaces.
_GAP_AFTER_HINT_RE = re.compile(r"[\s\"“”‘’'`*_«»()\[\]]*(?:[;|/&?,]|(?:and|or|nor|vs|versus)\b"
                                r"|\n[ \t*_]*[^\W\d_][\w ]{0,24}:)")
_GAP_BEFORE_HINT_RE = re.compile(r"(?:[;|/&?,:]|\b(?:and|or|nor|vs\.?|versus|maybe|perhaps|possibly|also))"
                                 r"[\s\"“”‘’'`*_«»()\[\]]*\Z")


#: A label or key naming one candidate among several ("Best guess:", "Second guess:", "Option 2:", "Option A.",
#: "Option 2)", "Alternative title:", {"alternative": ...}, "Backup -"), at a line's or a sentence's start or as a
#: JSON key; group 1 the label.  A full stop or a bracket ends a label only after its index letter or number
#: ("Option A. X"; "Alternative. X" is no label).  Its value runs to the closing quote (a quoted value) or to the
#: sentence's or line's end.
_CANDIDATE_LABEL_RE = re.compile(
    r"(?:^|(?<=[\n.;!?{,]))[ \t*_#>-]*[\"']?((?:[\w-]+[ \t]+){0,3}?(?:guess|option|alternative|candidate"
    r"|choice|possibilit(?:y|ie)|backup|runner[ -]up|one[ \t]+of|either[ \t]+of)(s?)"
    r"(?:[ \t_-]*(?:[0-9]{1,2}|[a-h]|title|answer))?)[\"']?[ \t*_]*"
    r"(?:[:=：–—-]|(?:(?<=[ \t_-][0-9a-hA-H])|(?<=[ \t_-][0-9]{2}))[.)])[ \t*_]*", re.IGNORECASE)
#: Between the items of a label naming several candidates ("Options: A; B", "One of: A, B", "A or B").
_ITEM_SEPARATOR_RE = re.compile(r"[;,][ \t]+|[ \t]+or[ \t]+", re.IGNORECASE)
_KEYS_OF_CANDIDATES: tuple[str, ...] = ("guess", "option", "alternative", "candidate", "choice", "possibilit",
                                        "backup", "runner", "one of", "either of")
_has_candidate_key = contains_any(_KEYS_OF_CANDIDATES)
_VALUE_END_RE = re.compile(r"[\n;]|[.!?](?=\s|\Z)|\Z")
#: The first words of ``_CANDIDATE_LABEL_RE``'s label words: each of its matches holds one (on ASCII text).
_CANDIDATE_LABEL_WORDS: tuple[str, ...] = ("guess", "option", "alternative", "candidate", "choice", "possibilit",
                                           "backup", "runner", "one", "either")
_CANDIDATE_LABEL_KEYS = KeyTable(_CANDIDATE_LABEL_WORDS)
#: What a ``_CANDIDATE_LABEL_RE`` match starts right after (besides the text's start), and never holds.
_LABEL_OPENERS = "\n.;!?{,"


def _candidate_labels(r: Response) -> list[re.Match[str]]:
    """What ``_CANDIDATE_LABEL_RE.finditer(r.text)`` finds.  On ASCII text it is tried only where a match can
    start: after the last opener (``_LABEL_OPENERS``) before a label word (``_CANDIDATE_LABEL_WORDS``), since
    nothing between a match's start and its label word is an opener; a whole-text search tries the lookbehind
    and the label's words at every character (about 600 us on a long answer)."""
    text = r.text
    if not r.ascii:  # case-insensitive matching of other scripts ("ſ" is "s"): the whole-text search
        return list(_CANDIDATE_LABEL_RE.finditer(text))
    starts = set()
    for at, _ in r.hits(_CANDIDATE_LABEL_KEYS)[0].spans:  # one pass for all the words, not a find per word
        lo = at - 200 if at > 200 else 0
        start = max([text.rfind(c, lo, at) for c in _LABEL_OPENERS])
        if start < 0 and lo > 0:  # a long run without an opener: look further back
            start = max([text.rfind(c, 0, lo) for c in _LABEL_OPENERS])
        starts.add(start + 1)
    return list(matches_at(_CANDIDATE_LABEL_RE, text, sorted(starts), 0, len(text)))


def _labelled_rival(r: Response, committed: list[tuple[int, int]], offered: Callable[[str], bool]) -> bool:
    """The one rule of labelled candidates: whether a label or key naming a candidate (``_CANDIDATE_LABEL_RE``:
    "Best guess: B", "Second guess: B", "Option 2: B", "Option B. B", "Alternative: B", {"title": "A",
    "alternative": "B"}, {"alternatives": ["B"]}; a plural label or "one of" lists several: "One of: A, B") holds
    a value that offers another title (``offered``), overlaps none of the title's ``committed`` spans and counts
    (not refused or retracted).  The labels call their values candidates, so the right title offered with another
    one hedges, as the README's hedging rule says, whichever comes first ("Option A: X\nOption B: Y"), whether the
    other title is a known paper's or a near miss of this one's, and whether or not the right title is labelled."""
    lower = r.lower
    if not _has_candidate_key(lower):
        return False
    text = r.text
    for label in _candidate_labels(r):
        start = label.end()
        if text.startswith("[", start):  # {"alternatives": ["B", "C"]}: each element is a value
            close = text.find("]", start, start + 3000)
            for element in _JSON_STRING_RE.finditer(text, start, close if close > 0 else start):
                es, ee = element.span(1)
                if not any(es <= cs < ee for cs, _ in committed) and offered(element.group(1)) and r.counts(es, ee):
                    return True
            continue
        if start < len(text) and text[start] in "\"“'‘":
            close = {"\"": "\"", "“": "”", "'": "'", "‘": "’"}[text[start]]
            end = text.find(close, start + 1, start + 400)
            start += 1
        else:
            end = _VALUE_END_RE.search(text, start, start + 400)
            end = end.start() if end is not None else min(len(text), start + 400)
        if end <= start:
            continue
        several = label.group(2) or label.group(1).lower().endswith("of")  # "Options:", "One of:": a list
        cuts = [start] + [c for m in _ITEM_SEPARATOR_RE.finditer(text, start, end) for c in m.span()] + [end] \
            if several else [start, end]
        for lo, hi in zip(cuts[::2], cuts[1::2], strict=True):
            if hi > lo and not any(lo < ce and cs < hi for cs, ce in committed) and offered(text[lo:hi]) and (
                    r.counts(lo, hi)):
                return True
    return False


def _may_be_side_by_side(r: Response, committed: list[tuple[int, int]]) -> bool:
    """Whether a gap of another title may touch one of the ``committed`` spans (see :func:`_side_by_side`):
    most answers give the title with none, and then the title-like spans need not be read."""
    lower = r.lower
    for start, end in committed:
        if _GAP_AFTER_HINT_RE.match(lower, end, end + 40) or _GAP_BEFORE_HINT_RE.search(
                lower, max(0, start - 40), start):
            return True
    return False


def _side_by_side(r: Response, committed: list[tuple[int, int]], spans: list[tuple[int, int]]) -> bool:
    """Whether another title-like span (of ``spans``, none overlapping the title's own ``committed`` spans) is
    offered right next to the title, joined only by what :data:`_TITLE_GAP_RE` allows: several titles listed
    together are hedging ("A", "B"; "A | B"; "Possible titles: A; B")."""
    text = r.text
    pieces = []
    for s, e in spans:  # a title-case run may go on across a line break: one line is one offer
        while (cut := text.find("\n", s, e)) >= 0:
            if title_like(text[s:cut]):
                pieces.append((s, cut))
            s = cut + 1
        pieces.append((s, e))
    for start, end in committed:
        line_start = text.rfind("\n", 0, start) + 1
        cue = _LISTING_CUE_RE.search(text, line_start, start) is not None
        for s, e in pieces:
            if any(s < ce and cs < e for cs, ce in committed):
                continue  # the title itself (any occurrence), or a span holding it
            lo, hi = (end, s) if s >= end else (e, start)
            if hi - lo > 60 or _TITLE_GAP_RE.fullmatch(text, lo, hi) is None:
                continue
            if "|" in text[lo:hi] and column_field(text, s) not in (None, "title"):
                continue  # a table's cell under another field's column ("| Title | First author |")
            label = _LABEL_AT_RE.search(text, lo, s + 40)
            if label is not None and label.start() > s:
                label = None
            if label is not None and not _TITLE_LABEL_WORDS & set(label.group(1).lower().split()):
                continue  # "Authors: Ian Goodfellow" is not another title
            if label is None and text.find("\n", lo, hi) >= 0:
                continue  # a line after the title ("Diederik P. Kingma, Jimmy Ba") is not an offer by itself
            quoted = s > 0 and text[s - 1] in _QUOTES
            if quoted or cue or _UNQUOTED_GAP_RE.match(text, lo, hi):
                return True
    return False


#: "and" between two titles, quotes and emphasis skipped.
_AND_THEN_RE = re.compile(r"[ \t]+and[ \t]+[\"“‘'`*_]*")


def grade_title(m: PaperMatcher, r: Response) -> Verdict:
    """See the module docstring (title): exact up to normalisation, not extended; hedged with other titles;
    partial credit below hedged; well formed when a title is offered."""
    title, text = m.paper.title, r.text
    committed, extended, dropped = [], 0, []
    joined: list[tuple[int, int]] = []  # extended by "and" then a capitalised word only ("A and Adam: ...")
    own = m.title.spans(text, r.lower) or spans_dehyphenated(m.title, text, r.lower)
    for start, end in own[:MAX_OCCURRENCES]:
        if not r.counts(start, end):
            dropped.append((start, end))
        elif is_extended(text, start, end):
            extended += 1
            if text.startswith(" and ", end):
                joined.append((start, end))
        else:
            committed.append((start, end))
    other_spans = _other_titles(m, r)
    if joined and other_spans:  # "A and B" where B opens another known title: two titles, not one longer one
        after_and = {s for _, s, _ in other_spans}
        for start, end in joined:
            joiner = _AND_THEN_RE.match(text, end)
            if joiner is not None and joiner.end() in after_and:
                extended -= 1
                committed.append((start, end))
    # Read at most once, only when a rule needs it (closures: functools.cache costs ~15,000 instructions to build)
    spans_read: list[tuple[int, int]] | None = None
    starts_read: list[int] | None = None

    def all_spans() -> list[tuple[int, int]]:
        nonlocal spans_read
        if spans_read is None:
            spans_read = title_spans(r)
        return spans_read

    def later() -> list[int]:
        """Starts of every title candidate (title-like spans, the title's own, other known titles)."""
        nonlocal starts_read
        if starts_read is None:
            starts_read = sorted({s for s, _ in all_spans()} | {s for s, _ in committed}
                                 | {s for _, s, _ in other_spans})
        return starts_read

    # "A. Actually, it's B": A is superseded when another title follows
    kept = [(s, e) for s, e in committed if not superseded(r, e, later)]
    dropped += [span for span in committed if span not in kept]
    committed = kept
    other_spans = [(t, s, e) for t, s, e in other_spans if not superseded(r, e, later)]
    if committed and other_spans:  # "A - it was later followed by B": B is another work, no rival
        other_spans = [(t, s, e) for t, s, e in other_spans if not _other_work_before(r, s, m.last_name.lower())]
    others = [t for t, _, _ in other_spans]
    if committed:
        rivals = others + (["a longer title containing it"] if extended else [])
        if rivals or _listed_rival(r, committed, _title_offer, "title") or _labelled_rival(
                r, committed, _title_offer) or (_may_be_side_by_side(r, committed) and
                _side_by_side(r, committed, [(s, e) for s, e in all_spans() if not superseded(r, e, later)])):
            shown = listing(rivals) if rivals else "another title"
            return HEDGED_CREDIT, 1.0, (f"expected title '{title}'; the right title was given with others "
                                        f"({shown}); commit to one title")
        return 1.0, 1.0, f"correct: expected title '{title}' found in the response"
    if extended or others:
        said = listing(others) if others else "a longer title that contains it (another paper)"
        return 0.0, 1.0, f"expected title '{title}', response gave a different paper's title: {said}"
    lower = r.lower
    # Without a content word of the title anywhere no span earns partial credit: the first span found tells all.
    spans = all_spans() if any(key in lower for key, _ in m.title_words) else title_spans(r, 1)
    fragment = not spans  # title_spans left out what does not count; a one-line answer may still be a
    if fragment:          # sentence-case fragment of the title
        spans = _one_line(r) if any(key in lower for key, _ in m.title_words) else []
        if not spans:
            return _no_title(title, r)
    total = len(m.title_words)
    if dropped:  # the title's own retracted or superseded occurrences earn no partial credit either
        text = blank(text, dropped)
        lower = text.lower()
    own_words, own_forms = _title_forms(title)
    scored = sorted((_partial_share(m, own_words, own_forms, text, lower, _after_title_lead(text, s, e), e) + (e,)
                     for s, e in spans), key=lambda row: -row[0])
    # the best span that a restatement does not supersede ("A. Actually, it's B" grades B); usually the first
    best = next((row for row in scored if not superseded(r, row[-1], later)), None)
    if best is None:
        return no_answer(f"title '{title}'", "a title", r)
    share, hits, extra, _ = best
    if fragment and (extra or share < PARTIAL_TITLE_MIN_SHARE):  # a sentence, not a fragment of the title
        return _no_title(title, r)
    if share >= PARTIAL_TITLE_MIN_SHARE and not extra:
        credit = round(PARTIAL_TITLE_WEIGHT * share, 6)
        return credit, 1.0, (f"expected title '{title}'; response had {hits}/{total} of its content words in "
                             f"order (credit {credit:.2f}), not the exact title: {quote(r.raw)}")
    if extra and share >= PARTIAL_TITLE_MIN_SHARE:
        return 0.0, 1.0, (f"expected title '{title}', response gave another title ({extra} content "
                          f"word{'s' if extra != 1 else ''} the title lacks): {quote(r.raw)}")
    if _unquoted_remark(r) or _place_remark(r, spans) or offers_nothing(r.text):  # "Somebody at Google wrote it,
        return no_answer(f"title '{title}'", "a title", r)  # I believe", "HTTP 429 Too Many Requests": no title
    if not any(_offers_title(r, s, e) for s, e in spans) and (spans is spans_read or not any(
            _offers_title(r, s, e) for s, e in all_spans()[1:])):  # the first span only was read: read them all
        return no_answer(f"title '{title}'", "a title", r)  # "No result.", "Ho ho ho", "Jane Doe et al."
    return 0.0, 1.0, f"expected title '{title}', response said {quote(r.raw)}"


_ET_AL_RE = re.compile(r"[ \t,]*et\.?[ \t]+al\b")


#: After a run ending in a capital letter: the initial's full stop and the surname ("Ian J" + ". Goodfellow").
_INITIAL_THEN_NAME_RE = re.compile(r"\.[ \t]+(?-i:[A-Z])[^\W\d_]+(?:-[^\W\d_]+)?")


def _offers_title(r: Response, start: int, end: int) -> bool:
    """Whether the span ``text[start:end]``, which holds none of the title's words, offers some title: it reads as
    one (:func:`verifiers.arxiv.matching.title_like`) and, unless it is a title-case run of four words or more
    (:func:`_reads_as_title`), it is no attribution (:func:`_title_offer`: "Jane Doe et al.", "Mikolov, T."), it
    is not laughter (one short word
    repeated, :func:`verifiers.arxiv.matching.interjection`: "Ho ho ho") and it holds no refusal phrase
    (``REFUSAL_RE``: "No result.", "[retrieved 03.04.2015] No result.").  Why: issue 17 class 1, an answer is
    well formed only when it offers a title; such text offers none, for every kind, so it is evasive (0.00)."""
    text = r.text
    if end - start >= 3 and text[end - 1].isupper() and text[end - 2] == " " and text.startswith(".", end):
        surname = _INITIAL_THEN_NAME_RE.match(text, end)
        if surname is not None:  # "Ian J. Goodfellow et al.": the run stopped at the middle initial's stop
            end = surname.end()
    phrase = text[start:end]
    if (not _title_offer(phrase) or _ET_AL_RE.match(text, end)) and not (title_like(phrase)
                                                                        and _reads_as_title(phrase)):
        return False  # a name, an author list, a name before "et al.": an attribution, no title
    first = _LINE_WORD_RE.search(phrase)
    if first is not None and interjection(text, start + first.start(), start + first.end()):
        return False
    if not r.may_refuse():
        return True
    return (_REFUSAL_TWIN.search(r.lower, start, end) if r.ascii else REFUSAL_RE.search(text, start, end)) is None


#: ``REFUSAL_RE`` for lower-cased ASCII text (see :func:`verifiers.arxiv.matching.lower_case_twin`).
_REFUSAL_TWIN = lower_case_twin(REFUSAL_RE)

def _unquoted_remark(r: Response) -> bool:
    """Whether the response is one line of prose (:func:`verifiers.arxiv.matching.remark_line`) without quotes
    and without two capitalised words in a row after its first word: its capitalised words are a sentence's,
    not another title ("Somebody at Google wrote it"; "It's Going Deeper with Convolutions" and a quoted title
    in a remark still offer one)."""
    stripped = r.text.strip()
    if "\n" in stripped or any(q in stripped for q in "\"“”‘«»「`*") or not remark_line(stripped):
        return False
    if "'" in stripped and _SINGLE_QUOTED_RE.search(stripped):  # "... but it's 'A'.": a quoted title
        return False
    caps = [w[0].isupper() for w in _LINE_WORD_RE.findall(stripped)[1:]]
    return not any(a and b for a, b in zip(caps, caps[1:], strict=False))


#: Before a place's or an organisation's name in a sentence: a place preposition, perhaps "the" ("at Google Brain",
#: "in Mountain View", "from the University of Toronto").
_PLACE_BEFORE_RE = re.compile(r"(?<![^\W_])(?:at|in|from|near|based\s+in)[ \t]+(?:the[ \t]+)?\Z", re.IGNORECASE)


def _place_remark(r: Response, spans: list[tuple[int, int]]) -> bool:
    """Whether the response is one unquoted line of prose (:func:`verifiers.arxiv.matching.prose_line`) whose
    title-case runs (``spans``) all name places or organisations, each right after a place preposition
    (``_PLACE_BEFORE_RE``): "I think the work was done at Google Brain in Mountain View, but I'm not sure." says
    where the work was done and offers no title (evasive, 0.00, as the README's refusal rule says of text
    offering no title), whereas "It's Going Deeper with Convolutions" offers one."""
    stripped = r.text.strip()
    if not spans or "\n" in stripped or any(q in stripped for q in "\"“”‘«»「`*") or not prose_line(stripped):
        return False
    text = r.text
    return all(_PLACE_BEFORE_RE.search(text, max(0, s - 20), s) is not None for s, _ in spans)


#: A phrase in straight single quotes (an apostrophe has a letter on both sides: "can't" opens none).
_SINGLE_QUOTED_RE = re.compile(r"(?<![^\W_])'[^'\n]{3,}'(?![^\W_])")
#: Words that make a line a sentence addressed to someone, not a title: first and second person.
_PERSON_WORDS = frozenset("i i'm i've i'd i'll me my mine we we're we've us our you you're your yours".split())
#: Words that open a sentence about the paper, not a title ("It was published in 2014", "There is no such paper").
_LINE_OPENERS = frozenset("it it's its this that these those he she they there here his her their published submitted "
                          "released presented introduced written authored appeared proposed posted accepted".split())
_LINE_WORD_RE = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def _title_shaped_line(r: Response) -> tuple[int, int] | None:
    """The span of a response that is one line shaped as a title, in any case ("Going deeper with convolutions",
    "Toolformer: language models can teach themselves to use tools"), or ``None``: 2 to 20 words, a capital or a
    digit first, no "?" or "!" at its end, no sentence opener first (``_LINE_OPENERS``: "It", "This", "There"),
    no first- or second-person word, and at least two content words, no fewer than its filler, question and
    lookup words (``DISCOURSE_WORDS``: "Great question, let me check" is no title); not refused, negated or
    echoed (:meth:`Response.counts`).  The line is read without its wrappers (:func:`_answer_line`)."""
    text = r.text
    found = _answer_line(r)
    if found is None:
        return None
    stripped = text[found[0]:found[1]]
    if not stripped or stripped[-1] in "?!" or not (stripped[0].isupper() or stripped[0].isdigit()):
        return None
    words = [w.lower() for w in _LINE_WORD_RE.findall(stripped)]
    if not 2 <= len(words) <= 20 or words[0] in _LINE_OPENERS or not _PERSON_WORDS.isdisjoint(words):
        return None
    if remark_line(stripped):  # a remark, a contraction, a clause after a comma, another language
        return None
    content = sum(len(w) > 1 and w not in NON_CONTENT_WORDS and not w.isdigit() for w in words)
    if content < 2 or content < sum(w in DISCOURSE_WORDS for w in words):
        return None
    if "." in stripped and _DECIMALS_RE.search(stripped):  # "Rubric: correct 1.00, hedged 0.75": values, no title
        return None
    start, end, cued = found
    if not r.counts(start, end) or r.may_refuse() and r.refuses() and not cued:
        return None
    return start, end


#: Two decimal numbers in a line: a list of values (a rubric's or a table's scores), which titles do not hold.
_DECIMALS_RE = re.compile(r"(?<![\w.])[0-9]+\.[0-9]+(?![\w.]).*?(?<![\w.])[0-9]+\.[0-9]+(?![\w.])")


#: A wrapper line around an answer: a code fence (with its language tag), or an XML tag alone on its line.
_WRAPPER_LINE_RE = re.compile(r"[ \t]*(?:(?:```|~~~)[\w+-]{0,20}|</?[A-Za-z][\w-]{0,20}>)[ \t]*\Z")
#: Tags and quote marks at an answer line's ends ("<answer>A</answer>", "> A", "「A」", "«A»").
_ANSWER_EDGE = " \t\"“”'‘’`*_«»「」『』>"
_TAG_AT_START_RE = re.compile(r"(?:[ \t>]*<[A-Za-z][\w-]{0,20}>)+")
_TAG_AT_END_RE = re.compile(r"(?:</[A-Za-z][\w-]{0,20}>[ \t]*)+\Z")
#: A label of the answer at a line's start ("answer: A", "Title - A").
_ANSWER_LABEL_RE = re.compile(r"[ \t*_>]*(?:final[ \t]+)?(?:answer|title|paper[ \t]+title)[ \t*_]*[:：–—-][ \t]*",
                              re.IGNORECASE)
#: A corner-bracket quote (Japanese) holding the answer inside a sentence of another language.
_CORNER_QUOTE_RE = re.compile(r"[「『]([^」』\n]{2,300})[」』]")
#: The last answer cue after a refusal clause ("I can't browse arXiv, but it's A.", "... but maybe A").
_CUE_IN_LINE_RE = re.compile(r"(?:\bbut|,)[ \t]+(?:(?:it|the\s+title)(?:['’]s|\s+is|\s+was)|maybe|perhaps|probably"
                             r"|i\s+think(?:\s+it['’]s)?|i\s+believe(?:\s+it['’]s)?)[ \t]+", re.IGNORECASE)


def _answer_line(r: Response) -> tuple[int, int, bool] | None:
    """The span of the one line of a response that may be its answer, wrappers aside, or ``None`` when it has
    more than one such line: code fence lines and tag lines are dropped, a blockquote mark, tags and quote marks
    at the line's ends stripped ("```\nA\n```", "> A", "<answer>A</answer>", "**A**"), a corner-bracket quote
    taken from a sentence of another language ("論文のタイトルは「A」です。"), and, after a refusal, the text after
    the last answer cue ("I can't browse arXiv, but it's A."), its final stop dropped.  The grade of a line does
    not depend on what wraps it.  ``(start, end, cued)``: ``cued`` when a refusal's answer cue was found."""
    text, line = r.text, None
    at, size = 0, len(text)
    while at <= size:  # line by line, not a split of the whole text: a long answer's second line ends the search
        hi = text.find("\n", at)
        lo, hi = at, size if hi < 0 else hi
        raw = text[lo:hi]
        at = hi + 1
        if not raw.strip() or _WRAPPER_LINE_RE.match(raw):
            continue
        if line is not None:
            return None
        line = (lo, hi)
    if line is None:
        return None
    lo, hi = line
    tag = _TAG_AT_START_RE.match(text, lo, hi)
    lo = tag.end() if tag else lo
    tag = _TAG_AT_END_RE.search(text, lo, hi)
    hi = tag.start() if tag else hi
    label = _ANSWER_LABEL_RE.match(text, lo, hi)  # "<answer>A</answer>" reads as "answer: A"
    lo = label.end() if label else lo
    corner = _CORNER_QUOTE_RE.search(text, lo, hi)
    cued = False
    if corner is not None:
        lo, hi = corner.span(1)
    elif r.may_refuse() and r.refuses():
        cues = list(_CUE_IN_LINE_RE.finditer(text, lo, hi))
        if cues:
            lo, cued = cues[-1].end(), True
            while hi > lo and text[hi - 1] in _ANSWER_EDGE + ".":
                hi -= 1
    while lo < hi and text[lo] in _ANSWER_EDGE:
        lo += 1
    while hi > lo and text[hi - 1] in _ANSWER_EDGE:
        hi -= 1
    return (lo, hi, cued) if lo < hi else None


def _no_title(title: str, r: Response) -> Verdict:
    """The verdict on a response without the title or a fragment of it: a title-shaped line
    (:func:`_title_shaped_line`) is another title, confidently wrong; anything else offers no title (evasive)."""
    if _title_shaped_line(r) is not None and not offers_nothing(r.text):
        return 0.0, 1.0, f"expected title '{title}', response gave another title: {quote(r.raw)}"
    return no_answer(f"title '{title}'", "a title", r)


def _one_line(r: Response) -> list[tuple[int, int]]:
    """The span of a response that is one short line (at most 20 words), whatever its words: read for partial
    credit only, when it holds a content word of the title ("Training language models to follow
    instructions", whose words :func:`verifiers.arxiv.matching.title_spans` takes for filler)."""
    stripped = r.text.strip()
    if not stripped or "\n" in stripped or len(stripped.split()) > 20:
        return []
    start = r.text.index(stripped)
    return [(start, start + len(stripped))] if r.counts(start, start + len(stripped)) else []


#: Words that turn a title-like span into a different claim when the title itself has none of them.
_NEGATORS = frozenset({"not", "no", "never", "without", "non", "isn't", "aren't", "don't", "doesn't"})


def _word_form(word: str) -> str:
    """A content word with a plural "s" and the British "-isation" spelling folded ("Representation" and
    "Representations", "optimisation" and "optimization" are one word when counting words the title lacks)."""
    word = word.replace("isation", "ization")
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


#: Per title, its content words and their forms (:func:`_title_forms`): a pure function of the title, which a
#: grade would otherwise recompute (a tenth of a wrong short title's grade).  Bounded by the known papers' titles.
_TITLE_FORMS: dict[str, tuple[frozenset[str], frozenset[str]]] = {}


def _title_forms(title: str) -> tuple[frozenset[str], frozenset[str]]:
    """``(words, forms)`` of ``title``: its content words (:func:`verifiers.arxiv.matching.content_words`) and
    those words' forms (:func:`_word_form`), remembered per title."""
    found = _TITLE_FORMS.get(title)
    if found is None:
        words = frozenset(content_words(title))
        found = _TITLE_FORMS[title] = (words, frozenset(_word_form(w) for w in words))
    return found


#: A label or a lead-in naming the title at the start of a span ("Title:", "**Answer:**", "The title is",
#: "The exact title is:"): it introduces the words after it, which alone are scored for partial credit.
_TITLE_LEAD_RE = re.compile(r"[ \t*_>\"'“‘]*(?:(?:the|its)[ \t]+)?(?:(?:final|exact|full|paper(?:['’]s)?)[ \t]+)*"
                            r"(?:answer|title)[ \t*_]*(?:[:：–—-]|[ \t]+(?:is|was)\b[ \t]*:?)[ \t*_]*", re.IGNORECASE)


def _after_title_lead(text: str, start: int, end: int) -> int:
    """Where the words of the span ``text[start:end]`` begin after a label or lead-in naming the title
    (``_TITLE_LEAD_RE``: "Title: Networks Generative Adversarial" scores the reordered words, not "Title")."""
    lead = _TITLE_LEAD_RE.match(text, start, end)
    return start if lead is None or lead.end() >= end else lead.end()


def _partial_share(m: PaperMatcher, own_words: frozenset[str], own_forms: frozenset[str], text: str, lower: str,
                   start: int, end: int) -> tuple[float, int, int]:
    """``(share, hits, extra)`` of the span ``text[start:end]`` for partial title credit: ``hits`` is the
    longest run of the title's content words found in the span in the title's order (so scrambled words count
    once per run: "Need You All Is Attention" has 1 of 2), ``extra`` the span's content words the title lacks
    (a plural or a British spelling of the title's own word is not one: :func:`_word_form`; ``own_forms`` are
    the title's words in that form),
    and ``share`` is hits over the title's and the span's content words together (so the words of another
    paper's title dilute it).  A span with a negator the title lacks ("Attention Is Not All You Need") has
    share 0."""
    span_words = frozenset(content_words(text[start:end]))
    if any(w in _NEGATORS for w in words_of(text[start:end])) and not own_words & _NEGATORS:
        return 0.0, 0, 0
    positions = []
    for key, pattern in m.title_words:
        if key in lower[start:end]:
            found = pattern.search(text, start, end)
            if found is not None:
                positions.append(found.start())
    tails: list[int] = []  # longest increasing subsequence of the positions (patience sorting)
    for position in positions:
        at = bisect.bisect_left(tails, position)
        tails[at:at + 1] = [position]
    hits, extra = len(tails), len({_word_form(w) for w in span_words} - own_forms)
    union = len(own_words) + extra
    return (hits / union if union else 0.0), hits, extra


#: Emphasis and quotes that may open a full name ("**Tomas Mikolov**", "\"Ian Goodfellow\"").
_NAME_MARKUP = "*_\"'“‘"


def _name_start(text: str, start: int) -> int:
    """Where the full name ending in the surname at ``start`` begins: up to three capitalised given names or
    initials right before it ("Diederik P. Kingma"), also inside emphasis or quotes ("**Diederik P. Kingma**":
    the name starts after the markup), so a negation of the full name reaches the surname and its given names
    are read as its own, not as another name."""
    lo = max(0, start - 40)
    lo = max(lo, text.rfind("\n", lo, start) + 1)  # a name does not continue across a line break
    head = text[lo:start]
    if not head or head[-1] not in " \t":
        return start
    words = head.split()
    taken = lead = 0
    for word in reversed(words[-3:]):
        bare = word.lstrip(_NAME_MARKUP)
        core = bare.rstrip(".")
        if not (core[:1].isupper() and core.replace("-", "").isalpha()) or len(core) > 1 and (
                core.lower() in NON_NAME_WORDS or core != bare):  # one capital is an initial ("Lakshya A");
            if taken == 1 and core.lower() in _ENUMERATOR_WORDS and len(words[-1].strip(_NAME_MARKUP + ".)")) == 1:
                return start  # "Option B. Hinton": the letter is the option's index, not an initial
            break  # a longer word with a full stop ends the sentence before the name ("... Models. A. Dosovitskiy")
        taken += 1
        if bare != word:  # emphasis or a quote opens the name ("**Tomas Mikolov**"): it starts here
            lead = len(word) - len(bare)
            break
    if not taken:
        return start
    return text.rfind(words[-taken], lo, start) + lead


_NEXT_WORD_RE = re.compile(r"[\s\"“‘'`*_(\[]*([^\W\d_][\w'’.-]*)")
#: Words that an index letter follows as a label ("Option B. Hinton", "Candidate C. Vaswani"): that letter is no
#: initial of the name after it.
_ENUMERATOR_WORDS = frozenset("option candidate choice alternative possibility answer guess".split())


#: A name right after an initial: "Vaswani, N. Shazeer" lists "N. Shazeer" next, so "N." is not Vaswani's.
_NEXT_NAME_RE = re.compile(r"[ \t]+(?-i:[A-Z])(?:[^\W\d_]+|\.[ \t]*(?-i:[A-Z]))")
#: An initial after the surname, in the "Surname, I." citation form.
_INITIAL_AFTER_RE = re.compile(r",[ \t]*(?-i:([A-Z]))\.")
#: The element of a list of names right before a name: up to four capitalised words or initials, then a comma,
#: "&" or "and" (group 1: the element; a semicolon separates clauses: "Not X; Y is first").
_LIST_TAIL_RE = re.compile(
    r"((?-i:[A-Z])[^\W_]*(?:-[^\W_]+)*\.?(?:,?[ \t]+(?-i:[A-Z])[^\W_]*(?:-[^\W_]+)*\.?){0,3})"
    r"(?:[ \t]*(?:,|&|\band\b))+[ \t]*\Z"
    r"|((?-i:[A-Z])[^\W_]+(?:-[^\W_]+)*[ \t]+(?-i:[A-Z]{1,3})\.?)[ \t]*;[ \t]*\Z")  # Vancouver: "Shazeer N; X"


#: Words after which a list of authors may start ("by X, Y", "the authors are X and Y").
_LIST_OPENERS = (" and", " by", " are", " were", " is", " was", " include", " includes")


def _listed_after_name(text: str, start: int, exclude: frozenset[str]) -> bool:
    """Whether the name starting at ``start`` follows another person's name in a list ("Noam Shazeer, Ashish
    Vaswani", "Shazeer, N., & Vaswani, A."): a list of authors names the first author first, so the later name
    is not offered as the first author.  The element before must itself be a name (:func:`name_tokens`), not a
    title or an initial alone, and start the list (after a separator, a line break or ``_LIST_OPENERS``)."""
    tail = _LIST_TAIL_RE.search(text, max(0, start - 60), start)
    if tail is None:
        return False
    group = 1 if tail.group(1) is not None else 2
    before = text[:tail.start(group)].rstrip(" \t*_")
    if before and before[-1] not in ",;:&([\n" and not before.lower().endswith(_LIST_OPENERS):
        return False  # the element goes on a title or a sentence before it ("... of Large Language Models, X")
    element = tail.group(group)
    if element.split(None, 1)[0].lower() in ("not", "never", "no"):
        return False  # "Not Peiyi Wang, Zhihong Shao": a negated name is no first author listed before
    return bool(name_tokens(element, exclude, 1)) or _WORD_SURNAME_ELEMENT_RE.fullmatch(element) is not None


#: The known first authors' surnames that are also English words ("He").
_LONE_WORD_SURNAMES = tuple(sorted(p.last_name for p in PAPERS if p.last_name.lower() in NON_CONTENT_WORDS))
#: An element of a list of authors naming a known surname that is also an English word with its initials or given
#: name ("He Q", "He, K.", "Kaiming He"): a person, not the pronoun (:func:`name_tokens` reads "He" as the pronoun).
_WORD_SURNAME_ELEMENT_RE = re.compile(
    r"(?:(?-i:[A-Z])[^\W\d_]*\.?[ \t]+){0,2}(?:" + "|".join(map(re.escape, _LONE_WORD_SURNAMES)) + r")"
    r"(?:,?[ \t]+(?-i:[A-Z]{1,3})\.?)*")


#: A list whose last item follows "or", after an earlier item ("A, B, or C", "A, B or C"): a comma, up to 80
#: characters of the list (no clause's end), then the "or" and a capital.
_OR_LIST_AFTER_RE = re.compile(r"[*_\"'”’]*,[^;:!?\n()]{0,80}?[ \t]or[ \t]+[*_\"'“‘]*(?-i:[A-Z])")
#: ... or its last item: a comma before it in the list, then "or" right before it ("A, B, or C").
_OR_LIST_BEFORE_RE = re.compile(r",[^;:!?\n()]{0,80}?[ \t]or[ \t]+[*_\"'“‘]*\Z")


def _or_listed(text: str, start: int, end: int) -> bool:
    """Whether the name at ``text[start:end]`` (a whole citation: "Mikolov, T.") is an item of a list joined by
    "or" ("Dean, Mikolov, or Corrado", "Mikolov, Dean or Corrado"): the list offers alternatives, so its order is
    no authors' order and its other names are rivals (the "or" makes it so, as it does for two names; Chicago
    Manual of Style 6.19 uses the same series form for "and" and "or")."""
    return _OR_LIST_AFTER_RE.match(text, end) is not None or _OR_LIST_BEFORE_RE.search(
        text, max(0, start - 90), start) is not None


def _given_names_fit(given: str, first_author: str, upper: bool = False) -> bool:
    """Whether the name written before the surname (``given``: "Ian J. ", "Geoffrey E. ", "X. ", "Pavel ") may
    be the first author's (``first_author`` as arXiv lists it).  When the word right before the surname is an
    initial, some word of ``given`` starts with one of the author's initials (so "I. J. Goodfellow",
    "J. Goodfellow" and "Geoffrey E. Hinton", where arXiv lists no middle initial, fit; "X. Vaswani" names
    another person, as "X. He" does).  A whole given name is compared as a name (:func:`_given_word_fits`):
    "Pavel Mikolov", "Noam Brown", "Xiaodong He", "Jerry Wei" name other people.  One rule for every author."""
    words = given.split()
    if not words:
        return True
    if len(words[-1].rstrip(".")) != 1:
        return _given_word_fits(words, first_author, upper)
    if words[-1][0].casefold() == first_author[:1].casefold():
        return True  # "... A Survey L. Ouyang": the name starts at the author's first initial
    initials = {word[0].casefold() for word in first_author.split()[:-1]}
    return any(word[0].casefold() in initials for word in words) and _given_word_fits(words, first_author, upper)


#: The first authors' surnames of the known papers: such a word before a surname is another surname, not a
#: given name.
_KNOWN_SURNAMES = frozenset(p.last_name.casefold() for p in PAPERS)
#: The words of the known papers' titles: such a word before a surname ends a title, it is no given name.
_KNOWN_TITLE_WORDS = frozenset(w.casefold() for p in PAPERS for w in re.findall(r"[^\W\d_]+", p.title))


def _given_word_fits(words: list[str], first_author: str, upper: bool = False) -> bool:
    """Whether the whole given names among ``words`` (the words written with the surname, initials aside) agree
    with the first author's given name (:func:`same_given_name`: "Tom Brown", "Durk Kingma", "Thomas Mikolov"
    fit; "Jerry Wei", "Pavel Mikolov" name other people).  APA 7 (section 9.8) cites a person by surname and
    initials, which agree for both of two people with one surname and one initial; a whole given name tells them
    apart.  Read only when each is shaped as a given name (capital, then lower-case letters: not "ResNet", not an
    acronym; all capitals when the surname is too, ``upper``: "PAVEL MIKOLOV") and none is a known paper's
    first-author surname ("Hinton Mikolov") or a word of a known paper's title ("... You All Is Attention
    Goodfellow"), and only one or two of them (a given name and a second one, "Tin Kam Ho": one of them must
    agree): three or more whole words may end a title written right before the name."""
    whole = [w for w in words if len(w.rstrip(".")) > 1]
    if not whole or len(whole) > 2:
        return True
    for word in whole:
        if word.casefold() in _KNOWN_SURNAMES or word.casefold() in _KNOWN_TITLE_WORDS:
            return True  # "Hinton Mikolov", "... Is Attention Goodfellow": a surname or a title's word
        rest = word[1:].replace("-", "").replace("'", "").replace("’", "")
        if not (word[:1].isupper() and (rest.islower() or upper and rest.isupper())):
            return True
    given = first_author.split()[0]
    return any(same_given_name(word, given) for word in whole)


def _plain(name: str) -> str:
    """``name`` case-folded, its accents dropped ("Tomáš" -> "tomas")."""
    if name.isascii():
        return name.lower()
    return "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c)).casefold()


def _one_edit_apart(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by at most one inserted, deleted or replaced letter."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))
    return a[i + (len(a) == len(b)):] == b[i + 1:]


@functools.lru_cache(maxsize=4096)  # a pure function of two short strings, asked again for every occurrence
def same_given_name(word: str, given: str) -> bool:
    """Whether the whole given name ``word`` names the same person as the author's given name ``given`` (as
    ``PAPERS`` lists it): the same name up to case and accents ("Tomáš"), a short form it starts with ("Geoff",
    "Alex", "Jon", "Ed"), a spelling one letter apart with the same initial, both of four letters or more
    ("Thomas" for Tomas, "Alexei" for Alexey), or a form of ``GIVEN_NAME_FORMS`` ("Durk" for Diederik, "Thomas" for
    Tom).  Any other whole given name is another person's ("Jerry Wei" is not Jason Wei, though both are "J.
    Wei"): a citation by initials cannot tell them apart, a whole given name can."""
    w, g = _plain(word), _plain(given)
    known = w in {_plain(form) for form in GIVEN_NAME_FORMS.get(given, ())}
    if not w or w[0] != g[0] and not known:
        return False
    return w == g or len(w) >= 2 and g.startswith(w) or len(w) >= 4 and len(g) >= 4 and _one_edit_apart(w, g) \
        or known


#: After a surname, a comma and one whole given name ending the name ("Mikolov, Tomas"; not "Vaswani, Shazeer,
#: Parmar", a list): the reference form "Surname, Given name".
_GIVEN_AFTER_RE = re.compile(
    r",[ \t]*((?-i:[A-Z])[^\W\d_]+)(?=[ \t]*(?:[.;)\n]|\Z|(?-i:[A-Z])\.(?![ \t]*(?-i:[A-Z]))))")
#: The same without the comma ("Mikolov Pavel"), read only when the surname opens its line (the answer itself):
#: the given name then ends the line or sentence.
_GIVEN_AFTER_BARE_RE = re.compile(r"[ \t]+((?-i:[A-Z])[^\W\d_]+)(?=[ \t*_]*(?:[.;)\n]|\Z))")


def _another_person(m: PaperMatcher, text: str, start: int, surname_at: int, end: int) -> bool:
    """Whether the name ``text[start:end]`` (given names from ``start``, the surname from ``surname_at``) names
    another person than the first author: an initial after the surname that does not fit ("Vaswani, N."), a
    given name after it that does not fit when none precedes it ("Mikolov, Pavel"; "Mikolov Pavel" as the
    answer), or given names before it that do not fit (:func:`_given_names_fit`: "X. Vaswani", "Pavel
    Mikolov").  A given name or initial after the surname that fits settles it ("A Survey Khattab, O.")."""
    first_author, upper = m.paper.first_author, text[surname_at:end].isupper()
    initial = _INITIAL_AFTER_RE.match(text, end)
    if initial is not None and _NEXT_NAME_RE.match(text, initial.end()) is None:  # (an initial then a name: the
        return not _given_names_fit(initial.group(1) + ".", first_author)        # next author's)
    given = _GIVEN_AFTER_RE.match(text, end)
    if given is None and start == surname_at and _line_opens_with(text, start):  # "Mikolov Pavel" as the answer
        given = _GIVEN_AFTER_BARE_RE.match(text, end)
        if given is not None and not name_like(given.group(1), m.name_exclude):
            given = None
    if given is not None:
        if _given_word_fits([given.group(1)], first_author, upper):
            return False
        if start == surname_at:
            return True
    return start < surname_at and not _given_names_fit(text[start:surname_at], first_author, upper)


#: The rest of a citation after the surname (APA 7, sections 8.17 and 9.8): the initials after a comma ("Mikolov,
#: T.", "Goodfellow, I. J.", "Goodfellow, I.J."), "et al." ("Hinton et al."), then a year in brackets or after a
#: comma ("Hinton et al. (2015)", "He, 2015").  An initial that a name follows is the next author's ("Vaswani, N.
#: Shazeer"): :func:`_citation_end` leaves it out.
_CITATION_TAIL_RE = re.compile(
    r"(?:(?<=\bal)\.)?(?:[ \t]+et\.?[ \t]+al\b\.?)?(?:[ \t]*\((?:19|20)[0-9]{2}[a-z]?\)|,[ \t]*(?:19|20)[0-9]{2}\b)?")
#: Initials after the surname without a comma (Vancouver: "Mikolov T", "Goodfellow IJ."), not a word's capital.
_VANCOUVER_AFTER_RE = re.compile(r"[ \t]+((?-i:[A-Z]{1,3}))\b\.?(?![ \t]*(?-i:[A-Z])[^\W\d_])")
#: The given name after a comma, then its middle initials ("Mikolov, Tomas", "Goodfellow, Ian J.").
_GIVEN_TAIL_RE = re.compile(r",[ \t]*((?-i:[A-Z])[^\W\d_]+)(?:[ \t]+(?-i:[A-Z])\.)*")


def _citation_end(m: PaperMatcher, text: str, end: int) -> int:
    """Where the citation whose surname ends at ``end`` ends: after the first author's initials or given name
    written after a comma ("Mikolov, T.", "Mikolov, Tomas", "Goodfellow, I. J."), "et al." and a year
    (``_CITATION_TAIL_RE``), so that what follows the citation ("Mikolov, T. or Dean", "Goodfellow, Ian.
    Actually, it's B", "Mikolov, T.? No - B") is read after the whole name, as it is after "Tomas Mikolov"; a
    given name after the comma that is not the author's is left out (it is another person's or the next
    author's).  ``end`` when nothing of a citation follows."""
    given = _GIVEN_TAIL_RE.match(text, end)
    if given is not None and same_given_name(given.group(1), m.paper.given_name):
        end = given.end()
    elif (initials := INITIALS_AFTER_RE.match(text, end)) is not None and not _name_follows_initial(
            m, text, initials.end()):
        end = initials.end()
    elif (initials := _VANCOUVER_AFTER_RE.match(text, end)) is not None and initials.group(1)[0] == \
            m.paper.given_name[0]:
        end = initials.end()  # "Mikolov T", "Goodfellow IJ" (Vancouver): the author's own initials
    tail = _CITATION_TAIL_RE.match(text, end)
    return tail.end() if tail is not None else end


def _name_follows_initial(m: PaperMatcher, text: str, at: int) -> bool:
    """Whether a name (a capitalised name-like word, :func:`verifiers.arxiv.matching.name_like`) follows the
    initial ending at ``at`` on its line: then the initial is the next author's ("Vaswani, N. Shazeer"), not
    the surname's before it ("Mikolov, T. Actually, it's B")."""
    word = _NEXT_NAME_WORD_RE.match(text, at)
    return word is not None and name_like(word.group(1), m.name_exclude)


_NEXT_NAME_WORD_RE = re.compile(r"[ \t]+((?-i:[A-Z])[^\W\d_]+)")


def _line_opens_with(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens its line (after a list marker, a label's colon, quotes or emphasis)."""
    head = text[text.rfind("\n", 0, start) + 1:start].strip(" \t*_\"'“‘-•")
    return not head or head.endswith(":") or head.rstrip(".)").isdigit()
#: The capitalised word that ends a line (quotes and emphasis around it): a given name when the surname opens the
#: next line.
_GIVEN_LINE_RE = re.compile(r"(?<!\S)[*_\"'“‘]*((?-i:[A-Z])[^\W\d_]+(?:-[^\W\d_]+)?)[ \t*_\"'”’]*\Z")


def _join_split_name(m: PaperMatcher, r: Response) -> Response:
    """``r`` with the line break between a given name and the surname read as a space: a line that ends with a
    capitalised word whose initial agrees with the first author's given name, right before a line that opens
    with the surname ("Tomas\nMikolov", "Tomas\r\nMikolov", "The first author is Tomas\nMikolov."), is one
    name split over two lines, not two candidates.  Two names on two lines ("Kai Chen\nTomas Mikolov",
    "Chen\nMikolov") stay two.  Offsets stay put (one character for one)."""
    text, cuts = r.text, []
    for start, _ in m.author.spans(text, r.lower)[:MAX_OCCURRENCES]:
        if start < 2 or text[start - 1] != "\n":
            continue
        line = text.rfind("\n", 0, start - 1) + 1
        given = _GIVEN_LINE_RE.search(text, max(line, start - 41), start - 1)
        word = given.group(1) if given is not None else ""
        if word and name_like(word, m.name_exclude) and word[0].casefold() == m.paper.first_author[:1].casefold() \
                and word.casefold() not in _KNOWN_TITLE_WORDS and word.casefold() not in _KNOWN_SURNAMES:
            cuts.append(start - 1)
    if not cuts:
        return r
    chars = list(text)
    for at in cuts:
        chars[at] = " "
    return Response("".join(chars), r.raw, r.echoed, r.truncated)


#: A numbered or bulleted list item's marker at a line's start (group 1: the number).
_ITEM_MARKER_RE = re.compile(r"[ \t]*(?:\(?([0-9]{1,2})[.)]|[-*•+])[ \t]+[*_\"'“‘]*")
#: A heading that introduces the authors in their order ("Author order:", "Authors:", "Author list", "Byline")
#: ...
_ORDER_HEADING_RE = re.compile(r"\b(?:authors|author\s+(?:order|list|ordering|line)|order\s+of\s+(?:the\s+)?authors"
                               r"|byline|author\s+positions?|position)\b", re.IGNORECASE)
#: ... unless it offers candidates ("Possible authors:", "Candidates for first author").
_CANDIDATE_HEADING_RE = re.compile(r"possib|candidate|option|guess|maybe|perhaps|either|could|might|alternativ"
                                   r"|likely|first\s+author|choices", re.IGNORECASE)


#: Given names or initials between a label and the surname ("Ashish ", "Diederik P. ").
_GIVEN_NAMES_TAIL = r"(?:(?-i:[A-Z])[^\W\d_]*\.?[ \t]+){0,3}\Z"
#: A label (a key of a JSON object, or before a colon at a line's start) right before a name: group 1.
_POSITION_KEY_RE = re.compile(r"(?:^|(?<=[\n{,]))[ \t*_\"'-]*([0-9A-Za-z][\w -]{0,30}?)[ \t*_\"']*[:=][ \t*_\"']*"
                              + _GIVEN_NAMES_TAIL)
#: A JSON array of authors up to a name: its key (group 1) names authors, then only quoted names and commas.
_AUTHOR_ARRAY_RE = re.compile(r"[\"']([\w -]{0,40}authors?[\w -]{0,20})[\"']\s*:\s*\[(?:\s*\"[^\"\n]*\"\s*,)*\s*\""
                              + _GIVEN_NAMES_TAIL, re.IGNORECASE)


def _explicit_position(text: str, start: int) -> int | None:
    """The position an explicit ordering gives the name starting at ``start`` (given names included), or
    ``None``: a table row labelled with a position ("| First author | X |", "| 2 | X |" in a table whose header
    names authors), a label or key naming a place ("2nd author: X", {"second_author": "X"}), an element of a
    JSON array of authors ({"authors": ["Y", "X"]}: its place) or an item of a list under a heading that
    introduces the authors in order ("Author order:\n1. X\n2. Y", "Authors:\n- X\n- Y": the item's number,
    or its place in the list).  A record lists one value per
    field: the first place names the first author, any other place a co-author."""
    line_start = text.rfind("\n", 0, start) + 1
    head = text[line_start:start]
    if head.lstrip().startswith("|"):
        cells = head.split("|")
        if len(cells) < 3 or cells[-1].strip(" *_\"'"):
            return None  # the name is not at its cell's start
        label = cells[-2].strip()
        position = position_label(label)
        if position is None or "author" in label.lower():  # "| First author | X |", "| Author 2 | X |"
            return position
        # "| 1 | X |": a position in a table whose header names authors ("| Position | Author |")
        return position if "author" in text[max(0, line_start - 400):line_start].lower() else None
    cell = head.strip()
    if cell.endswith(":") and "author" in text[max(0, line_start - 400):line_start].lower():
        position = position_label(cell[:-1].strip())  # "| 1 | X |" read as the key-value line "1: X"
        if position is not None:
            return position
    if ":" in head or "=" in head:  # "2nd author: X", {"second_author": "X"}
        label = _POSITION_KEY_RE.search(text, max(line_start, start - 80), start)
        if label is not None and "author" in label.group(1).lower():
            # a field given several values (a JSON array under it, the key repeated) holds candidates, no order
            if "[" in text[label.end(1):start] or text.count(label.group(1)) > 1:
                return None
            return position_label(label.group(1).replace("_", " ").replace("-", " "))
        array = _AUTHOR_ARRAY_RE.search(text, max(line_start, start - 400), start)
        if array is not None and _CANDIDATE_HEADING_RE.search(array.group(1)) is None and (
                _ONE_ANSWER_KEY_RE.match(array.group(1)) is None):  # {"first_author": [A, B]}: candidates
            opening = text.find("[", array.start(), start)
            return text.count('"', opening, start) // 2 + 1  # {"authors": ["X", "Y"]}: the element's place
    tagged = record_tag(text, line_start, start)
    if tagged is not None and tagged[1] == "author":  # RIS "AU  - X" / EndNote "%A X": one tag a name, in order
        if tagged[2] != start:
            return None
        prefix = "%" + tagged[0] if len(tagged[0]) == 1 else tagged[0]  # EndNote's tags are "%" and one character
        same = re.compile(rf"^[ \t]*{re.escape(prefix)}[ \t]", re.MULTILINE)  # its earlier lines: co-authors before
        return sum(1 for _ in same.finditer(text, 0, line_start)) + 1
    marker = _ITEM_MARKER_RE.match(text, line_start, start)
    if marker is None or marker.end() != start:
        return None
    # the list's heading: the nearest line above that is no item of it
    index, end = 1, line_start - 1
    while end > 0:
        above = text.rfind("\n", 0, end) + 1
        item = _ITEM_MARKER_RE.match(text, above, end)
        if item is None:
            heading = text[above:end]
            if len(heading) > 80 or _ORDER_HEADING_RE.search(heading) is None or _CANDIDATE_HEADING_RE.search(
                    heading):
                return None
            return int(marker.group(1)) if marker.group(1) else index
        index, end = index + 1, above - 1
    return None


def _name_follows(r: Response, at: int, exclude: frozenset[str]) -> bool:
    """Whether a name starts at offset ``at`` (quotes and spaces skipped): a capitalised, name-like word
    (:func:`verifiers.arxiv.matching.name_like`); ``at`` < 0 means no restatement, so no."""
    if at < 0:
        return False
    word = _NEXT_WORD_RE.match(r.text, at, at + 60)
    while word is not None and len(word.group(1)) == 2 and word.group(1)[0].isupper() and word.group(1)[1] == ".":
        word = _NEXT_WORD_RE.match(r.text, word.end(), word.end() + 60)  # "it's J. Dean": the name after the initial
    return word is not None and word.group(1)[:1].isupper() and name_like(word.group(1).rstrip("."), exclude)


#: A cue after the names it calls candidates ("A, B - one of those"); one alternative of the cue below.
_TRAILING_CUE = r"\bone\s+of\s+(?:those|these|them|the\s+two)\b"
#: A cue that the names of a response are candidates, not a list of authors: "candidates", "options",
#: "alternatives", "possibility", "possibilities", "choices", "guess(es)" ("Best guess: A"), "backup", "second
#: guess", "not sure between", "possible answers", "less likely", "one of:", "it may well be", "in which case
#: the answer would be", "B is also plausible" (reaching back, as "it may well be" does), or confidences
#: ("60%"); after the names, "one of those" calls the whole sentence's names candidates ("A, B - one of those").
_NAME_LISTING_CUE_RE = re.compile(
    r"\b(?:candidates?|options?|alternatives?|alternatively|possibilit(?:y|ies)|choices|guess(?:es)?|backup|second\s+(?:guess"
    r"|choice|option)|runner[\s-]up|(?:sure|certain|decide|choose|torn|undecided|unsure)\s+(?:\w+\s+)?between"
    r"|possible\s+answers?|(?:less|more|also|equally)\s+likely|(?:most\s+likely|one\s+of)(?=\s*:)"
    r"|(?:it|that)\s+(?:may|might|could)\s+(?:well|also|equally)\s+be"
    r"|in\s+which\s+case,?\s+(?:the\s+(?:answer|first\s+author)\s+|it\s+)?(?:would|could|might|may)\s+be)\b"
    r"|" + _TRAILING_CUE + r"|\b(?:is|seems)\s+(?:also|equally)\s+(?:plausible|possible)\b"
    r"|[0-9]{1,3}(?:\.[0-9]+)?\s?%[^%]*[0-9]{1,3}(?:\.[0-9]+)?\s?%")
_NAME_LISTING_KEYS: tuple[str, ...] = ("candidate", "option", "alternative", "possibilit", "choice", "guess", "backup",
                                       "runner", "%", "between", "possible answer", "likely", "one of", "well be",
                                       "also be", "equally be", "which case", "plausible", "also possible",
                                       "equally possible", "possible too", "possible as well", "to mind")
_has_name_listing_key = contains_any(_NAME_LISTING_KEYS)
#: The first words of ``_NAME_LISTING_CUE_RE``'s alternatives but the confidences' (every other match starts with
#: one, at a word's start: its ``\b``), grouped by what the rest of their alternatives needs in the text (``None``:
#: nothing looked for); a group whose need is missing cannot start a match ("it", "that" without "may", "might" or
#: "could").  Only at the word starts of the groups kept is the pattern tried (:func:`_listing_cues`).
_NAME_LISTING_CUE_STARTS: tuple[tuple[Callable[[str], bool] | None, tuple[str, ...]], ...] = (
    (None, ("candidate", "option", "alternative", "possib", "choices", "guess", "backup", "second", "runner", "one")),
    (contains_any(("between",)), ("sure", "certain", "decide", "choose", "torn", "undecided", "unsure")),
    (contains_any(("likely",)), ("less", "more", "also", "equally", "most")),
    (contains_any(("may", "might", "could")), ("it", "that")),
    (lambda s: "which" in s and "case" in s, ("in",)),
    (contains_any(("plausible", "possible")), ("is", "seems")),
)
#: Per set of first words kept, their key table (at most one per combination of the groups' needs).
_LISTING_CUE_TABLES: dict[tuple[str, ...], KeyTable] = {}


def _listing_cues(r: Response) -> list[re.Match[str]]:
    """What ``_NAME_LISTING_CUE_RE.finditer(r.lower)`` finds, tried only at the word starts of its alternatives'
    first words (``_NAME_LISTING_CUE_STARTS``, the groups whose rest may occur), each by an anchored match: a
    whole-text search costs a pass of the branch-first pattern over every character (about 330 us on a long
    answer).  A confidence ("60%") may start inside a word, so a text with "%" is searched whole."""
    lower = r.lower
    if "%" in lower:
        return list(_NAME_LISTING_CUE_RE.finditer(lower))
    words = tuple([w for need, group in _NAME_LISTING_CUE_STARTS if need is None or need(lower) for w in group])
    table = _LISTING_CUE_TABLES.get(words)
    if table is None:
        table = _LISTING_CUE_TABLES[words] = KeyTable(words)
    return list(matches_at(_NAME_LISTING_CUE_RE, lower, table.scan(lower)[0].word_starts(lower), 0, len(lower)))


#: Rarer cues, sought only when their words are there (each branch of the cue above costs every grade): "B seems
#: possible too", "B looks plausible as well" reach back as "B is also plausible" does; what "comes to mind" is
#: tentative by its wording ("Names that come to mind: A and B"), so the names after its colon are candidates.
_RARE_NAME_CUE_RE = re.compile(r"\b(?:is|seems|looks|sounds)\s+(?:(?:also|equally)\s+(?:plausible|possible)"
                               r"|(?:plausible|possible)\s+(?:too|as\s+well))\b"
                               r"|\b(?:come|comes|spring|springs)\s+to\s+mind(?=\s*:)")
_has_rare_name_cue_key = contains_any(("to mind", "possible too", "plausible too", "possible as well",
                                       "plausible as well", "looks also", "looks equally", "sounds also",
                                       "sounds equally"))


#: How far back (characters) "it may well be B" and "B is also plausible" reach for the answer B is offered
#: besides: a paragraph or two.
CUE_REACH_BACK = 300
#: A name opening its clause right before "is also plausible": its subject ("; Dean is also plausible", "J. Dean
#: is also possible", "Dean, J. is also possible", "Dean et al. too"; not "A follow-up with Dean is also possible").
_NAME_BEFORE_CUE_RE = re.compile(r"(?:^|[.;:!?\n,]|\b(?:but|though|although|and|or)\b)[ \t*_\"'“‘]*"
                                 r"(?:(?-i:[A-Z])(?:\.|[^\W\d_]*)[ \t]+)*(?-i:[A-Z])[^\W\d_]+"
                                 r"(?:,(?:[ \t]*(?-i:[A-Z])\.)+|[ \t]+et\.?[ \t]+al\.)?[*_\"'”’]*[ \t]+\Z")
#: A word of that subject (two letters or more: an initial is no name of its own).
_SUBJECT_WORD_RE = re.compile(r"[^\W\d_]{2,}")

#: Before a cue in its sentence: the names before it are called candidates ("A and B are both candidates", "B is
#: another option"; not "there are", "which is").
_CUE_COPULA_RE = re.compile(r"(?<!there )(?<!which )(?<!that )\b(?:is|was|are|were)\b|(?<!there)['’]re\b")
#: Between a cue and the names it offers: punctuation, markup, a table's rule, an option's number or letter, a
#: list item's number ("Options:\n1. A"), linking and hedging words ("Candidates that come to mind: A"), a ranking
#: ("My best guesses, in order: A; B": ranked candidates are still candidates), but not a
#: name's initial ("Top candidates: A", "Option 2 - A", "Another possibility, though, is A", "My second guess
#: would be A", "torn between A and B", "torn between G. Hinton and B").
_CUE_LINK_RE = re.compile(r"(?:[\s*_\"'“‘”’()\[\]|/:=,;–—-]|#?[0-9]{1,2}(?:[.)](?=\s)|\b)|\b[a-h]\b(?!\.[ \t]*[^\W\d_])"
                          r"|\b(?:come|comes|spring|springs)\s+to\s+mind\b"
                          r"|\b(?:in\s+order\s+of\s+(?:likelihood|preference|confidence)|in\s+(?:that\s+)?order|ranked)\b"
                          r"|\b(?:is|are|was|were|be|would|could|might|may|include[sd]?"
                          r"|including|between|maybe|perhaps|possibly|probably|though|however|also|then|it|it['’]s"
                          r"|that|which"
                          r"|i(?!\.)|i['’]d|think|say|my)\b)*")


#: From a list's first item on, the list's lines: each later item opens with a list marker, blank lines between.
_LIST_UNDER_CUE_RE = re.compile(r"[^\n]*(?:(?:\n[ \t]*)+(?=" + LIST_ITEM + r"[ \t])[^\n]*)*")


#: A list item's first word, capitalised (markup skipped): group 1 ("2. **Kingma** — ...").
_ITEM_NAME_RE = re.compile(r"\n[ \t]*" + LIST_ITEM + r"[ \t*_\"'“‘]*((?-i:[A-Z])[^\W\d_]+)")


def _names_under_listing_cue(m: PaperMatcher, r: Response, committed: list[tuple[int, int]]) -> bool:
    """Whether the response calls its names candidates (``_NAME_LISTING_CUE_RE``: "Top candidates: A, B", "Best
    guess: A. Second guess: B", "A (70%), B (30%)") and names someone else besides the first author where that
    cue reaches: from the name right after the cue (only linking words between, ``_CUE_LINK_RE``: "Top
    candidates: A, B", "Another possibility, though, is B") to its sentence's end
    (:func:`verifiers.arxiv.matching.sentence_span`; a heading's items and a table's rows go on to the next full
    stop or blank line), or the whole sentence when a copula comes before the cue ("A and B are both candidates",
    "B is another option") or the cue is a pair of confidences.  Then a list of names is a list of alternatives,
    not of authors.  A cue that offers no name ("careful choices of hyperparameters", "Hugging Face offers several
    options", "one of the options is the Hugging Face library") calls no name a candidate."""
    if not _has_name_listing_key(r.lower):
        return False
    text, lower, scopes = r.text, r.lower, []
    cues: list[re.Match[str]] = _listing_cues(r)
    if _has_rare_name_cue_key(lower):
        cues = sorted([*cues, *_RARE_NAME_CUE_RE.finditer(lower)], key=lambda cue: cue.start())
    for cue in cues:
        start, end = sentence_span(text, cue.start(), cue.end())
        word = cue.group()
        # confidences and "one of those" look back over the whole sentence, "B is also plausible" further back
        if word.endswith(("plausible", "possible", "too", "well")):  # B is offered besides an answer before it
            subject = _NAME_BEFORE_CUE_RE.search(text, max(0, cue.start() - 60), cue.start())
            if subject is None:
                continue  # "A sequel is also possible": the subject is no name
            start = max(0, start - CUE_REACH_BACK)
            # the cue makes its subject a name, even a bare surname opening the sentence ("Zhang is also
            # plausible, but I'd say He"): another person than the answer given within reach is a rival
            if not any(subject.start() <= a < cue.start() for a, _ in committed) and any(
                    start <= a <= end for a, _ in committed) and any(
                    w[0].isupper() and name_like(w, m.name_exclude)
                    for w in _SUBJECT_WORD_RE.findall(text, subject.start(), cue.start())):
                return True
        elif word[-1] != "%" and not word.startswith("one of th") and (
                word.endswith(" be") or lower.startswith(":", cue.end())  # "Here are the options: A, B"
                or _CUE_COPULA_RE.search(lower, start, cue.start()) is None):
            # the link may pass the sentence's end: a heading's colon, a list item's number ("Options:\n\n1. A")
            start = _CUE_LINK_RE.match(lower, cue.end(), max(end, cue.end() + 40)).end()
            if not text[start:start + 1].isupper():
                continue  # "Hugging Face offers several options", "the options are many": the cue offers no name
            if word.endswith(" be"):  # "A. That said, it may well be B": B is offered besides the answer before
                start = max(0, cue.start() - CUE_REACH_BACK)
            elif "\n" in text[cue.end():start]:  # a heading's cue reaches over all of the list under it
                end = max(end, sentence_span(text, start, start)[1], _LIST_UNDER_CUE_RE.match(text, start).end())
                # an item that opens with a name offers it, a bare surname too ("2. **Kingma** — ..."): the
                # heading calls it a candidate, as a label calls its value one
                for item in _ITEM_NAME_RE.finditer(text, start, end):
                    if name_like(item.group(1), m.name_exclude) and not any(
                            item.start(1) <= a <= item.end(1) + 40 for a, _ in committed):
                        return True
        if scopes and start <= scopes[-1][1]:
            scopes[-1] = (scopes[-1][0], max(end, scopes[-1][1]))
        else:
            scopes.append((start, end))
    if not scopes:
        return False
    outside = [(a, b) for a, b in zip([0] + [e for _, e in scopes], [s for s, _ in scopes] + [len(text)], strict=True)
               if a < b]
    others = blank(text, outside + [(_name_start(text, s), e) for s, e in committed])
    return bool(name_tokens(others, m.name_exclude, 1, counts=r.counts))


def _after_listing_cue(r: Response, start: int) -> bool:
    """Whether a cue calling names candidates (``_NAME_LISTING_CUE_RE``: "Two candidates:", "torn between") stands
    before ``start`` in its sentence, or "one of those" after it: the names listed there are alternatives ("Two
    candidates: Dean and Mikolov", "Dean, Mikolov - one of those"), not a list of authors in their order."""
    if not _has_name_listing_key(r.lower):
        return False
    lo, hi = sentence_span(r.text, start, start)
    return _NAME_LISTING_CUE_RE.search(r.lower, lo, start) is not None or (
        _TRAILING_CUE_RE.search(r.lower, start, hi) is not None) or (
        _has_rare_name_cue_key(r.lower) and _RARE_NAME_CUE_RE.search(r.lower, lo, start) is not None)


#: ``_TRAILING_CUE`` alone: "one of those" after the names (``_after_listing_cue``).
_TRAILING_CUE_RE = re.compile(_TRAILING_CUE)


#: Before a bare surname that is also an English word, what puts it in an answer position (markup and quotes
#: skipped): a label's colon or dash ("First author: He", "First author — He"), a copula, "by", a hedge word or
#: the "or" or "/" of an alternative, an option's label ("The first author is He", "written by He", "maybe He",
#: "Zhang or He", "Zhang / He", "Option B. He"), or another item of a list of names ("Zhang and He.", "Zhang, He,
#: or Ren", "I'd say He.": a capitalised "He" there is no pronoun, which would be written "he") ...
_ANSWER_SLOT_BEFORE_RE = re.compile(
    r"(?:(?<![^\W_])(?:is|was|by|it[’']s|maybe|perhaps|probably|possibly|or|and|say"
    r"|(?:option|candidate|choice)[ \t]+[a-h0-9][.)])|[:,/]|\s[–—-])[ \t*_\"'“‘]*\Z", re.IGNORECASE)
#: ... or a list item's start, where a spaced dash may end the name too ("1. **He** — proposed in 2015") ...
_ITEM_SLOT_BEFORE_RE = re.compile(r"(?:^|(?<=\n))[ \t]*" + LIST_ITEM + r"[ \t*_\"'“‘]*\Z")
#: ... or the start of a line (a list marker skipped) ...
_LINE_SLOT_BEFORE_RE = re.compile(r"(?:^|(?<=\n))[ \t]*" + LIST_ITEM + r"?[ \t*_\"'“‘]*\Z")
#: ... and after it, the name ends (a stop, a closing bracket or tag, the line's end) or another name follows as an
#: alternative or in a list ("He or Zhang", "He, or Zhang", "He and Zhang"); after a label, copula or "by" a comma
#: or a bracket may end it too ("is He, with Zhang", "is He (Microsoft Research)"), and so may a spaced dash
#: ("Zhang or He - I can't verify which"); an alternative may follow a dash or "and/or", with a hedge word ("He —
#: or perhaps Zhang", "He and/or Zhang"); a bracket naming the role ends it too ("He (first author)").
_NAME_ENDS_RE = re.compile(r"[*_\"'”’]*(?:[ \t]*(?:[.;:!?)\]}<|\n]|\Z)"
                           r"|[ \t]+\((?:the[ \t]+)?(?:first|lead)[ \t-]+author\b"
                           r"|,?[ \t]+(?:[–—-]{1,2}[ \t]+)?(?:or|and/or|and|&)[ \t]+"
                           r"(?:(?:perhaps|maybe|possibly)[ \t]+)?[*_\"'“‘]*(?-i:[A-Z]))")
_NAME_ENDS_OR_COMMA_RE = re.compile(_NAME_ENDS_RE.pattern + r"|[*_\"'”’]*(?:,|[ \t]+\(|[ \t]+[–—-][ \t])")
_NAME_ENDS_OR_DASH_RE = re.compile(_NAME_ENDS_RE.pattern + r"|[*_\"'”’]*[ \t]+[–—-]{1,2}[ \t]")
#: A citation that may stand anywhere: "He and colleagues", "He (2015)", "He, 2015", a list of authors "He, Zhang,
#: Ren", and a co-author in APA's two-author forms (section 8.17) as for any surname: "He & Zhang", "He and Zhang
#: (2015)", "He and Zhang, 2015", "He and Zhang et al.", "He, Zhang et al.".
_CO_AUTHOR = r"(?-i:[A-Z])[^\W\d_]+(?:-[^\W\d_]+)?"
_CITATION_AFTER_RE = re.compile(rf"[*_\"'”’]*(?:[ \t]+(?:and|&)[ \t]+(?:colleagues|co-?authors)\b"
                                rf"|[ \t]*\((?:19|20)[0-9]{{2}}\)|,[ \t]*(?:19|20)[0-9]{{2}}\b"
                                rf"|,[ \t]*{_CO_AUTHOR}(?:[ \t]+{_CO_AUTHOR})?[ \t]*(?:,|&|\band\b|\bor\b"
                                rf"|et\.?[ \t]+al\b)"
                                rf"|[ \t]*&[ \t]*{_CO_AUTHOR}"
                                rf"|[ \t]+and[ \t]+{_CO_AUTHOR}(?:[ \t]+et\.?[ \t]+al\b|[ \t]*\((?:19|20)[0-9]{{2}}"
                                rf"|,[ \t]*(?:19|20)[0-9]{{2}}\b))")


def _bare_surname_spans(m: PaperMatcher, text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with :func:`_bare_surname_hits` of the author's surname (``m.last_name``) added, sorted."""
    found = _bare_surname_hits(m.last_name, text, spans)
    return sorted(spans + found) if found else spans


def _bare_surname_hits(last: str, text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with the bare surname that is also an English word ("He") where it stands in an answer position:
    capitalised as a name ("He", "HE"), after a label, a copula, "by" or a hedge word, or opening a line, with the
    name ending right after it or another name following as an alternative (``_ANSWER_SLOT_BEFORE_RE``,
    ``_LINE_SLOT_BEFORE_RE``, ``_NAME_ENDS_RE``: "The first author is He.", "Answer: **He**", "written by He",
    "maybe He or Zhang", "- He"), or opening a citation anywhere ("He and colleagues", "He (2015)", "He, Zhang, Ren
    and Sun": ``_CITATION_AFTER_RE``).  A pronoun opening a clause ("He proposed ...", "He, however, ...", "Note:
    He was ...") is none: a lower-case word follows it.  Returns the spans of such uses of ``last`` not inside
    ``spans``."""
    found = []
    covered = {i for s, e in spans for i in range(s, e)}  # a set: a long text holds thousands of spans
    for match in re.finditer(rf"(?<![^\W_])(?:{re.escape(last)}|{re.escape(last.upper())})(?![^\W_]|[-‐‑'’][^\W_])",
                             text):
        start, end = match.span()
        if start in covered:
            continue  # already read in a citation form ("Kaiming He", "He et al.")
        lo = max(0, start - 40)
        # the anchored tests after the name first: the searches before it cost 40 tries each, and a text of
        # pronouns ("He said no. He said ...", 200 KB) would run them at every one
        if _CITATION_AFTER_RE.match(text, end) is not None or (
                _NAME_ENDS_OR_COMMA_RE.match(text, end) is not None
                and _ANSWER_SLOT_BEFORE_RE.search(text, lo, start) is not None) or (
                _NAME_ENDS_RE.match(text, end) is not None
                and _LINE_SLOT_BEFORE_RE.search(text, lo, start) is not None) or (
                _NAME_ENDS_OR_DASH_RE.match(text, end) is not None
                and _ITEM_SLOT_BEFORE_RE.search(text, lo, start) is not None):
            found.append((start, end))
    return found


#: A known first author's surname that is also an English word ("He"), capitalised, standing alone as a phrase
#: (or with "et al."): offered where a candidate stands (an alternation's other side, another item of a list:
#: "Mikolov or He", "Hinton et al. or He et al."), it names that author, not the pronoun, as the author's own
#: surname does there (``_bare_surname_spans``).
_LONE_WORD_SURNAME_RE = re.compile(r"[*_\"'“‘]*(?:" + "|".join(map(re.escape, _LONE_WORD_SURNAMES)) + r")"
    r"(?:[ \t]+et\.?[ \t]+al\b\.?)?[*_\"'”’.!?]*")


def grade_author(m: PaperMatcher, r: Response) -> Verdict:
    """See the module docstring (author) and :func:`verifiers.arxiv.matching.author_pattern`.  Well formed
    when a name is offered (a capitalised word that is not filler or a word of the question, or a response
    of a few lower-case words)."""
    if "\n" + m.author.key in r.lower:  # a line opens with the surname: it may end a split name
        r = _join_split_name(m, r)
    name, last, text = m.paper.first_author, m.last_name, r.text
    exclude = m.question_words["author"]
    committed, retracted_any, ordered, hedged = [], False, False, False
    has_or = " or " in r.lower
    spans = m.author.spans(text, r.lower)
    if m.ambiguous and (last in text or last.upper() in text):
        spans = _bare_surname_spans(m, text, spans)
    for start, end in spans[:MAX_OCCURRENCES]:
        if institution_after(text, end) or interjection(text, start, end):
            continue  # "the Brown University library", "Ho ho ho": no person's name
        surname_at, start = start, _name_start(text, start)
        if _another_person(m, text, start, surname_at, end):
            continue  # "X. Vaswani", "Pavel Mikolov", "Vaswani, N.", "Mikolov, Pavel": the same surname, another person
        # "Dean, Mikolov, or Corrado": alternatives (read after the whole citation: "Mikolov, T." is one name);
        # a comma after the name or an "or" before it first, as the lists need them (a cheap test)
        or_listed = has_or and ("," in text[end:end + 16] or text[max(0, start - 8):start].rstrip(
            " \t\"“‘'`*_([").endswith(" or")) and _or_listed(text, start, _citation_end(m, text, end))
        hedged = hedged or or_listed
        if _listed_after_name(text, start, m.name_exclude) and not or_listed and not _after_listing_cue(r, start):
            retracted_any = True  # "Noam Shazeer, Ashish Vaswani": a list names its first author first
            continue
        position = _explicit_position(text, start) if "\n" in text or "|" in text or ":" in text else None
        if position is not None and position != 1:
            retracted_any = True  # "Author order:\n1. Shazeer\n2. Vaswani", "| Second author | Vaswani |"
            continue
        ordered = ordered or position == 1
        end = _citation_end(m, text, end)
        if not r.counts(start, end) or _role_after(r, end) or _role_before(r, start):
            retracted_any = True
        elif _name_follows(r, r.restated_after(end), m.name_exclude):
            retracted_any = True  # "He. Actually, it's Sun": the name right after the restatement supersedes
        else:
            committed.append((start, end))
    hint = " (a surname that is also an English word needs the given name, an initial or et al.)" \
        if m.ambiguous else ""
    if committed:
        offers_name = lambda phrase: (bool(name_tokens(phrase, m.name_exclude, 1)) and not _reads_as_title(  # noqa: E731
            phrase)) or _LONE_WORD_SURNAME_RE.fullmatch(phrase.strip()) is not None
        # an explicit ordering ({"first_author": A}) is no list of rivals, but a cue still calls names
        # candidates ({"first_author": A, "alternative": B})
        # a field's value may still offer two names by an alternation ({"first_author": "He or Zhang"}, "First
        # author: A or B"): hedged as in prose, since one field holds one answer
        if hedged or (_listed_rival(r, committed, offers_name, "author") if not ordered else _alternated(
                r.text, committed, offers_name)) or _names_under_listing_cue(m, r, committed):
            return HEDGED_CREDIT, 1.0, (f"expected first author {name}; {last} was offered with another name "
                                        f"as an alternative; commit to one name")
        return 1.0, 1.0, f"correct: expected first author {name}, response names {last}"
    names = name_tokens(text, exclude, 1, counts=r.counts)
    if names and not retracted_any and (offers_nothing(text) or only_titles(text)):
        names = []  # "© 2023 Example Corp.", "Going Deeper with Convolutions": no person named
    if not names and not retracted_any:  # "The first author is He." on another paper's task: He, a wrong name
        names = [other for other in _LONE_WORD_SURNAMES if other != last and other in text and any(
            r.counts(s, e) for s, e in _bare_surname_hits(other, text, []))]
    if not names and not retracted_any:
        return no_answer(f"first author {name}", "a name", r, hint)
    why = "" if names else f" ({last} only negated or not as first author)"
    return 0.0, 1.0, f"expected first author {name} (last name {last}){hint}, response said {quote(r.raw)}{why}"


#: What a service's error reply may start with (:func:`verifiers.arxiv.offers.service_error` reads it in full):
#: one character matched in place of a call per grade.
_SERVICE_START_RE = re.compile(r"[\s*_`>→=\-hH{\"']")


def grade_committed(grader: Callable[[PaperMatcher, Response], Verdict], m: PaperMatcher, r: Response) -> Verdict:
    """``grader(m, r)`` on what the response commits to: when it takes back what it said before ("Final
    answer: B", "scratch that", "I meant B") or concedes what others say ("Some say A; in fact B"), the part
    without that (:func:`verifiers.arxiv.matching.committed_part`) is graded first, and it counts when it
    offers an answer or refuses; otherwise the whole response is graded."""
    verdict = grader(m, r)
    # "HTTP/1.1 429 ...\nRetry-After: 2019": a server's reply, no answer
    if verdict[1] and _SERVICE_START_RE.match(r.text) is not None and service_error(r.text):
        return 0.0, 0.0, ("no answer: the response is a service's error reply (an HTTP error status and its "
                          f"headers, or an error JSON), whose numbers are no answer; response: {quote(r.raw)}")
    if verdict[0] in (1.0, 0.0) and verdict[1] and "if " in r.lower:  # "If you mean X, A; otherwise B": two
        verdict = _conditional_hedge(grader, m, r, verdict)  # answers, hedged, whichever branch comes first
    if not verdict[1]:  # no answer in the whole response: none in a part of it either
        return verdict
    part = committed_part(r)
    if part is not None:
        if service_error(part.text):  # a tool's call, then its error reply: "-> {"error": "rate limited"}"
            return 0.0, 0.0, ("no answer: what the response commits to is a service's error reply; response: "
                              f"{quote(r.raw)}")
        committed = grader(m, part)
        if committed[1] or part.refuses():
            return committed
    return verdict


#: A branch of a conditional answer is at most this long, and the next starts at most this far after it
#: (characters): one conditional is a sentence or two, not two far-apart uses of "if" in a long answer.
BRANCH_REACH = 160
#: The words that open a branch of a conditional answer ("if you mean X, A; otherwise B").
_BRANCH_WORDS: tuple[str, ...] = ("if", "otherwise", "else")
#: What may stand before a branch word: the text's start, a clause's punctuation or a joining word.
_BRANCH_LEAD_RE = re.compile(r"(?:^|[.;:,!?(\n—–-]|\b(?:and|but|or))[ \t*_\"'“‘]*\Z")


def _conditional_branches(r: Response) -> list[tuple[int, int]]:
    """The branches of a conditional answer, ``(start, end)`` each: from each branch word (``_BRANCH_WORDS``) that
    opens a clause to the next, the first being "if" ("If you mean the original paper, A; if you mean the
    follow-up, B", "If P, A; otherwise B"); ``[]`` for fewer than two branches.  What precedes the first "if" is
    no branch, so "A. If you want more, see B" has none."""
    lower, at = r.lower, []
    # (a second "if " found after the first, not counted over the whole text: "if " cannot overlap itself)
    if "if " not in lower or "otherwise" not in lower and "else" not in lower and (
            lower.find("if ", lower.find("if ") + 1) < 0):
        return []
    for word in _BRANCH_WORDS:
        i = lower.find(word)
        while i >= 0:
            j = i + len(word)
            if (i == 0 or not lower[i - 1].isalnum()) and (j == len(lower) or not lower[j].isalnum()) and (
                    _BRANCH_LEAD_RE.search(lower, max(0, i - 8), i) is not None):
                at.append((i, word))
            i = lower.find(word, j)
    at.sort()
    while at and at[0][1] != "if":
        at.pop(0)
    if len(at) < 2:
        return []
    ends = [start for start, _ in at[1:]] + [len(lower)]
    branches = [(start, min(end, start + BRANCH_REACH)) for (start, _), end in zip(at, ends, strict=True)]
    # one conditional: branches that follow each other closely ("If X, A; if Y, B"), not two far-apart "if"s
    close = all(branches[i + 1][0] - branches[i][0] <= BRANCH_REACH for i in range(len(branches) - 1))
    return branches if close else []


def _conditional_hedge(grader: Callable[[PaperMatcher, Response], Verdict], m: PaperMatcher, r: Response,
                       verdict: Verdict) -> Verdict:
    """``verdict`` (correct or wrong), or hedged when the response gives its answers under conditions
    (:func:`_conditional_branches`) and one branch alone is correct while another alone gives another answer
    (wrong, or itself hedged): "If the list is alphabetical, Chen; otherwise Mikolov" offers two first authors.
    Each branch is graded on its own text; only responses with two branch words that open clauses get here."""
    branches = _conditional_branches(r)
    if not branches:
        return verdict
    text, right, other = r.text, False, False
    for start, end in branches:
        part = grader(m, Response(text[start:end], r.raw, r.echoed, r.truncated))
        right = right or part[0] == 1.0
        other = other or bool(part[1]) and part[0] in (0.0, HEDGED_CREDIT)
    if right and other:
        return HEDGED_CREDIT, 1.0, ("the right answer is given under one condition and another answer under "
                                    "another (\"if ..., A; otherwise B\"); commit to one answer")
    return verdict


GRADERS: dict[str, Callable[[PaperMatcher, Response], Verdict]] = {
    "id": grade_id, "title": grade_title, "author": grade_author, "year": grade_year,
}

__all__ = ["CONCISE_CHARS", "GRADERS", "HEDGED_CREDIT", "MAX_CHARS", "PARTIAL_TITLE_MIN_SHARE",
           "PARTIAL_TITLE_WEIGHT", "Verdict", "committed_or_hedged", "conciseness", "grade_author", "grade_committed",
           "grade_id",
           "grade_title", "grade_year", "no_answer"]
