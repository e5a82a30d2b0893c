"""Reading a response: what it offers as an answer, and what it only mentions, echoes, refuses or retracts.

The rules (each grader in :mod:`verifiers.arxiv.grading` builds on them):

* **Echoes.** A copy of the task's own question or rubric (case and spacing ignored) is not an answer and is
  removed before grading.
* **Refusals.** A refusal clause ("I'm sorry, I can't browse arXiv", "I don't know") is removed from the start
  of its sentence to the end of it, or up to a contrast word ("but", "however", "my best guess") after which
  the response may still commit to an answer.  Numbers labelled as metadata (a request, ticket or error id, an
  HTTP status, a knowledge cut-off, "as of 2023") are never answers, nor are numbers given as an example of a
  format ("e.g. 2101.00001", "such as 2019"), a copyright line ("© 2023") or in a rule of the ID scheme ("IDs
  after April 2007 use ..."): only a number offered as the answer counts.
* **Negations and corrections.** A candidate is retracted, and does not count, when a negator governs it
  ("not A", "isn't A", "rather than A", "instead of A"), a correction follows it ("A? No - B", "A, or rather
  B", "A, sorry, B", "A - actually no, B", "A (no, B)", "A is wrong", "A, but that is wrong").  A candidate
  followed by a restatement ("A. Actually, it's B", "at first I thought A, but it is B", "I wrote A earlier;
  the correct answer is B") is superseded, and does not count either, when another candidate of the same
  kind starts right after it (within ``RESTATE_REACH`` characters).  For authors also a role other than
  first ("A is the second author").
* **Hedging.** Candidates joined by an alternation ("A or B", "A / B", "A, maybe B") or listed as items of a
  list are offered together.  A record's labelled fields ("Title: ...", "| First author | ... |") each offer
  a value of their own field only (:func:`item_offers` with the graded kind, :func:`table_row`).
  A list item (or a line of a response of short lines) that reads as a sentence
  of prose offers no other candidate: "Generative Adversarial Networks" then "It introduced GANs." is one
  title and a remark on it (see :func:`prose_line`).

* **Retractions and concessions** (the whole response).  What follows the last retraction of everything
  before it ("Final answer:", "scratch that", "no wait", "I meant", "on second thought", "the correct answer
  is": :data:`RETRACT_ALL_RE`) is what the response commits to, and so is the claim after a concession ("You
  might see A cited, but the answer is C", "Some say A; in fact C", "Neither A nor B - it's C":
  :data:`CONCESSION_RE`, :data:`CLAIM_AFTER_RE`): :func:`committed_part` blanks the rest, and the graders grade
  that part first (the whole response when it offers no answer).
* **Uncertainty and refusal.**  A comma ends a refusal clause ("I don't know exactly, A or B" offers A and B),
  and a comma or a dash before it starts it ("A or B — I can't verify which" offers A and B).
  In a response that refuses, a title or a name counts only where it is offered as the answer
  (:func:`offered_as_answer`), not in background prose after the refusal.
* **Layouts.**  :func:`one_item_per_line` puts the items of an inline enumeration, repeated XML elements and the
  values of a JSON array of one answer on lines of their own, so the list rules read them as items.
* **Placeholders** of a template ("[TITLE]", "<author>", "XXXX.XXXXX", "20XX") are blanked
  (:func:`placeholder_spans`): they offer nothing.
* **Normalisation** (:func:`prepare`): invisible characters, look-alike letters and odd whitespace are read away
  first (:func:`verifiers.arxiv.normalise.unconfuse`, :func:`verifiers.arxiv.normalise.squeeze_spaces`).

Candidates are found with precompiled regular expressions; every helper takes the prepared text and
character offsets into it.  The work is linear in the text: patterns are tried only where a key substring
occurs, within windows around candidates, and no quoted span holds its own opening quote.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import ahocorasick_rs

from verifiers.arxiv.normalise import (
    DISCOURSE_WORDS,
    FUNCTION_WORDS,
    NON_CONTENT_WORDS,
    NON_NAME_WORDS,
    fold,
    squash,
    squeeze_spaces,
    strip_markup,
    unbrace_bibtex,
    unconfuse,
)
from verifiers.arxiv.papers import PAPERS, Paper

#: Only this many leading characters are searched for an answer (bounds the work on huge outputs).
MAX_GRADED_CHARS = 200_000

# ------------------------------------------------------------------------------------------- IDs and years

#: An arXiv identifier, base ``YYMM.NNNN(N)`` in group 1, optional ``vN``; not part of a longer number.
ID_RE = re.compile(
    r"(?<![0-9])(?<![0-9]\.)([0-9]{2}(?:0[1-9]|1[0-2])\.[0-9]{4,5})(?:v[0-9]+)?(?![0-9])(?!\.[0-9])"
)
_MONTH_OR_DAY = r"(?:0?[1-9]|[12][0-9]|3[01])"
#: A year (group 1, 2 or 3): a whole-word ``19xx``/``20xx``, or the year of a date written with dots, slashes
#: or hyphens (``2017.06.12``, ``2017/06/12``, ``12.06.2017``, ``06/12/2017``, ``2017-06-12``) or of a month and
#: year (``06.2017``, ``06/2017``: the month first, as European and US forms both write it).  Other dotted
#: numbers (an arXiv ID like 2005.14165, a version 3.11.2) and numbers of three or more hyphenated groups that
#: are no date (a phone number 1-800-555-2017) are skipped whole; the skip branches are possessive, so linear on
#: long digit runs.
YEAR_RE = re.compile(
    r"(?<![0-9.])((?:19|20)[0-9]{2})([./-])(?:0?[1-9]|1[0-2])\2" + _MONTH_OR_DAY + r"(?![0-9]|[./-][0-9])"
    r"|(?<![0-9.])" + _MONTH_OR_DAY + r"([./-])" + _MONTH_OR_DAY + r"\3((?:19|20)[0-9]{2})(?![0-9]|[./-][0-9])"
    r"|(?<![0-9.])(?:0?[1-9]|1[0-2])[./-]((?:19|20)[0-9]{2})(?![0-9]|[./-][0-9])"
    r"|(?<![0-9])[0-9]++(?:\.[0-9]++)++(?:v[0-9]+)?"
    r"|(?<![0-9])[0-9]++(?:-[0-9]++){2,}+"
    r"|(?<![0-9A-Za-z_])((?:19|20)[0-9]{2})(?![0-9A-Za-z_])"
)


def year_of(match: re.Match[str]) -> str | None:
    """The year a :data:`YEAR_RE` match found, or ``None`` for a skipped dotted number."""
    return match.group(1) or match.group(4) or match.group(5) or match.group(6)


# ------------------------------------------------------------------------------------- refusals and metadata

#: "I don't know" in other languages (Spanish, French, German, Italian, Portuguese, Dutch, Polish, Swedish,
#: Norwegian/Danish, Turkish, Russian), whole words ...
_FOREIGN_REFUSALS = (
    r"|no\s+(?:lo\s+)?s[ée]|je\s+ne\s+(?:le\s+)?sais\s+pas|aucune\s+id[ée]e|ich\s+wei(?:ß|ss)\s+(?:es\s+|das\s+)?nicht"
    r"|wei(?:ß|ss)\s+ich\s+nicht|keine\s+ahnung|non\s+(?:lo\s+)?so|n[ãa]o\s+(?:sei|fa[çc]o\s+ideia)"
    r"|(?:ik\s+)?weet\s+(?:het\s+|ik\s+)?niet|nie\s+wiem|vet\s+inte|(?:vet|ved)\s+ikke|bilmiyorum|не\s+знаю"
)
#: ... and in scripts without spaces between words (Chinese, Japanese, Korean, Hindi, Arabic), anywhere.
_FOREIGN_REFUSALS_UNSPACED = r"|不知道|不清楚|(?:わ|分)かりません|知りません|모르겠|모릅니다|몰라|नहीं\s+पता|لا\s+أعرف"
#: First-person refusals and stock non-answers (a clause containing one is not an answer; a tool's failure, "Request
#: timed out", "No result.", "cannot retrieve this", included), in English and, for "I don't know", in other
#: languages.
REFUSAL_RE = re.compile(
    r"\b(?:i\s+(?:do\s*n[o’']?t|don[’']?t|cannot|can[’']?t|can\s+not|could\s*n[o’']?t|am\s+not\s+able\s+to"
    r"|am\s+unable\s+to|have\s+no|won[’']?t|will\s+not)\s+(?:know|recall|remember|have|access|find|determine"
    r"|verify|say|tell|provide|answer|help|browse|look|confirm|idea|information|way|guess|speculate|share|give)"
    r"|no\s+idea|i[’']?m\s+(?:sorry|afraid|unable|not\s+able)|i\s+am\s+(?:sorry|afraid"
    r"|unable|not\s+able)|sorry,?\s+(?:but\s+)?i\b(?!\.|\s+(?:mean|meant|misspoke|was\s+wrong))"  # "sorry, I mean B",
    # (not "sorry, I. Goodfellow": an initial)
    r"|as\s+an\s+ai|as\s+a\s+(?:large\s+)?language\s+model"
    r"|(?:cannot|can[’']?t|can\s+not|unable\s+to|could\s*n[o’']?t|not\s+able\s+to)\s+(?:determine|find|recall"
    r"|verify|answer|provide|say|confirm|access|browse|look|help|tell|share|give|know|remember|retrieve|fetch)"
    r"|(?:beyond|outside)\s+my\s+(?:knowledge|training)|(?:do|does)\s*n[o’']?t\s+have\s+access"
    r"|(?:request|query|call|connection|lookup|search)\s+timed\s+out|no\s+results?(?:\s+(?:found|returned)|(?=\s*(?:[.!]|$)))"
    + _FOREIGN_REFUSALS + r")\b" + _FOREIGN_REFUSALS_UNSPACED,
    re.IGNORECASE,
)
#: Cheap necessary condition for REFUSAL_RE (substrings of the lower-cased text); the ones common in prose
#: first, so that the test on a long response stops early.
#: Spaced keys come with a line-break twin: :func:`prepare` reads every whitespace run as one space or one line
#: break (:func:`verifiers.arxiv.normalise.squeeze_spaces`), so "I dont\tknow" holds "ont ".
#: A negation without its apostrophe ("dont", "cant", "wont", "couldnt", "doesnt", "do nt") is keyed by its last
#: three characters: "nt " alone would also key every "different " and "recent " of a long answer.
#: Likewise "no idea" keys that phrase, where "idea" would key every "the core idea" too.
_REFUSAL_KEYS: tuple[str, ...] = ("not", "ont ", "ant ", "dnt ", "snt ", " nt ", "\nnt ", "n't", "n’t", "my ", "as a",
                                  "unable", "no idea", "sorry", "afraid", "have no", "timed", "no result", "no\nresult",
                                  "ont\n", "ant\n", "dnt\n",
                                  "snt\n", " nt\n", "\nnt\n", "my\n", "as\na", "no\nidea", "have\nno",
                                  # other languages (_FOREIGN_REFUSALS)
                                  "no s", "no\ns", "lo s", "lo\ns", "ideia", "sais", "aucune", "weiß", "weiss",
                                  "ahnung", "non", "sei", "weet", "wiem", "vet inte", "vet\ninte", "ikke", "bilmiyorum",
                                  "знаю", "不知道",
                                  "不清楚", "かりません", "知りません", "모르겠", "모릅니다", "몰라", "पता", "أعرف")
#: After a refusal phrase, the response may still commit: the part from one of these words on is kept.
CONTRAST_RE = re.compile(
    r"\b(?:but|however|though|although|yet|still|that\s+said|nevertheless|nonetheless|my\s+(?:best\s+)?guess"
    r"|i\s+(?:think|believe|suspect)|it\s+(?:might|may|could|should|would)\s+be|maybe|perhaps|possibly"
    r"|probably|likely)\b|\s[—–-]\s",  # a dash between spaces: "I don't know for certain — A or B"
    re.IGNORECASE,
)
#: Clause ends for refusals: sentence punctuation (.!?:) before a space or the end, semicolons, line breaks.
_SENTENCE_STOPS = ".!?:"
_CLAUSE_STOPS = ";\n"


def _part_start(text: str, lo: int, start: int) -> int:
    """Where the part of ``text`` holding ``start`` begins: after the last semicolon or line break before it
    (not before ``lo``).  Every clause lies inside its part."""
    best = lo
    for stop in _CLAUSE_STOPS:
        best = max(best, text.rfind(stop, lo, start) + 1)
    return best


def _part_end(text: str, end: int, hi: int) -> int:
    """Where the part of ``text`` holding ``end`` ends: at the first semicolon or line break after it (not after
    ``hi``)."""
    best = hi
    for stop in _CLAUSE_STOPS:
        i = text.find(stop, end, best)
        best = i if i >= 0 else best
    return best


def _clause_start(text: str, lo: int, start: int) -> int:
    """Where the clause holding ``start`` begins, given its part's start ``lo`` (:func:`_part_start`)."""
    if start <= lo:  # an empty range holds no stop
        return lo
    best = lo
    for stop in _SENTENCE_STOPS:
        i = text.rfind(stop, best, start)
        while i >= 0 and i + 1 < len(text) and not text[i + 1].isspace():  # "1706.03762", "e.g" inside
            i = text.rfind(stop, best, i)
        best = max(best, i + 1)
    return best


def _clause_end(text: str, end: int, hi: int) -> int:
    """Where the clause holding ``end`` ends, given its part's end ``hi`` (:func:`_part_end`)."""
    if end >= hi:  # an empty range holds no stop
        return hi
    best = hi
    for stop in _SENTENCE_STOPS:
        i = text.find(stop, end, best)
        while i >= 0 and i + 1 < len(text) and not text[i + 1].isspace():
            i = text.find(stop, i + 1, best)
        best = i if i >= 0 else best
    return best


_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december"
           "|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec")
#: The labels that make a number metadata, never an answer: an example of a format ("e.g.", "for example", "such
#: as", "in the format", "years like"), a copyright line ("Copyright 2014", "© 2023"), an HTTP status, a rule of the
#: ID scheme ("IDs after April 2007 use ..."), a request/reference/ticket/error/session/trace id or code, a document's
#: revision ("rev. 2018"), a knowledge or training cut-off ("my knowledge ends in", "data up to", "documents uploaded
#: before"), an "as of" / "last updated" date, a phone number ("call",
#: "dial", "tel"), a downtime ("maintenance until").  One list for two scopes: right before the number
#: (:data:`METADATA_BEFORE_RE`) and anywhere before it inside an open bracket (:data:`METADATA_IN_BRACKET_RE`).
_METADATA_LABEL = (
    r"(?:©|\(c\)|\b(?:(?:e\.\s?g\b\.?|eg\.|for\s+(?:example|instance)|such\s+as|examples?),?|copyright|http(?=\s)|status(?:\s+code)?"
    r"|(?:format|pattern)\s+(?:like|of)|timestamp|(?:ids|identifiers|numbers|an?\s+(?:arxiv\s+)?(?:id|identifier))"
    r"\s+(?:\w+\s+)?looks?\s+like|(?:years?|dates?)\s+(?:\w+\s+)?(?:looks?\s+)?like|rev\.|revision"
    r"|(?:uploaded|added|indexed|ingested)\s+(?:before|after|until|since|prior\s+to)"
    r"|(?:the\s+)?(?:format|pattern|form)(?:\s+is)?"
    r"|(?:arxiv\s+)?(?:ids?|identifiers?|numbers?)\s+(?:(?:issued|assigned|created|submitted|given)\s+)?"
    r"(?:after|since|before|from|until|prior\s+to|starting(?:\s+in)?|through)"
    r"|knowledge\s+cut[\s-]?off|cut[\s-]?off(?:\s+date)?|training\s+(?:data|cut[\s-]?off)"
    r"|trained\s+(?:on\s+data\s+)?(?:up\s+to|until|through)|as\s+of|(?:last\s+)?updated|try\s+again|retry"
    r"|request(?:\s+id)?|ref(?:erence)?(?:\s+(?:id|number|no\.?|code))?|ticket|error(?:\s+code)?|code|session(?:\s+id)?"
    r"|data\s+(?:up\s+to|until|through|ending)|maintenance|offline|outage|unavailable|suspended"
    r"|trace(?:\s+id)?|incident|case\s+(?:id|number|no\.?)"
    r"|my\s+(?:knowledge|information|data|training(?:\s+data)?)\s+(?:ends?|ended|stops?|stopped|extends|goes"
    r"|runs|only|is\s+(?:limited|current|up|until)|was\s+last|cut[\s-]?off)"
    r"|last\s+update[sd]?"
    r"|call|dial|phone|telephone|tel|fax|contact|hotline|extension|ext))"
)
#: A label of ``_METADATA_LABEL`` right before a number: searched in the window before a candidate number (``$`` is
#: the candidate's start); the label may be followed by a few linking words and by the start of the same token
#: ("request id 7f3a-2019").
METADATA_BEFORE_RE = re.compile(
    _METADATA_LABEL +
    r"(?:\s*(?:(?:is|was|of|in|at|on|around|date|id|number|no|code|case|after|up|to|until|through|ends?|ending|my|goes"
    r"|extends|runs|only|stops|" + _MONTHS + r"|early|late|mid)\b\.?|[:#=(]))*\s*[:#=(]?\s*[\w:/.-]*$",
    re.IGNORECASE,
)
#: A metadata label anywhere inside an open bracket before a date makes that date metadata ("(error 503,
#: 12/03/2021)", "[retrieved 03.04.2015]"): the labels of ``_METADATA_LABEL``, as whole words, and in a bracket only,
#: the date a source was retrieved ("retrieved", "accessed", "fetched", "cached", "logged"; right before a number
#: outside a bracket these read as the answer: "I fetched 1301.3781 from arXiv").
METADATA_IN_BRACKET_RE = re.compile(
    r"(?:" + _METADATA_LABEL + r"|\b(?:retrieved|accessed|fetched|cached|logged))(?![^\W_])", re.IGNORECASE)
_METADATA_KEYS: tuple[str, ...] = ("cut", "train", "as of", "updat", "request", "ref", "ticket", "error", "try",
                                   "as\nof", "my\n", "session", "trace", "incident", "case", "my ", "call", "dial",
                                   "phone", "tel",
                                   "fax", "contact", "hotline", "ext", "code", "data", "maint", "offline", "outage",
                                   "unavail", "suspend",
                                   # examples, copyright lines, status codes, rules of the ID scheme
                                   "e.g", "e. g", "eg.", "example", "instance", "such as", "such\nas", "copyright", "©",
                                   "(c)", "http ", "http\n", "status", "format", "pattern", "the form", "ids",
                                   "identifier", "id after", "id since", "id before", "id from", "id until",
                                   "id prior", "id starting", "id through", "timestamp", "like", "number after",
                                   "number since", "number before", "number from", "numbers after", "numbers since",
                                   "numbers before", "numbers from", "rev", "upload", "added", "index", "ingest")
#: After a number, what makes it part of a rule of the ID scheme, not an answer: "Since 2015, arXiv IDs have
#: five digits", "2007 onwards, identifiers use YYMM.NNNNN".
_ID_RULE_AFTER_RE = re.compile(
    r"[\s,)]*(?:(?:on(?:wards?)?|and\s+later|or\s+later)[\s,]*)?(?:(?:new|all|modern|arxiv|the)\s+)*"
    r"(?:ids|identifiers|id\s+numbers|numbers)\s+(?:\w+\s+)?(?:have|has|use|uses|are|follow|take|consist|contain"
    r"|look|carry|got|switched|changed)\b")


def id_rule_after(lower: str, end: int) -> bool:
    """Whether the number ending at ``end`` opens a rule of the ID scheme (``_ID_RULE_AFTER_RE``), read in the
    lower-cased text; a substring test on the 40 characters after it first."""
    window = lower[end:end + 40]
    return ("ids" in window or "identifiers" in window or "numbers" in window) and _ID_RULE_AFTER_RE.match(
        lower, end, end + 60) is not None


#: How far before a candidate a metadata label, and around it a refusal clause, is looked for.
METADATA_WINDOW = 60
CLAUSE_WINDOW = 300

# ----------------------------------------------------------------------------------- negations, corrections

#: The cross marks that reject what follows them ("❌ A": a checklist's verdict).
_CROSS_MARKS: tuple[str, ...] = ("❌", "✗", "✘", "✖")
_CROSS_MARK_CLASS = "[" + "".join(_CROSS_MARKS) + "]"
#: A list item's marker: a bullet or a number with its full stop or bracket ("-", "•", "2.", "3)").
LIST_ITEM = r"(?:[-*•+]|[0-9]{1,2}[.)])"

#: A negator governing what follows it (up to three linking words and an opening quote); "forget A", "ignore A",
#: "disregard A" and every other imperative of rejection ("Scratch A.", "drop A", "rule out A"; not "scratch that",
#: which retracts what came before) reject A as "not A" does ("don't forget A" does not), and so does a negated
#: choice ("don't go with A", "do not use A", "I wouldn't say A").  An account of an answer given up
#: rejects it too: "I used to think A", "I retract A", "Wrong: A" (a line label), struck text ("<s>A</s>", "~~A~~"),
#: a cross mark before it ("❌ A", "✗ A": a checklist's verdict, as a "✅ B" beside it is the one kept).
NEGATION_BEFORE_RE = re.compile(
    r"(?:(?<!\bif\s)\bnot|n[’']t|\bnever|\bno\s+longer|\brather\s+than|\binstead\s+of|\bas\s+opposed\s+to|\bother\s+than"
    r"|\bunlike|\bexcept(?:\s+for)?|\bneither|\bnor|(?<!n[’']t\s)(?<!never\s)\bforget(?:\s+about)?|\bdisregard"
    r"|\bignore|\bused\s+to\s+(?:think|believe)|\bretract(?:ing)?|\bwithdraw(?:ing)?"
    r"|\b(?:s(?:cratch(?!\s+(?:that|this)\b)|trike(?!\s+that\b))|d(?:rop|iscard|ismiss)|reject|(?:cross|rule)\s+out)"
    r"|(?<![^\n])[ \t*_#>-]*(?:wrong|incorrect):)\s+"
    r"(?:(?:the|a|an|quite|exactly|just|really|simply|necessarily|year|in|from"
    r"|by|id|identifier|title|author|paper|arxiv|called|titled|named|written|submitted|published|it|that"
    r"|go|going|with|pick|choose|use|select|answer|say|put|trust|accept|submit|cite|mean)"
    r"[\s:]+){0,3}[\"“‘'`*_(\[]*$"
    r"|(?:<(?:s|del|strike)>|~~|" + _CROSS_MARK_CLASS + r"\ufe0f?[ \t:]*)[\"“‘'`*_(\[]*$",
    re.IGNORECASE,
)
#: A correction right after a candidate ("? No -", ", or rather", ", sorry,", " is wrong", "wait"); "A (no, not B)"
#: rejects B, not A ("A (no, B)" corrects A).  The leading
#: run of punctuation and spaces is possessive (as in SUPERSEDE_AFTER_RE): every branch after it starts with a
#: letter, which the run cannot hold, so giving characters back never helps a match; it only cost retries.
CORRECTION_AFTER_RE = re.compile(
    r"[\s\"”’'`*_()\[\].,;:!?…—–-]*+(?:(?:actually|hmm+|oh|uh|um|er|well)\s*[,.;:!?…—–-]*\s*)?"
    r"(?:(?<!\()(?<!\(\s)no\s*[,.;:!?—–-]|no\s*[,.;:!?—–-](?!\s*not\b)|no\s+wait\b|nope\b|wait\b"
    r"|correction\b(?![\s:,—–-]*not\b)"
    r"|scratch\s+that|make\s+that|i\s+was\s+wrong"
    r"|was\s+my\s+(?:first|initial|original|earlier|previous|old)\s+(?:guess|answer|thought|idea)"
    r"|(?:it|this|that)\s+(?:does\s+not|doesn[’']t|did\s+not|didn[’']t)\s+(?:match|fit|apply)\b"
    r"|i\s+stand\s+corrected"
    r"|strike\s+that|or\s+rather\b|rather\s*[,:]|i\s+mean[t]?\b|(?:sorry|oops|my\s+(?:mistake|bad))\s*[,.;:!—–-]"
    r"|(?:(?:but|and)\s+)?(?:that[’']?s|that\s+is|this\s+is|is|was|would\s+be)\s+(?:wrong|incorrect|a\s+mistake"
    r"|not\s+(?:right|correct|it\b|the\s+(?:one|answer|paper)\b)"
    r"|(?:(?:the\s+)?\w+\s+(?:of|for|from)\s+)?(?:(?:a|an|some)\s+(?:different|other|unrelated|separate)|another)\s+"
    r"(?:paper|work|article|preprint|one)\b))",
    re.IGNORECASE,
)
#: A restatement right after a candidate ("A. Actually, it's B", "A, but it is B"): the candidate is superseded
#: only when a later candidate of the same kind follows (see :func:`superseded`), since "A. Actually,
#: it's a famous paper" still answers A.
SUPERSEDE_AFTER_RE = re.compile(
    r"[\s\"”’'`*_()\[\].,;:!?…—–-]*+(?:(?:earlier|before|above|previously)[\s.,;:!—–-]*)?"
    r"(?:(?:hmm+|oh|um+|uh|well|wait|ok|okay|no)[\s.,;:!…—–-]+)?"
    r"(?:(?:(?:actually|in\s+fact|but|however|rather)\s*[,:—–-]?\s*){1,2}"
    r"(?:it[’']?s|it\s+(?:is|was)|that[’']?s|that\s+(?:is|was)|the\s+(?:\w+\s+){0,2}(?:is|was)|i\s+(?:think|believe)"
    r"(?:\s+it[’']?s|\s+it\s+(?:is|was))?)"
    r"|the\s+(?:correct|right|actual|real|true)\s+(?:\w+\s+){0,2}(?:is|was)"
    r"|(?:it[’']?s|it\s+(?:is|was)|that[’']?s)\s+(?:actually|in\s+fact))\b",
    re.IGNORECASE,
)
#: Looked at on either side of a candidate.
WINDOW = 48


def lower_case_twin(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` compiled without ``re.IGNORECASE``, to run on the lower-cased text of an ASCII response.

    On ASCII text both find the same spans: A-Z are its only cased characters, lower-casing maps them onto a-z
    and moves no character out of its class (``\\w``, ``\\s``, punctuation), and every letter the pattern spells
    is lower case (checked here).  Matching case-sensitively skips the case folding of every comparison, which
    makes these patterns 2-10x faster.

    Raises:
        ValueError: when ``pattern`` spells an upper-case letter (outside an escape such as ``\\S``).
    """
    if re.search(r"[A-Z]", re.sub(r"\\.", "", pattern.pattern)):
        raise ValueError(f"no lower-case twin for a pattern that spells upper-case letters: {pattern.pattern!r}")
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


class CaseFree:
    """A case-insensitive pattern, run on a :class:`Response` the fast way: its lower-case twin on ``r.lower``
    when the response is ASCII (see :func:`lower_case_twin`), the pattern itself on ``r.text`` otherwise.
    Match offsets are offsets into ``r.text`` either way; use only offsets, not matched text."""

    __slots__ = ("pattern", "twin")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.twin = lower_case_twin(pattern)

    def search(self, r: Response, pos: int, endpos: int) -> re.Match[str] | None:
        """``pattern.search(r.text, pos, endpos)``, by the fast way."""
        return self.twin.search(r.lower, pos, endpos) if r.ascii else self.pattern.search(r.text, pos, endpos)

    def match(self, r: Response, pos: int, endpos: int) -> re.Match[str] | None:
        """``pattern.match(r.text, pos, endpos)``, by the fast way."""
        return self.twin.match(r.lower, pos, endpos) if r.ascii else self.pattern.match(r.text, pos, endpos)

    def finditer(self, r: Response, pos: int, endpos: int) -> Iterator[re.Match[str]]:
        """``pattern.finditer(r.text, pos, endpos)``, by the fast way."""
        return self.twin.finditer(r.lower, pos, endpos) if r.ascii else self.pattern.finditer(r.text, pos, endpos)


_REFUSAL = CaseFree(REFUSAL_RE)
_CONTRAST = CaseFree(CONTRAST_RE)
_METADATA_BEFORE = CaseFree(METADATA_BEFORE_RE)
_NEGATION_BEFORE = CaseFree(NEGATION_BEFORE_RE)
_CORRECTION_AFTER = CaseFree(CORRECTION_AFTER_RE)
_SUPERSEDE_AFTER = CaseFree(SUPERSEDE_AFTER_RE)


#: Cheap necessary condition for NEGATION_BEFORE_RE (substrings of the lower-cased window).
_NEGATION_KEYS: tuple[str, ...] = ("not", "n't", "n’t", "never", "longer", "rather", "instead", "oppos",
                                   "other than", "other\nthan", "unlike", "except", "neither", "nor", "forget",
                                   "disregard", "ignore", "used", "retract", "withdr", "wrong:", "incorrect:", "<s>",
                                   "<del>", "<strike>", "~~", "scratch", "strike", "drop", "discard", "dismiss",
                                   "reject", "cross out", "rule out")


def contains_any(keys: Iterable[str]) -> Callable[[str], bool]:
    """A function telling whether one of ``keys`` occurs in a string (case-sensitive): ``k1 in s or k2 in s or
    ...``, generated from the table, so that each key costs one ``in`` (about half of what
    ``any(map(s.__contains__, keys))`` costs, and a third of a regular expression's search for them)."""
    code = " or ".join(f"{key!r} in s" for key in keys) or "False"
    return eval(f"lambda s: {code}")  # noqa: S307 - the keys are this package's constants, repr-quoted


#: The ASCII characters of a word: what ``c.isalnum() or c == "_"`` accepts among them.
_ASCII_WORD_CHARS = frozenset(c for c in map(chr, range(128)) if c.isalnum() or c == "_")


class KeyHits:
    """Where the keys of one group of a :class:`KeyTable` occur in a text (every occurrence, overlapping ones
    too; character offsets).  True when a key of the group occurs; each view is built on first use."""

    __slots__ = ("_all", "_members", "_keys", "_found", "_spans", "_word_starts")

    def __init__(self, found: list[tuple[int, int, int]], members: frozenset[int], keys: tuple[str, ...]) -> None:
        # (key index, start, end) of every key of the table, as the automaton reports them (by their ends)
        self._all, self._members, self._keys = found, members, keys
        self._found: list[tuple[int, int, int]] | None = None if found else found
        self._spans: list[tuple[int, int]] | None = None
        self._word_starts: list[int] | None = None

    def _mine(self) -> list[tuple[int, int, int]]:
        """The occurrences of this group's keys: ``(key index, start, end)``."""
        if self._found is None:
            members = self._members
            self._found = [h for h in self._all if h[0] in members]
        return self._found

    def __bool__(self) -> bool:
        # A KeyHits holding any occurrence is built only for a group one of whose keys occurs (KeyTable.scan), so
        # whether the table found anything tells it, without filtering the occurrences by group.
        return bool(self._all)

    @property
    def spans(self) -> list[tuple[int, int]]:
        """``(start, end)`` of every occurrence of every key of the group, sorted."""
        if self._spans is None:
            self._spans = sorted([(s, e) for _, s, e in self._mine()])
        return self._spans

    def within(self, lo: int, hi: int) -> bool:
        """Whether a key occurs inside ``text[lo:hi]`` (what ``key in text[lo:hi]`` tells, for all the keys at
        once: a bisection instead of a scan per key)."""
        spans = self.spans
        i = bisect_left(spans, (lo, -1))
        while i < len(spans) and spans[i][0] < hi:
            if spans[i][1] <= hi:
                return True
            i += 1
        return False

    def word_starts(self, lower: str) -> list[int]:
        """The distinct starts of the occurrences that open a word of ``lower`` (the text scanned: no letter,
        digit or underscore before), ascending; read once."""
        found = self._word_starts
        if found is None:  # from the occurrences themselves: no sorted list of spans built for it
            if lower.isascii():  # one set look-up per occurrence instead of two string methods
                found = sorted({s for _, s, _ in self._mine() if s == 0 or lower[s - 1] not in _ASCII_WORD_CHARS})
            else:
                found = sorted({s for _, s, _ in self._mine() if s == 0 or not (
                    lower[s - 1].isalnum() or lower[s - 1] == "_")})
            self._word_starts = found
        return found

    def occurrences(self, keys: Iterable[str]) -> list[tuple[int, int]]:
        """``(start, end)`` of the occurrences of ``keys``, key by key, each key's in order, an occurrence inside
        the key's previous one skipped (what a loop of ``find(key, i + len(key))`` visits)."""
        by_key: dict[str, list[int]] = {}
        names = self._keys
        for k, s, _ in self._mine():  # a key's occurrences come by their ends, so by their starts
            key = names[k]
            starts = by_key.get(key)
            if starts is None:
                by_key[key] = [s]
            else:
                starts.append(s)
        out: list[tuple[int, int]] = []
        order = _key_order(keys) if keys.__class__ is tuple else None
        # the keys that occur (a few), in the order of ``keys``, instead of a look-up per key of ``keys`` (dozens)
        visit = keys if order is None else sorted([k for k in by_key if k in order], key=order.__getitem__)
        for key in visit:
            starts = by_key.get(key)
            if starts:
                after, size = -1, len(key)
                for s in starts:
                    if s >= after:
                        out.append((s, s + size))
                        after = s + size
        return out


#: Per tuple of keys (a module's constant), each key's place in it; ``None`` when a key is repeated.
_KEY_ORDERS: dict[tuple[str, ...], dict[str, int] | None] = {}


def _key_order(keys: tuple[str, ...]) -> dict[str, int] | None:
    """Each key's place in ``keys``, remembered per tuple; ``None`` when a key comes twice (then every key is
    visited in turn, as written)."""
    order = _KEY_ORDERS.get(keys, False)
    if order is False:
        order = {key: i for i, key in enumerate(keys)}
        order = _KEY_ORDERS[keys] = order if len(order) == len(keys) else None
    return order


def ascii_automaton(keys: Iterable[bytes]) -> ahocorasick_rs.BytesAhoCorasick:
    """An Aho-Corasick automaton of ``keys`` (byte strings), compiled to a DFA, reporting every occurrence
    (``find_matches_as_indexes(..., overlapping=True)`` gives ``(key index, start, end)`` triples) of a key in
    an ASCII text's bytes."""
    return ahocorasick_rs.BytesAhoCorasick(list(keys), matchkind=ahocorasick_rs.MatchKind.Standard,
                                           implementation=ahocorasick_rs.Implementation.DFA)


class KeyTable:
    """Groups of keys (lower-case substrings) whose occurrences in a text are all found in one pass of an
    Aho-Corasick automaton (``ahocorasick_rs``, compiled to a DFA, run on the text's bytes when it is ASCII):
    one scan of the text instead of one ``str.find`` scan per key, and only the keys that occur cost anything
    after it.  A response reads each table once (:meth:`Response.hits`), for every rule that uses its keys.
    Text outside ASCII (curly quotes, dashes, accented names) is read by the same automaton (see
    :meth:`_scan_other`).

    Attributes:
        groups: the key groups, as given.
    """

    __slots__ = ("groups", "_keys", "_ascii_ac", "_members", "_none", "_other", "_marked")

    def __init__(self, *groups: Iterable[str]) -> None:
        self.groups = tuple(tuple(dict.fromkeys(g)) for g in groups)
        keys = tuple(dict.fromkeys(k for g in self.groups for k in g))
        self._keys = keys
        #: per group, the indexes (in ``keys``) of its keys
        self._members = tuple(frozenset(i for i, k in enumerate(keys) if k in g) for g in self.groups)
        # non-ASCII keys never occur in ASCII text: two 0xff bytes (never in ASCII) in their place keep the numbering
        self._ascii_ac = ascii_automaton([k.encode() if k.isascii() else b"\xff\xff" for k in keys])
        #: the indexes of the keys outside ASCII, and of the ASCII keys holding "?" (see :meth:`_scan_other`)
        self._other = tuple(i for i, k in enumerate(keys) if not k.isascii())
        self._marked = frozenset(i for i, k in enumerate(keys) if k.isascii() and "?" in k)
        #: the hits of a text without any key (a third of the responses): one shared, never-changing tuple instead
        #: of a new object per group (their views are empty lists whatever the text)
        self._none = tuple([KeyHits([], members, keys) for members in self._members])

    def _scan_other(self, lower: str) -> list[tuple[int, int, int]]:
        """Every ``(key index, start, end)`` in ``lower``, a text that is not ASCII, ordered by key index, then
        start (what a ``str.find`` loop per key gives).  The ASCII keys are found by the automaton in the text with
        each other character encoded as one "?" byte: the byte offsets stay character offsets and an ASCII key
        occurs in the bytes exactly where it occurs in the text (a match of a key holding "?" is checked against
        the text).  The few other keys are found by ``str.find``.  A ``find`` per key was 1,300 scans of the text
        a grade (30 ms on a 50 KB answer)."""
        keys, other, marked = self._keys, self._other, self._marked
        found = self._ascii_ac.find_matches_as_indexes(lower.encode("ascii", "replace"), overlapping=True)
        if marked:
            found = [h for h in found if h[0] not in marked or lower.startswith(keys[h[0]], h[1])]
        for k in other:
            key = keys[k]
            i = lower.find(key)
            while i >= 0:
                found.append((k, i, i + len(key)))
                i = lower.find(key, i + 1)
        found.sort()
        return found

    def scan(self, lower: str) -> tuple[KeyHits, ...]:
        """The :class:`KeyHits` of each group in ``lower`` (a lower-cased text), in the groups' order."""
        if lower.isascii():
            found = self._ascii_ac.find_matches_as_indexes(lower.encode(), overlapping=True)
        else:
            found = self._scan_other(lower)
        if not found:
            return self._none
        # a group none of whose keys occurs shares its empty hits too (most responses hit a group or two)
        hit = {k for k, _, _ in found}
        return tuple([none if members.isdisjoint(hit) else KeyHits(found, members, self._keys)
                      for members, none in zip(self._members, self._none, strict=True)])


#: The cross marks are keys only where the text is not ASCII.
_has_negation_key_ascii = contains_any(_NEGATION_KEYS)
_has_negation_key = contains_any(_NEGATION_KEYS + _CROSS_MARKS)
_has_metadata_key = contains_any(_METADATA_KEYS)
#: Every match of ``REFUSAL_RE``'s lower-case twin in ASCII text starts at a word's start with one of these: the
#: first words of its alternatives ("i" before a space, an apostrophe or "m"); only there is it tried.
_REFUSAL_STARTS: tuple[str, ...] = tuple(f"i{c}" for c in " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f'm") + (
    "no", "sorry", "as", "can", "unable", "could", "beyond", "outside", "do", "je", "request", "query", "call",
    "connection", "lookup", "search", "aucune", "ich", "wei", "keine",
    "nao", "ik", "weet", "nie", "vet", "ved", "bilmiyorum")


def retracted(text: str, start: int, end: int) -> bool:
    """Whether the candidate at ``text[start:end]`` is negated or corrected (see the module docstring)."""
    lo = max(0, start - WINDOW)
    before = text[lo:start].lower()
    if _has_negation_key(before) and NEGATION_BEFORE_RE.search(text, lo, start):
        return True
    return CORRECTION_AFTER_RE.match(text, end, end + WINDOW) is not None


#: An alternation right after a candidate (after a short bracket: "A (first guess) / B"): "A or B", "A. Or B", "A
#: and/or B", "A / B", "A, maybe B", "A vs. B", "A — or maybe B", "A,
#: but it might be B", "A, though it could also be B", "A, though B is also possible", "A; alternatively, B",
#: "A. Another possibility is B", "A; it might instead be B"; the German and French "or" ("A oder B", "A ou B").
JOIN_AFTER_RE = re.compile(
    r"[\s\"”’'`*_)\]—–-]*(?:\([^()\n]{1,30}\)[ \t]*)?[,;.]?\s*[(\[]?\s*(?:(?:or|and/or|nor|oder|ou|vs(?!\.)|versus"
    r"|maybe|perhaps|possibly|alternatively|if\s+not"
    r"|otherwise|unless\b[^.;\n]{0,60}?\b(?:otherwise|in\s+which\s+case)|(?:it\s+)?(?:could|might|may)\s+(?:well\s+)?be)"
    r"\b,?|/|vs\.(?=\s)|\?[ \t]+(?=[^?\n]{1,60}\?)"
    r"|(?:but|though|although)\s+(?:it\s+|that\s+)?(?:might|may|could)\s+(?:also\s+|well\s+)?be\b"
    r"|(?:but|though|although)\s+(?:maybe|perhaps|possibly)\b"
    r"|[.;,]?\s*(?:i[’']?m\s+not\s+(?:fully\s+|entirely\s+|completely\s+)?(?:sure|certain)\s*[,;:—–-]?\s*)?"
    r"(?:another\s+(?:possibility|option|candidate)\s+(?:is|would\s+be)|(?:it\s+)?(?:might|may|could)\s+"
    r"(?:also|instead)\s+be)\b:?(?=\s*[\"“‘'`*_(\[]*(?-i:[A-Z0-9])))"
    r"\s*(?:(?:maybe|perhaps|possibly|probably|even)\s+)?[\"“‘'`*_(\[]*",
    re.IGNORECASE,
)
#: An alternation right before a candidate: "B or A", "either B or A", "B / A" (after an optional hedge word).
#: ("oder", "ou": the German and French "or", which join names in a sentence of those languages as "or" does.)
_JOINERS_BEFORE: tuple[str, ...] = ("or", "/", "nor", "either", "vs", "vs.", "versus", "oder", "ou")
_HEDGE_WORDS: tuple[str, ...] = ("maybe", "perhaps", "possibly", "probably", "even")
_OPENERS = " \t\"“‘'`*_(["


def joiner_before(text: str, start: int) -> int:
    """Where an alternation word right before ``start`` begins ("B or A", "B / maybe A"), or -1."""
    base = max(0, start - 40)
    head = text[base:start].rstrip(_OPENERS)
    lowered = head.lower()
    if lowered.endswith(_HEDGE_WORDS):  # one C call rules out the usual case (no hedge word, no joiner)
        for hedge in _HEDGE_WORDS:
            if lowered.endswith(hedge) and (len(lowered) == len(hedge) or not lowered[-len(hedge) - 1].isalnum()):
                lowered = lowered[: -len(hedge)].rstrip()
                break
    if not lowered.endswith(_JOINERS_BEFORE):
        return -1
    for joiner in _JOINERS_BEFORE:
        if lowered.endswith(joiner):
            at = len(lowered) - len(joiner)
            if joiner == "/" or at == 0 or not lowered[at - 1].isalnum():
                return base + at  # (not start - len(head): the openers stripped off head's end)
    return -1
#: Where a phrase after an alternation ends.
#: (The full stop of an initial, "Edward J. Hu", "Dean, J.", or of "et al." neither ends nor opens a phrase; a
#: spaced dash ends one: "A or B — I can't check".)
_PHRASE_END_RE = re.compile(
    r"(?<!\s(?-i:[A-Z]))(?<!^(?-i:[A-Z]))(?<!\bet\sal)\.|[;!?\n,()\[\]\"”“]|\s(?:or|and|but|which|that|is|was|by|[—–-])\s",
    re.IGNORECASE)
_PHRASE_START_RE = re.compile(
    r"(?<![\s.,](?-i:[A-Z]))(?<!\bet\sal)\.|[;!?\n,()\[\]\"”“:]|\b(?:either|one\s+of|is|was|it[’']?s|be)\s",
    re.IGNORECASE)

# ----------------------------------------------------------------------------------- title-like and names

_UPPER = "A-ZÀ-ÖØ-ÞĀ-ŽА-ЯΑ-Ω"
#: A capitalised word (``Attention``, ``BERT``, ``RoBERTa``, ``Self-Improving``, ``Few-Shot``) or a word that
#: starts with a digit and has a letter (``16x16``, ``2D``).
CAP_WORD = rf"(?:[{_UPPER}][^\W_]*+(?:['’-][^\W_]++)*+|[0-9]++[^\W\d_][^\W_]*+(?:-[^\W_]++)*+)"
#: Lower-case words a title keeps between capitalised ones ("Attention Is All You Need", "Worth 16x16 Words").
MINOR_WORD = r"(?:a|an|the|of|in|on|at|to|for|with|via|into|over|under|is|are|as|vs\.?|its|towards?)"
#: ``CAP_WORD`` not preceded by a word character, apostrophe or hyphen: ``(?<![\w'’-]){CAP_WORD}``, written to
#: start with a character class so that ``re`` skips to the next capital or digit in C (a leading lookbehind
#: makes it try every position: three times slower on a few KB of prose).  The lookbehind then checks the
#: character before the consumed first one, and the rest of the word follows by the kind of that first one.
_CAP_WORD_AT_START = (
    rf"[{_UPPER}0-9](?<![\w'’-][\s\S])"
    rf"(?:(?<=[0-9])[0-9]*+[^\W\d_][^\W_]*+(?:-[^\W_]++)*+|(?<=[{_UPPER}])[^\W_]*+(?:['’-][^\W_]++)*+)"
)
#: A title-case run: two or more capitalised words, joined by spaces (minor words allowed between), colons or
#: dashes; "by", "from", "and", "or" and commas end a run (they attribute, list or alternate).  Possessive
#: quantifiers and the lookbehind keep the scan linear (no backtracking into, or restarting inside, a word).
TITLE_RUN_RE = re.compile(rf"{_CAP_WORD_AT_START}(?:(?:\s+(?:{MINOR_WORD}\s+)*|\s*[:–—-]+\s*){CAP_WORD})+")
CAP_WORD_RE = re.compile(_CAP_WORD_AT_START)
#: The title is extended (so it names another paper) by what follows: a fused hyphen word, a subtitle after a
#: colon, or further capitalised words (minor words allowed between); "and" and one last capitalised word
#: ("... Understanding and Generation"); or, in lower case, a preposition and a content word ("... in speech
#: separation").
_EXTEND_AFTER_RE = re.compile(
    rf"(?:-(?=[^\W_])|[ \t]*:[ \t]*|[ \t]+)(?:{MINOR_WORD}[ \t]+)*(?:(?:A|An|The|On)[ \t]+)?({CAP_WORD})"
    r"|[ \t]+(?:in|for|of|with|on|via|to|at|without|beyond|under|through|across|towards?|from)[ \t]+"
    r"([^\W\d_][\w'’-]*)"
    rf"|[ \t]+and[ \t]+({CAP_WORD})(?=[ \t]*(?:[.,;:!?)\]\"”’'*_\n]|\Z))",
)
_CAP_WORD_FULL_RE = re.compile(CAP_WORD)
#: Prepositions that join more words onto a title ("... for Everyone", "... in Practice").
_TITLE_PREPOSITIONS = frozenset("in for of with on via to at without beyond under through across toward towards from"
                                .split())
_MINOR_WORDS = frozenset("a an the of in on at to for with via into over under is are as vs vs. its toward towards"
                         .split())


#: "vs." or "versus" between two titles sets one against the other as candidates ("A vs. B"), as "or" does: a
#: title that holds "vs." ("X vs. Y") is read as two candidates, since an answer names one paper.
_VERSUS = frozenset({"vs", "vs.", "versus"})
_VERSUS_AFTER_RE = re.compile(r"[ \t]+(?:vs\.?|versus)[ \t]", re.IGNORECASE)


def _between_before(text: str, start: int) -> bool:
    """Whether "between" (quotes and markup skipped) stands right before ``start``: the "and" after the title
    then joins the two things set against each other ("torn between A and B"), not a longer title's words."""
    return text[max(0, start - 16):start].rstrip(" \t\"“‘'*_").lower().endswith("between")


def _extended_before(text: str, start: int) -> bool:
    """Whether what precedes ``start`` extends a title: a fused prefix ("Self-"), or a capitalised word that is
    not filler, a citation word or a possessive, right before it (lower-case minor words and a colon between)."""
    head = text[max(0, start - 60):start]
    head = head[head.rfind("\n") + 1:]  # a title does not continue across a line break
    if not head:
        return False
    if head[-1] == "-":
        return len(head) > 1 and head[-2].isalnum()
    if not (head[-1].isspace() or head[-1] == ":"):
        return False
    if _OPTION_LABEL_RE.match(head) is not None:  # "Option B: A": a label of a candidate, not a title's start
        return False
    words = head.split()
    if len(words) == 1 and words[0][-1] == ":" and _LABEL_WORD_RE.fullmatch(words[0]) is not None:
        return False  # "Odpowiedź: A", "Svar: A": a label word alone before the title on its line, in any language
    for i in range(len(words) - 1, -1, -1):
        word = words[i]
        if i == len(words) - 1 and word.endswith(":"):
            word = word[:-1]
        if word in _MINOR_WORDS:
            if word in _VERSUS:
                return False  # "B vs. A": B is set against A, not part of its title
            continue
        if not _CAP_WORD_FULL_RE.fullmatch(word):
            return False
        lowered = word.lower()
        return lowered not in NON_NAME_WORDS and not lowered.endswith(("'s", "’s"))
    return False
#: A label word: one word, capitalised then lower case, and a colon, alone at its line's start before a title
#: ("Antwort:", "Odpowiedź:", "Відповідь:"): a lead-in in any language, not the start of a longer title.  A word
#: with a second capital or a digit ("BERT:", "LoRA:", "GPT-4:") is a method's name that a title opens with.
_LABEL_WORD_RE = re.compile(r"[*_]*[^\W\d_][^\W\d_A-Z\u0400-\u042f]{1,15}[*_]*:")
#: A label of one of several candidates, the whole of what stands before a title on its line ("Option B:",
#: "**Candidate 2** -", "Alternative:").
_OPTION_LABEL_RE = re.compile(r"[ \t*_#>-]*(?:option|candidate|alternative|choice|possibility)[ \t]*(?:[a-z0-9]{1,2})?"
                              r"[ \t*_]*[:.)—–-]?[ \t*_\"“‘']*\Z", re.IGNORECASE)
#: Quoted or emphasised spans (group 1..8): "..." “...” ‘...’ «...» `...` **...** *...* _..._ and '...'.  No
#: span holds its own opening quote, so a run of opening quotes is read in linear time (each one stops at the next).
QUOTED_RE = re.compile(
    r"\"([^\"\n]{2,300})\"|“([^“”\n]{2,300})”|‘([^‘’\n]{2,300})’|«([^«»\n]{2,300})»|`([^`\n]{2,300})`"
    r"|\*\*?([^*\n]{2,300}?)\*\*?|_(?<!\w_)([^_\n]{2,300})_(?![\w])|'(?<!\w')([^'\n]{2,300})'(?![\w])"
)  # every branch starts with a literal (the lookbehinds follow it), so ``re`` skips to the next quote in C
_QUOTE_CHARS = "\"“‘«`*_'"
_has_quote_char = contains_any(_QUOTE_CHARS)
#: A label before an answer ("Title:", "**Answer:**", "Option 2 -").
_LABEL_RE = re.compile(r"^[\s*_\"']*([^\W\d_][\w -]{0,20}?)[\s*_\"']*(?:[:：]|=[ \t]*\{?)[\s*_]*")
_TITLE_LABELS = frozenset({"title", "answer", "paper", "option", "candidate", "maybe", "possibly", "perhaps",
                           "exact title", "the title", "final answer", "author", "first author", "name"})
_WORD_RE = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
_LETTER_RE = re.compile(r"[^\W\d_]")
_WORD_PART_RE = re.compile(r"[0-9]+|[^\W\d_]+")
_GAP = r"[\W_]*"  # optional separator inside a hyphen-fused word: "pre-training" / "pre training"


def _has_content(words: Iterable[str]) -> bool:
    """Whether some word carries content: two characters or more, not a function, filler or meta word, and with
    a letter (not a number).  Stops at the first such word."""
    for w in words:
        # isalpha settles the usual word in one call: an all-letter word has a letter and is not a number
        if len(w) > 1 and w.lower() not in NON_CONTENT_WORDS and (
                w.isalpha() or not w.isdigit() and _LETTER_RE.search(w)):
            return True
    return False


def title_like(phrase: str) -> bool:
    """Whether ``phrase`` reads as a title: at least one word that is not a function, filler or meta word, and
    either two or more words or a capitalised word (a one-word lower-case phrase is not a title)."""
    words = _WORD_RE.findall(phrase)
    if not _has_content(words):
        return False
    return len(words) >= 2 or bool(CAP_WORD_RE.match(words[0]))


#: Subjects that open a remark about the paper, not a title: pronouns, demonstratives, indefinite subjects.
_PROSE_SUBJECTS = frozenset("it this that these those he she they there here everyone everybody nobody someone "
                            "somebody anyone anybody many".split())
#: Words that judge the paper's standing or are adverbs of speech: titles name a method or a finding, they do
#: not call themselves famous ("That's a classic paper", "quite influential", "nobody reads it anymore").
_REMARK_WORDS = frozenset("famous well-known influential seminal landmark renowned celebrated groundbreaking "
                          "ground-breaking iconic legendary classic widely-cited highly-cited quite anymore "
                          "forever nowadays".split())
#: Last words that end a spoken sentence, not a title ("... used for images too.").
_PROSE_LAST_WORDS = frozenset("too anymore either though indeed forever nowadays".split())
#: A comma, then a lower-case clause with its own subject or a conjunction ("..., it introduced Adam", ", as you
#: know", ", which ..."); a title's comma joins nouns ("You only look once: unified, real-time object detection").
_COMMA_CLAUSE_RE = re.compile(r",\s+(?:it|this|that|these|those|they|he|she|which|who|but|so|as|though|although"
                              r"|because|since|when|while|and\s+(?:it|they|this))\b")
#: Contractions of a verb ("they're", "we've", "it'll", "he'd"; "doesn't" after the first word: a title may
#: open with an imperative "Don't") and "'s" after a subject word ("that's", "it's", "one's"; "BERT's" is a
#: possessive).
_CONTRACTION_ENDS = ("'re", "’re", "'ve", "’ve", "'ll", "’ll", "'m", "’m", "'d", "’d")
#: Function words of Spanish, French, German, Italian and Portuguese that English titles do not use.
_FOREIGN_WORDS = frozenset("lo los las el una eso esto esta puedo siento lamento je ne pas cette suis peux désolé "
                           "désolée connais nous vous ich nicht mir kann leider das und ist ein wir eine kein keine "
                           "über ayudar sono posso dispiace non questo questa conosco não desculpe uma com "
                           "você en este momento acceder tengo del por para que les des une est der zu auf "
                           "che es tut leid habe keinen".split())


def remark_line(line: str) -> bool:
    """Whether a one-line answer is a sentence of prose, not a title, so it offers no title (evasive, not wrong).
    A line is prose when (each rule alone suffices):

    * it opens with a pronoun, demonstrative or indefinite subject, contracted or followed by a lower-case word
      ("That's a famous paper", "It is ...", "Everyone knows it"; not "He Kaiming", "He et al.", "He, Kaiming");
    * it holds a contraction of a verb ("they're", "it'll", "doesn't" after the first word; "one's" after a
      subject word), where titles open at most with an imperative ("Don't stop pretraining", "Let's verify");
    * a comma is followed by a lower-case clause with its own subject or a conjunction ("..., it introduced
      Adam", "..., as you know");
    * it judges the paper or speaks ("famous", "influential", "classic", "quite", "anymore"; "too" or
      "either" last);
    * it is not English: no letter of a Latin alphabet at all, or two or more words, at least a third of them, that are
      function words of Spanish, French, German, Italian or Portuguese ("Lo siento, no puedo ayudar con eso").

    Real titles, also in sentence case, keep none of these ("Language models are few-shot learners", "Attention
    is not explanation", "Going deeper with convolutions"). ``line`` is the stripped line; a few set lookups
    over its words, no pass of a pattern over a long text."""
    words = _WORD_RE.findall(line)
    if not words:
        return False
    lowered = [w.lower() for w in words]
    first = lowered[0].replace("’", "'")
    if first.split("'", 1)[0] in _PROSE_SUBJECTS:
        after = line.find(words[0]) + len(words[0])
        if "'" in first or len(words) > 1 and words[1][0].islower() and words[1] != "et" and line[
                after:line.find(words[1], after)].isspace():  # "He Kaiming", "He et al.", "He, Kaiming" name the
            return True  # author He; "It is", "That's" open a sentence
    for i, w in enumerate(lowered):
        if ("'" in w or "’" in w) and (w.endswith(_CONTRACTION_ENDS) or i and (w.endswith(("n't", "n’t")) or (
                w.endswith(("'s", "’s")) and w[:-2] in _PROSE_SUBJECTS | {"one", "who", "what", "where"}))):
            return True
    if "," in line and _COMMA_CLAUSE_RE.search(line):
        return True
    if not _REMARK_WORDS.isdisjoint(lowered[1:]) or lowered[-1] in _PROSE_LAST_WORDS:
        return True
    return foreign_line(line, lowered)


def foreign_line(line: str, lowered: list[str] | None = None) -> bool:
    """Whether ``line`` is not English: no letter of a Latin alphabet at all, or two or more words, at least a
    third of them, that are function words of Spanish, French, German, Italian or Portuguese (``lowered``: its
    words in lower case, when the caller has them)."""
    if not any(c.isalpha() and c < "\u0250" for c in line):  # no letter of a Latin alphabet (to Latin Extended-B)
        return True
    if lowered is None:  # on ASCII, lower-casing keeps every word's span: one call instead of one per word
        lowered = _WORD_RE.findall(line.lower()) if line.isascii() else [w.lower() for w in _WORD_RE.findall(line)]
    if _FOREIGN_WORDS.isdisjoint(lowered):  # the usual English line: one C call, no count
        return False
    foreign = sum(w in _FOREIGN_WORDS for w in lowered)
    return foreign >= 2 and 3 * foreign >= len(lowered)


def _strip_item(line: str) -> str:
    """A line without list marker, title label, emphasis and surrounding quotes."""
    label = _LABEL_RE.match(line)
    if label and label.group(1).strip().lower() in _TITLE_LABELS:
        line = line[label.end():]
    return line.strip().strip(_QUOTE_CHARS + "”’»").strip().rstrip(".!?,;").strip(_QUOTE_CHARS + "”’»").strip()


#: At most this many title-like spans are collected (bounds the work on huge outputs).
MAX_SPANS = 50


def title_spans(r: Response, limit: int = MAX_SPANS) -> list[tuple[int, int]]:
    """Spans of the response offered as titles: title-case runs with a content word, quoted spans that read as a
    title, and the whole response when it is one short line (at most 20 words) with no filler word.  Spans that
    do not count (retracted, refused: :meth:`Response.counts`) are left out; at most ``limit`` (the first ones:
    ``limit=1`` tells whether the response offers a title at all, reading only up to the first)."""
    text = r.text
    spans: list[tuple[int, int]] = []
    for run in TITLE_RUN_RE.finditer(text):
        if _has_content(_WORD_RE.findall(run.group())) and r.counts(*run.span()):
            spans.append(run.span())
            if len(spans) >= limit:
                return spans
    if _has_quote_char(text):
        for quoted in QUOTED_RE.finditer(text):
            group = next(g for g in range(1, 9) if quoted.group(g) is not None)
            if title_like(quoted.group(group)) and r.counts(*quoted.span(group)):
                spans.append(quoted.span(group))
                if len(spans) >= limit:
                    return spans
    stripped = text.strip()
    if stripped and "\n" not in stripped:
        words = _WORD_RE.findall(stripped)
        lowered = {w.lower() for w in words}
        if len(words) <= 20 and not lowered & DISCOURSE_WORDS and _has_content(words) and not remark_line(
                stripped):
            start = text.index(stripped)
            if r.counts(start, start + len(stripped)) and not (r.may_refuse() and r.refuses()):
                spans.append((start, start + len(stripped)))
    return spans


#: Quote pairs whose inside is one quoted title; straight double quotes and asterisks pair by parity.
_QUOTE_PAIRS: tuple[tuple[str, str], ...] = (('"', '"'), ("“", "”"), ("‘", "’"), ("«", "»"), ("`", "`"), ("*", "*"))
#: The pairs an ASCII text can hold (the others are never found in it), in the same order.
_ASCII_QUOTE_PAIRS = tuple(pair for pair in _QUOTE_PAIRS if pair[0].isascii())


def in_longer_quote(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` sits inside quotes (on its line) together with further content words."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    for opening, closing in _ASCII_QUOTE_PAIRS if text.isascii() else _QUOTE_PAIRS:
        i = text.rfind(opening, line_start, start)
        if i < 0:
            continue
        if opening == closing:
            if text.count(opening, line_start, start) % 2 == 0:
                continue
        elif text.find(closing, i, start) >= 0:
            continue
        j = text.find(closing, end, line_end)
        if j >= 0 and _has_content(_WORD_RE.findall(text[i + 1:start] + " " + text[end:j])):
            return True
    return False


#: A subtitle after a spaced dash, to the line's end (a full stop, a closing quote or bracket may end it): title-case
#: words (group 1), minor words between.
_DASH_SUBTITLE_RE = re.compile(rf"[ \t]*[-–—][ \t]+({CAP_WORD}(?:[ \t]+(?:{MINOR_WORD}[ \t]+)*{CAP_WORD}){{0,6}})"
                               r"[ \t\"”’'`*_)\].]*(?:\n|\Z)")


#: A subtitle after a spaced dash listing three or more title words with commas and "and" ("- Theory, Practice
#: and Applications"): a subtitle when one of them is a term word (not a list of people: "- Vaswani, Shazeer and
#: Parmar").
_DASH_LIST_SUBTITLE_RE = re.compile(rf"[ \t]*[-–—][ \t]+({CAP_WORD}(?:(?:,[ \t]+|[ \t]+(?:and|&)[ \t]+"
                                    rf"|,[ \t]+and[ \t]+){CAP_WORD}){{2,6}})[ \t\"”’'`*_)\].]*(?:\n|\Z)")


def _dash_subtitle(text: str, end: int) -> bool:
    """Whether a subtitle follows the title ending at ``end`` after a spaced dash ("Attention Is All You Need -
    Revisited", "... — A Second Look at Self-Attention"): a participle ("Revisited", "Reloaded", "Explained") or
    three or more title words, ending the line.  One or two other words after a dash are read as an attribution
    ("— Vaswani", "- Ashish Vaswani"), and so is a name with "et al.", a comma or a year (they end no run)."""
    found = _DASH_SUBTITLE_RE.match(text, end, end + 120)
    if found is None:
        listed = _DASH_LIST_SUBTITLE_RE.match(text, end, end + 120)  # "- Theory, Practice and Applications"
        return listed is not None and any(_term_word(w.lower()) for w in _WORD_RE.findall(listed.group(1)))
    words = found.group(1).split()
    return len(words) >= 3 or words[0].endswith("ed") and words[0].lower() not in NON_NAME_WORDS and len(words[0]) >= 7


#: A subtitle after a colon, on the title's line: title-case words (group 1; an article may open it), minor words
#: between; not in quotes or emphasis of their own ("A: *B*" lists B beside A).
_COLON_SUBTITLE_RE = re.compile(rf"[ \t]*:[ \t]*((?:(?:A|An|The|On)[ \t]+)?{CAP_WORD}"
                                rf"(?:[ \t]+(?:{MINOR_WORD}[ \t]+)*{CAP_WORD}){{0,6}})")


#: After a run of capitalised words: "et al.", so the run names authors ("Vaswani et al."), not a subtitle.
_ET_AL_AFTER_RE = re.compile(r"[ \t]+et\.?[ \t]+al\b")


def _colon_subtitle(found: re.Match[str]) -> bool:
    """Whether ``found``, a match of ``_COLON_SUBTITLE_RE`` after a title, is a subtitle ("Attention Is All You
    Need: Transformers for Everyone", "...: PyTorch Edition"): two or more title words, one of them a content word,
    whatever the words (a word that is never a name, "Transformers", still makes a subtitle).  One word alone
    after the colon is read by the rule of :func:`is_extended` (": NeurIPS 2017", ": Paper" extend nothing), and
    names followed by "et al." attribute the title (": Vaswani et al."), as after a dash (checked by the caller)."""
    words = [w[:-2] if w.endswith(("'s", "’s")) else w for w in found.group(1).lower().split()]
    return len(words) >= 2 and any(w not in NON_CONTENT_WORDS for w in words)


_OPENING_QUOTES = frozenset("\"“‘«'`")
_CLOSING_QUOTES = frozenset("\"”’»'`")
#: What may stand outside a quoted title on a line that is one longer title: words, spaces, hyphens, dashes, a
#: colon, commas, markup, a last full stop; no digit, bracket or other punctuation (a year, a remark in brackets).
_TITLE_LINE_OUTSIDE_RE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*|[ \t:,–—*_-]+|\.[ \t*_]*\Z")


#: At most this many words outside the quotes make a longer title ("Theory, Practice and Applications"); more are
#: another title or prose beside it.
_LONGER_TITLE_WORDS = 4
#: After a quoted title: a colon or a dash and one or two capitalised words, the way an author is added (as
#: :func:`_dash_subtitle` reads one or two words after a dash).
_ATTRIBUTION_AFTER_RE = re.compile(r"[ \t*_]*[:–—-][ \t]*(?-i:[A-Z])[^\W\d_]*(?:[ \t]+(?-i:[A-Z])[^\W\d_]*)?[ \t.*_]*")


def _quoted_in_title_line(text: str, start: int, end: int) -> bool:
    """Whether the title at ``text[start:end]``, in quotes, is cited inside a longer title on its line: the words
    outside the quotes are title-case (capitalised or minor words, at least one capitalised) and the line read
    without the quotes is a longer title by the unquoted rules ('"X" for Everyone', 'Towards "X"', '"X"
    Revisited', '"X": Theory and Practice', as "X for Everyone" is).  Quotes delimit the title only when the
    rest of the line is not title-case words: prose ('"X" is the answer', '"X" for sure'), an attribution ('"X" by
    Vaswani et al.') or a bracket or a year ('"X" (NeurIPS 2017)') leave it the title itself (README, Title)."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    before, after = text[line_start:start - 1], text[end + 1:line_end]
    words = _WORD_RE.findall(before) + _WORD_RE.findall(after)
    if not 0 < len(words) <= _LONGER_TITLE_WORDS or before.rstrip(" \t*_").endswith(":") or not all(
            w[:1].isupper() or w in _MINOR_WORDS or w == "and" for w in words) or not any(
            w[:1].isupper() for w in words):
        return False  # prose, a label before the title ("Title:"), or another title beside it
    if any(w.casefold() in _KNOWN_AUTHOR_SURNAMES or len(w) > 1 and w.isupper() for w in words) or (
            _ATTRIBUTION_AFTER_RE.fullmatch(after) is not None):
        return False  # an attribution: '"X": Hinton', '"X" GEOFFREY HINTON', '"X" - Ashish Vaswani'
    if any("".join(_TITLE_LINE_OUTSIDE_RE.findall(part)) != part for part in (before, after)):
        return False  # a digit, a bracket, a comma: a venue, a year or a remark beside the title
    line = before + text[start:end] + after
    return is_extended(line, len(before), len(before) + end - start)


def is_extended(text: str, start: int, end: int) -> bool:
    """Whether the title found at ``text[start:end]`` is part of a longer title (so another paper's): more words
    inside the same quotes, a subtitle (:func:`_dash_subtitle`, :func:`_colon_subtitle`), further capitalised
    words (also after capitalised minor words: "... In Speech Separation") or a fused prefix around it, or a
    preposition and a content word after it."""
    if in_longer_quote(text, start, end):
        return True
    if start and end < len(text) and text[end] in _CLOSING_QUOTES and text[start - 1] in _OPENING_QUOTES and (
            _quoted_in_title_line(text, start, end)):
        return True
    if text.startswith((" -", " –", " —", "-", "–", "—"), end, end + 3) and _dash_subtitle(text, end):
        return True
    if text.startswith((":", " :"), end):
        found = _COLON_SUBTITLE_RE.match(text, end, end + 120)
        if found is not None:
            if _ET_AL_AFTER_RE.match(text, found.end()) is not None:
                return _extended_before(text, start)  # "A: Vaswani et al.": an attribution, as after a dash
            if _colon_subtitle(found):
                return True
    if _VERSUS_AFTER_RE.match(text, end) is not None or (  # "A vs. B": two candidates set against each other
            text.startswith((" and ", " or "), end) and _between_before(text, start)):  # "between A and B"
        return _extended_before(text, start)
    after = _EXTEND_AFTER_RE.match(text, end, end + WINDOW)
    for _ in range(4):  # past capitalised minor words: "... Need In Speech Separation"
        if after is None:
            break
        word = after.group(1) or after.group(2) or after.group(3)
        lowered = word.lower()
        if lowered not in NON_NAME_WORDS and not lowered.endswith(("'s", "’s")):
            return True
        if after.group(1) is not None and word != "I" and lowered in NON_CONTENT_WORDS and (
                text[after.start():after.start(1)].strip().lower() in _TITLE_PREPOSITIONS):
            return True  # "A for Everyone", "A for All": a capitalised word after a preposition goes on the title
        if after.group(1) is None or lowered not in _MINOR_WORDS:
            break
        after = _EXTEND_AFTER_RE.match(text, after.end(), after.end() + WINDOW)
    return _extended_before(text, start)


#: "A, though B is also possible", "A; B is also plausible": a concession word or a clause's end after a
#: candidate, then (see ``_ALSO_POSSIBLE_RE``) B.
_THOUGH_AFTER_RE = re.compile(r"[\s\"”’'`*_)\]]*(?:[,;]?\s*(?:though|although|but|while)\s+|[;.]\s+)[\"“‘'`*_(\[]*",
                              re.IGNORECASE)
#: The initials after a surname and a comma ("Mikolov, T.", "Goodfellow, I. J."): APA 7's reference form.
INITIALS_AFTER_RE = re.compile(r",[ \t]*(?-i:[A-Z])\.(?:[ \t]*-?(?-i:[A-Z])\.)*")
#: What makes the phrase after a concession word an alternative: "... is also possible", "... seems likely".
_ALSO_POSSIBLE_RE = re.compile(r"[\s\"”’'`*_)\]]*(?:is|seems|would\s+be)\s+(?:also\s+|equally\s+)?"
                               r"(?:possible|plausible|likely|an?\s+(?:option|possibility|candidate))\b", re.IGNORECASE)


def alternative_after(text: str, end: int, offered: Callable[[str], bool]) -> bool:
    """Whether an alternation right after ``end`` offers another candidate (``offered(phrase)``): a joiner
    (``JOIN_AFTER_RE``), or a concession whose phrase is called possible too ("A, though B is also
    possible")."""
    join = JOIN_AFTER_RE.match(text, end, end + WINDOW)
    conceded = join is None
    if conceded:
        join = _THOUGH_AFTER_RE.match(text, end, end + WINDOW)
        if join is None:
            return False
    rest = text[join.end(): join.end() + 300]
    stop = _PHRASE_END_RE.search(rest)
    phrase = rest[: stop.start()] if stop else rest
    if conceded:
        if stop is None:
            return False
        initials = INITIALS_AFTER_RE.match(rest, stop.start())  # "though Dean, J. is also possible"
        if _ALSO_POSSIBLE_RE.match(rest, stop.start() if initials is None else initials.end()) is None:
            return False
    return bool(phrase.strip()) and offered(phrase)


def alternative_before(text: str, start: int, offered: Callable[[str], bool], end: int = -1) -> bool:
    """Whether an alternation right before ``start`` follows another candidate (``offered(phrase)``), or, when
    the candidate's ``end`` is given, a concession whose candidate (ending at ``end``) is called possible too
    follows one ("B, though A is also possible": A is offered besides B, as in "A, though B is also
    possible")."""
    at = joiner_before(text, start)
    if at < 0 and end >= 0:
        join = _JOIN_BEFORE_RE.search(text, max(0, start - 30), start)
        if join is not None and (join.group(1) is None or _QUESTION_AFTER_RE.match(text, end) is not None):
            at = join.start()  # "Could be B, could be A", "B, if not A", "B? A?"
        elif _ALSO_POSSIBLE_RE.match(text, end) is not None:
            concession = _THOUGH_BEFORE_RE.search(text, max(0, start - 30), start)
            at = -1 if concession is None else concession.start()
    return at >= 0 and _offered_before(text, at, offered)


#: A full stop after a word of two letters or more (not an initial's, not "et al.'s"): a sentence's end.
_SENTENCE_END_RE = re.compile(r"(?<![^\W_])(?!al\.)[^\W_]{2,}[\"”’'`*_)\]»]*\.\Z")


def _offered_before(text: str, at: int, offered: Callable[[str], bool]) -> bool:
    """Whether the phrase right before offset ``at`` (back to the previous phrase boundary,
    ``_PHRASE_START_RE``) offers a candidate."""
    head = text[max(0, at - 300): at].rstrip(" \t,;:?([" + _QUOTE_CHARS + "”’»")  # the separator before the joiner
    if head.endswith(".") and _SENTENCE_END_RE.search(head):
        head = head[:-1].rstrip(_QUOTE_CHARS + "”’»")  # "A. Or B": the sentence's stop (not an initial's, "Dean, J.")
    head = _BRACKET_END_RE.sub("", head)  # "Dean et al. (2012) or A": a short bracket after the phrase is its own
    starts = [m.end() for m in _PHRASE_START_RE.finditer(head)]
    if starts and head[starts[-1] - 1] == "," and _INITIALS_ONLY_RE.fullmatch(head, starts[-1]):
        starts.pop()  # "Dean, J. or A": the initials after the comma are Dean's, the phrase is the whole citation
    phrase = head[starts[-1]:] if starts else head
    phrase = phrase.strip().strip(_QUOTE_CHARS + "”’»")
    return bool(phrase) and offered(phrase)


#: The joiners of ``JOIN_AFTER_RE`` that read the same way before the second candidate: "A, could be B", "A, if
#: not B", "A, though it might be B", "A; possibly B", "A? B?" (group 1: the question mark, which needs one after
#: the candidate too).
_JOIN_BEFORE_RE = re.compile(r"(?:[,;][ \t]*(?:(?:but|though|although)[ \t]+)?(?:it[ \t]+|that[ \t]+)?"
                             r"(?:could|might|may)[ \t]+(?:well[ \t]+|also[ \t]+)?be"
                             r"|[,;][ \t]*(?:if[ \t]+not|maybe|perhaps|possibly)|(?<=\S)(\?))[ \t\"“‘'`*_(\[]*\Z",
                             re.IGNORECASE)
#: A short bracket ending a phrase ("(2012)", "(60%)").
_BRACKET_END_RE = re.compile(r"[ \t]*\([^()\n]{1,20}\)[ \t]*\Z")
_QUESTION_AFTER_RE = re.compile(r"[\"”’'`*_)\]]*\?")
#: A concession word right before a candidate ("B, though A is also possible").
_THOUGH_BEFORE_RE = re.compile(r"(?:[,;][ \t]*(?:though|although|but|while)[ \t]+|[;.][ \t]+)[\"“‘'`*_(\[]*\Z",
                               re.IGNORECASE)


#: A phrase that is only initials ("J.", "I. J."): the end of an inverted citation ("Dean, J."), not a phrase alone.
_INITIALS_ONLY_RE = re.compile(r"(?:[ \t]*(?-i:[A-Z])\.)+[ \t]*")


_LIST_MARKER_RE = re.compile(r"[ \t]*(?:[-*•+]|\(?[0-9]{1,2}[.)]|\(?[a-h][.)]|\((?:i{1,3}|iv|vi{0,3})\))[ \t]+")
#: The characters a list marker can start with (after spaces and tabs): a line starting otherwise has none, and
#: needs no regular expression (most lines of prose start with a capital).
_MARKER_FIRST = frozenset("-*•+(0123456789abcdefgh")
#: A list of short lines (no markers) has at most this many words per line.
_SHORT_LINE_WORDS = 15


#: Matches at the start of a text with more than ``_SHORT_LINE_WORDS`` words (:data:`_WORD_RE` matches, which
#: are separated by non-word characters; atomic, so a word is never split to make up the count).
_LONG_LINE_RE = re.compile(rf"(?:[\W_]*+(?>[^\W_]++(?:['’-][^\W_]++)*+)){{{_SHORT_LINE_WORDS + 1}}}")


def _short_line(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` has at most ``_SHORT_LINE_WORDS`` words (one C call, reading no further than
    the word after them)."""
    # more than _SHORT_LINE_WORDS words take at least two characters each (a word and a separator) but the last
    return end - start < 2 * _SHORT_LINE_WORDS + 1 or _LONG_LINE_RE.match(text, start, end) is None


def _marker_end(text: str, start: int, end: int) -> int:
    """Where the list marker of the line ``text[start:end]`` ends, or -1 when the line is no list item (no
    marker, or nothing after it)."""
    if text[start:end].lstrip(" \t")[:1] not in _MARKER_FIRST:
        return -1
    marker = _LIST_MARKER_RE.match(text, start, end)
    return marker.end() if marker is not None and marker.end() < end else -1


def code_fence(line: str) -> bool:
    """Whether ``line`` is a Markdown code fence: three or more backticks or tildes, then at most an info string
    ("```json", "~~~ yaml", "```"; CommonMark 0.31, section 4.5).  It is markup, not an item: its language tag
    ("json", "python") is no name and no title."""
    head = line.lstrip(" \t")[:3]
    return (head == "```" or head == "~~~") and len(line.split()) <= 2


def without_fences(text: str) -> str:
    """``text`` without its code fences' lines (:func:`code_fence`)."""
    return "\n".join(line for line in text.split("\n") if not code_fence(line))


def listed_items(text: str) -> list[tuple[int, int]]:
    """Spans of the list items of ``text`` (bulleted or numbered lines, marker excluded; or, when the response is
    only two or more short lines, each line); a code fence's line (:func:`code_fence`) is none."""
    if "\n" not in text:
        return []
    lines, items, pos = [], [], 0
    for line in text.split("\n"):
        end = pos + len(line)
        if line.strip() and not code_fence(line):
            lines.append((pos, end))
            at = _marker_end(text, pos, end)
            if at >= 0:
                items.append((at, end))
        pos = end + 1
    if items:
        return items
    if len(lines) >= 2 and all(_short_line(text, s, e) for s, e in lines):
        return lines
    return []


def may_be_listed(text: str, spans: Iterable[tuple[int, int]]) -> bool:
    """A cheap necessary condition for one of ``spans`` lying inside an item of :func:`listed_items`: the span
    is on one line, and that line is a list item or every line of ``text`` is short.  On prose (answers in
    paragraphs) it reads a line or two instead of the whole response."""
    if "\n" not in text:
        return False
    for start, end in spans:
        if text.find("\n", start, end) >= 0:
            continue
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        at = _marker_end(text, line_start, line_end)
        if 0 <= at <= start:
            return True
        if _all_lines_short(text):  # the span's line among them
            return True
    return False


def _all_lines_short(text: str) -> bool:
    """Whether every non-blank line of ``text`` is short (see ``_SHORT_LINE_WORDS``); stops at the first long one."""
    pos, n = 0, len(text)
    while pos <= n:  # a blank line has no words: short
        end = text.find("\n", pos)
        end = n if end < 0 else end
        if not _short_line(text, pos, end):
            return False
        pos = end + 1
    return True


#: Words that open a sentence about the answer when a lower-case word follows: subject pronouns ("It
#: introduced GANs") and the participles of a remark on publication ("Published at NeurIPS in 2014").
_SENTENCE_OPENERS = frozenset("it this that these those he she they we i its his her their published submitted "
                              "released presented introduced written authored appeared proposed posted accepted"
                              .split())
#: A sentence's full stop: after a word of two or more letters or digits other than "al" (so not "et al." and
#: not an initial as in "Ian J."), then only closing quotes, brackets or emphasis.
_FULL_STOP_RE = re.compile(r"(?<![^\W_])(?!al\.)[^\W_]{2,}[.!][\s\"”’'*_)\]]*\Z", re.IGNORECASE)


def prose_line(item: str) -> bool:
    """Whether a list item or line ``item`` reads as a sentence of prose, not as another answer: it opens with
    a sentence opener (``_SENTENCE_OPENERS``) followed by a lower-case word ("This paper by Ian Goodfellow
    ...", "Published at NeurIPS in 2014."), or it ends with a full stop (``_FULL_STOP_RE``) and holds a
    lower-case word that is not a function word ("Goodfellow's paper introduced GANs.").  A title rarely ends
    with a full stop, and one that does is in title case ("Conditional Generative Adversarial Nets." still
    offers a title); the cost of the rule is a sentence-case title given as an alternative with a full stop,
    which then reads as prose."""
    words = _WORD_RE.findall(item)
    if len(words) >= 2 and words[0].lower() in _SENTENCE_OPENERS and words[1][:1].islower():
        return True
    if _FULL_STOP_RE.search(item) is None:
        return False
    return any(w[:1].islower() and w not in FUNCTION_WORDS for w in words)


#: A citation manager's field tag opening a record's line: RIS's two characters then " - " (group 1: "TY", "TI",
#: "AU", "PY"; RIS spec, Research Information Systems), EndNote's "%" and one character (group 2: "%0", "%T", "%A",
#: "%D"), or a BibTeX entry's header "@article{key," (neither group: the citation key names no one).
RECORD_TAG_RE = re.compile(r"[ \t]*(?:([A-Z][A-Z0-9])[ \t]+-(?:[ \t]+|$)|%([0-9A-Z])(?:[ \t]+|$)"
                           r"|@[a-z]+[ \t]*\{[^,\s{}]*,[ \t]*$)", re.MULTILINE)
#: The fields the RIS and EndNote tags name (the others: the record's type, journal, URL, DOI, ... name none).
_RECORD_TAG_FIELDS: dict[str, str] = {"TI": "title", "T1": "title", "AU": "author", "A1": "author", "PY": "year",
                                      "Y1": "year", "DA": "year", "T": "title", "A": "author", "D": "year"}


def record_tag(text: str, start: int, end: int) -> tuple[str, str | None, int] | None:
    """The citation manager's tag opening the line ``text[start:end]`` (:data:`RECORD_TAG_RE`), the field it
    names ("author", "title", "year" or ``None``) and where the tag ends, or ``None`` when the line opens with
    none; a BibTeX entry's header gives the tag "@"."""
    if not ("-" in text[start:end] or "%" in text[start:end] or "@" in text[start:end]):
        return None  # one cheap test for the lines of every other text
    tag = RECORD_TAG_RE.match(text, start, end)
    if tag is None:
        return None
    key = tag.group(1) or tag.group(2)
    return (key, _RECORD_TAG_FIELDS.get(key), tag.end()) if key else ("@", None, tag.end())


#: A list item (after its marker) opening with a cross mark: a checklist's rejected entry.
_CROSS_MARK_ITEM_RE = re.compile(r"[ \t]*" + LIST_ITEM + r"?[ \t]*" + _CROSS_MARK_CLASS)


def item_offers(text: str, span: tuple[int, int], offered: Callable[[str], bool], kind: str | None = None) -> bool:
    """Whether a list item offers a candidate on its own (``offered`` of its text without marker, label and
    quotes); a label naming another field ("Authors:", "Year:"; with ``kind``, the field graded, also "First
    author:" on a title task, "Title:" on an author task: :func:`label_field`) disqualifies it, and so does an
    item that reads as prose (:func:`prose_line`).  A row of a table (``| label | value |``) is a record's field
    too: its first cell is the label when it names a field or a position; a header or rule row offers nothing
    (:func:`table_row`).  A lead-in ending in a colon or an unfinished copula (``_LEAD_IN_END_RE``) offers no
    title."""
    item = text[span[0]:span[1]]
    if not item.isascii() and _CROSS_MARK_ITEM_RE.match(item):
        return False  # "❌ B" beside "✅ A": a checklist's verdict rejects B (as NEGATION_BEFORE_RE reads it)
    tagged = record_tag(text, span[0], span[1])
    if tagged is not None and (tagged[1] is None or kind and tagged[1] != kind):
        return False  # a citation record's other field ("TY  - JOUR", "%0 Journal Article", "@article{key,")
    if item.lstrip().startswith("|"):
        row = table_row(item)
        if row is None:
            return False
        label, cells = row
        if label is not None and (kind and label_field(label) not in (None, kind) or position_label(label) is None
                                  and _field_label(label)):
            return False  # another field's row; a position ("| 2 | X |") is an item of an author list
        fields = table_header_fields(text, span[0]) if label is None and kind else None
        if fields is not None:  # a row of a table with a header: only the cells under the graded field's column
            raw = [c.strip() for c in item.strip().strip("|").split("|")]
            if len(raw) == len(fields):
                cells = [c for c, f in zip(raw, fields, strict=True) if c and f in (None, kind)]
        return any(not prose_line(c) and offered(_strip_item(c)) for c in cells)
    label = _LABEL_RE.match(item)
    if label and (_field_label(label.group(1)) or kind and label_field(label.group(1)) not in (None, kind)):
        return False
    if kind == "author" and _CO_AUTHOR_REMARK_RE.match(item):
        return False  # "(with Kai Chen and others)": co-authors beside the name above, no other first author
    if kind == "title" and _LEAD_IN_END_RE.search(item) and any(
            len(w) > 2 and w.islower() for w in _WORD_RE.findall(item)):
        return False  # "Based on my knowledge, the exact title is:" introduces the answer ("OMAR KHATTAB:" names)
    return not prose_line(item) and offered(_strip_item(item))


#: An item that opens with "with" ("(with Kai Chen and others)", "together with X", "co-authored with X") names
#: co-authors of the name before it: on an author task it offers no other first author, as it does not on the
#: name's own line.
_CO_AUTHOR_REMARK_RE = re.compile(r"[\s(\[*_–—-]*(?:(?:along|together|jointly|co-?authored|co-?written|written)"
                                  r"[ \t]+)?with[ \t]", re.IGNORECASE)


#: The end of a lead-in line: a colon, or a copula or naming verb still waiting for what it names ("the exact
#: title is", "It is called").  Such a line, with a lower-case word of three letters or more (a sentence, not a
#: name or a title before a colon), introduces the item after it and offers none itself.
_LEAD_IN_END_RE = re.compile(r"(?:[:：]|(?<![^\W_])(?:is|was|are|titled|called|named|reads|follows))[\s*_]*\Z",
                             re.IGNORECASE)


#: Words of a table's header row ("| Field | Value |", "| Position | Author |"): a row of only these (and of
#: ``NON_CONTENT_WORDS`` and ``_FIELD_WORDS``) offers nothing.
_HEADER_WORDS = frozenset("field fields value values key keys position rank order # no no. item attribute property "
                          "role detail details info entry".split())
#: A cell that labels a position in an author list: "1", "#1", "1st", "First author", "Author 2", "Second".
_POSITION_LABEL_RE = re.compile(
    r"[*_ ]*(?:#|no\.?\s*)?(?:([0-9]{1,2})(?:st|nd|rd|th)?\.?(?:\s+author)?|author\s*#?\s*([0-9]{1,2})"
    r"|(first|second|third|fourth|fifth|sixth|last)(?:\s+author)?)[*_ ]*", re.IGNORECASE)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "last": 99}


def position_label(cell: str) -> int | None:
    """The position an author-list label names ("1", "#2", "1st", "First author", "Author 3"), or ``None``."""
    m = _POSITION_LABEL_RE.fullmatch(cell)
    if m is None:
        return None
    return int(m.group(1) or m.group(2)) if m.group(3) is None else _ORDINALS[m.group(3).lower()]


def table_row(row: str) -> tuple[str | None, list[str]] | None:
    """A markdown table row read as a record's field: ``(label, value cells)``, where the label is the first
    cell when it names a field (:func:`label_field`, ``_field_label``) or a position (:func:`position_label`),
    else ``None`` and every cell is a value; ``None`` for a rule row ("|---|---|") or a header row (only
    header, field or meta words: "| Field | Value |", "| Position | Author |")."""
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    cells = [c for c in cells if c]
    words = [w.lower() for c in cells for w in _WORD_RE.findall(c)]
    if not words or all(w in _HEADER_WORDS or w in NON_CONTENT_WORDS or w in _FIELD_WORDS for w in words) or all(
            not c.strip(":-*_ ") or c.strip() == "#" for c in cells):
        return None
    if len(cells) >= 2 and (label_field(cells[0]) or _field_label(cells[0]) or position_label(cells[0])):
        return cells[0], cells[1:]
    return None, cells


def table_header_fields(text: str, at: int) -> list[str | None] | None:
    """The field each column's header names (:func:`label_field`) for the table row holding offset ``at``, or
    ``None`` when ``at`` is on no table row below a header (the header is the table's first row)."""
    line_start = text.rfind("\n", 0, at) + 1
    if not text[line_start:line_start + 8].lstrip().startswith("|"):
        return None
    top = line_start
    while top > 0:
        above = text.rfind("\n", 0, top - 1) + 1
        if not text[above:above + 8].lstrip().startswith("|"):
            break
        top = above
    if top == line_start:
        return None
    end = text.find("\n", top)
    header = text[top:end if end >= 0 else len(text)]
    return [label_field(c) for c in header.strip().strip("|").split("|")]


def column_field(text: str, at: int) -> str | None:
    """The field named by the header of the table column holding offset ``at`` ("| Title | First author |"
    over "| X | Y |": Y is under "author"), or ``None``."""
    fields = table_header_fields(text, at)
    if fields is None:
        return None
    line_start = text.rfind("\n", 0, at) + 1
    column = text.count("|", line_start, at) - (0 if text[line_start:at].lstrip()[:1] != "|" else 1)
    return fields[column] if 0 <= column < len(fields) else None


#: Words of a field's label beyond the meta vocabulary: positions and the key words of records.
_LABEL_FIELD_WORDS = frozenset("1st 2nd 3rd 4th 5th fourth fifth sixth lead main primary surname writer identifier "
                               "- # no no.".split())


def label_field(label: str) -> str | None:
    """The field of a paper a record's label names: "author" ("First author", "first_author", "Name", "By"),
    "title" ("Title", "Paper"), "year" ("Year", "Date", "Published") or "id" ("arXiv ID", "Identifier"), when
    every word of it is a field's or a meta word; else ``None`` ("Answer", "Option 2", "Edward - arXiv")."""
    words = set(label.lower().replace("_", " ").replace("-", " ").strip("*_ ").split())
    if not all(w in NON_NAME_WORDS or w in _FIELD_WORDS or w in _LABEL_FIELD_WORDS or w.isdigit() for w in words):
        return None  # "Edward - arXiv": a name, not a field's label
    if words & {"author", "authors", "name", "names", "by", "writer", "surname"}:
        return "author"
    if words & {"title", "paper"}:
        return "title"
    if words & {"year", "date", "published", "submitted"}:
        return "year"
    if words & {"id", "identifier", "arxiv", "number"}:
        return "id"
    return None


#: Labels of a paper's other fields, beyond the meta vocabulary of ``NON_CONTENT_WORDS`` ("Authors:", "Year:").
_FIELD_WORDS = frozenset("co-authors coauthors co-author coauthor contributors senior corresponding additional "
                         "abstract venue conference journal doi url link links pages keywords affiliation "
                         "affiliations category categories subject subjects citation cite bibtex date version "
                         "versions summary note notes comment comments code repository github license "
                         "institution organisation organization email status booktitle eprint archiveprefix "
                         "primaryclass publisher volume number month howpublished school isbn issn series "
                         "edition editor address confidence certainty probability likelihood score reasoning "
                         "explanation rationale justification evidence field value".split())


def _field_label(label: str) -> bool:
    """Whether a line's label (the text before its colon) names another field of the paper ("Authors",
    "Year", "Published in", "Venue"), not an answer ("Title", "Option 2") nor the head of a title with a
    subtitle ("DSPy: Programming, not Prompting, Foundation Models")."""
    words = label.strip().lower().split()
    if not words or label.strip().lower() in _TITLE_LABELS or words[0] in _TITLE_LABELS:
        return False
    return all(w in NON_CONTENT_WORDS or w in _FIELD_WORDS or w.isdigit() for w in words)


def name_like(word: str, exclude: frozenset[str]) -> bool:
    """Whether a capitalised word may be a person's name: two letters or more, not a function, filler, meta or
    citation word, not a word of the question (``exclude``), not a possessive of one, not starting with a digit
    (a request id's "7f3a", "2D")."""
    lowered = word.lower()
    if lowered.endswith(("'s", "’s")):
        lowered = lowered[:-2]
    if lowered in NON_NAME_WORDS or lowered in exclude or lowered[:1].isdigit():  # "7f3a", "2D": no name
        return False
    # two letters or more; the count is needed only for words that are not all letters ("2D", "O'Neil")
    return len(lowered) >= 2 if lowered.isalpha() else sum(c.isalpha() for c in lowered) >= 2


#: What may stand between a sentence's end (or a label's colon, a list marker) and its first word.
_LEAD_CHARS = frozenset(" \t*_\"'“‘`>#")
#: After a word, what makes it (part of) a person's name wherever it stands: another capitalised word (tested
#: with :func:`name_like`: group 1), an initial ("Bengio, Y."; not "I", the pronoun), "et al.", "and
#: colleagues", or a verb of authorship ("Kingma wrote it", "Kingma is the first author").
_NAME_CONTEXT_RE = re.compile(
    r"(?:[ \t]+|,[ \t]*)(?:(?-i:[A-HJ-Z])\.|(?-i:[A-HJ-Z])(?![^\W_])"
    r"|(?-i:([A-Z][^\W\d_]+(?:['’-][^\W\d_]+)*)))"
    r"|[ \t]+(?:et\.?[ \t]+al\b|(?:and|&)[ \t]+(?:colleagues|co-?authors|others|team)\b"
    r"|(?:co-?)?(?:wrote|authored|led)\b|(?:is|was)[ \t]+(?:the[ \t]+|its[ \t]+)?(?:[a-z]+[ \t]+)?author\b)",
    re.IGNORECASE,
)
#: An initial right before a word ("X. He"; not "I.", the pronoun or a numeral: "Part I. He left").
_INITIAL_BEFORE_RE = re.compile(r"(?<![^\W_])(?-i:[A-HJ-Z])\.[ \t]*\Z")
#: After a capitalised pair: the pair ends (no further capitalised word, no label's colon; closing emphasis or
#: quotes skipped: "**Kevin He**").
_PAIR_END_RE = re.compile(r"[*_\"'”’]*[ \t]*(?:[.,;!?)\]\n]|\Z|[ \t]+(?-i:[a-z0-9(]))")
#: After a sentence's first word: the sentence is that word alone ("Bengio.", "Answer: Bengio", "Bengio (2014)"),
#: also as a record's quoted value ({"first_author": "Zhang"}, {"first_author": "Zhang", "year": 2015}).
_ALONE_AFTER_RE = re.compile(r"[ \t*_\"'”’]*(?:[.!?;)\]}\n]|\((?:19|20)[0-9]{2}|\Z)|[ \t*_]*[\"”][ \t]*,")


def _sentence_start(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens a sentence, a line, a list item or what follows a label's colon
    (markup and quotes before it skipped); the full stop of an initial ("Ian J. Goodfellow") ends none."""
    i = start - 1
    while i >= 0 and text[i] in _LEAD_CHARS:
        i -= 1
    if i < 0:
        return True
    c = text[i]
    if c in "!?:;\n":
        return True
    if c == ".":
        return not (i >= 1 and text[i - 1].isupper() and (i < 2 or not text[i - 2].isalpha()))
    if c in "-•+":  # a bullet: only spaces before it on its line
        line = text.rfind("\n", 0, i) + 1
        return not text[line:i].strip()
    return False


def _after_title_case_word(text: str, start: int) -> bool:
    """Whether the word at ``start`` follows a capitalised function word on its line that does not open a
    sentence ("To Be Determined", "Below Is A Summary": title-case text, not a name; "It's Bengio" is not);
    "By" attributes, so it does not count."""
    head = text[max(0, start - 12):start]
    if not head.endswith((" ", "\t")):
        return False
    words = head.split()
    if not words or "\n" in head[head.rfind(words[-1]):]:
        return False
    word = words[-1].strip("*_\"'“‘")
    if not (word[:1].isupper() and word.lower() in FUNCTION_WORDS and word.lower() != "by"):
        return False
    return not _sentence_start(text, head.rfind(words[-1]) + max(0, start - 12))  # "It's Bengio": capital of a start


#: Prepositions after which a capitalised word names a place or an organisation ("a team at OpenAI in San
#: Francisco", "came from DeepSeek-AI"), not a person, unless name context follows ("from Vaswani et al.").
_PLACE_PREPOSITIONS = frozenset("in at from near based".split())


def _place_or_org(text: str, start: int, end: int) -> bool:
    """Whether the capitalised word ``text[start:end]`` reads as part of a place's or an organisation's name:
    an acronym of up to five capitals standing alone ("the NLP group"), the word right after a place preposition
    (``_PLACE_PREPOSITIONS``), or a word after a capitalised organisation or meta word in the same run
    ("Microsoft Research Asia", "San Francisco" after "in")."""
    word = text[start:end]
    if word.endswith(("'s", "’s")) or _POSSESSIVE_NEXT_RE.match(text, end):
        return False  # "in Yoshua Bengio's lab": a person's
    if institution_after(text, end):
        return True  # "the Brown University library"
    if 2 <= len(word) <= 5 and word.isupper() and not (_CAPS_NEIGHBOUR_RE.match(text, end) or _CAPS_BEFORE_RE.search(
            text, max(0, start - 30), start)):
        return True  # an acronym, unless beside another word in capitals ("KAIMING HE")
    head = text[max(0, start - 40):start]
    if not head.endswith(" "):
        return False
    words = head.split()
    if not words:
        return False
    previous = words[-1]
    if previous.lower() in _PLACE_PREPOSITIONS:
        return True
    core = previous.rstrip(",.;:").lower()
    if previous[:1].isupper() and previous == previous.rstrip(",.;:") and (core in NON_NAME_WORDS and
                                                                           core not in FUNCTION_WORDS) and (
            core in _ORG_WORDS or not _sentence_start(text, start - 1 - len(previous))):
        return True  # "Microsoft Research Asia": an organisation's name goes on ("Maybe Mikolov.": a hedge word
        # opening the sentence, capitalised for that alone, starts no organisation's name)
    if len(words) >= 2 and words[-2].lower() in _PLACE_PREPOSITIONS and previous[:1].isupper() and (
            previous == previous.rstrip(",.;:")):
        return True  # "in San Francisco"
    return (previous == "of" or "," in head and word.casefold() not in _KNOWN_AUTHOR_SURNAMES) and (
        _after_organisation(words))


#: The known papers' first authors' surnames: after an organisation's comma one of them names the person ("Google
#: Brain, Vaswani": an affiliation then the author), not the organisation's place, which is no known author.
_KNOWN_AUTHOR_SURNAMES = frozenset(p.last_name.casefold() for p in PAPERS)


#: Words of an organisation's name ("Google Brain", "University of Toronto", "Meta AI"): what follows the name
#: and a comma is its place, as an affiliation is written ("Google Brain, Mountain View").
_ORG_WORDS = frozenset("university institute institution lab labs laboratory laboratories college school academy "
                       "center centre department group team research ai google brain openai deepmind meta "
                       "microsoft facebook nvidia inc corp corporation ltd llc gmbh plc stanford berkeley mit".split())


def _after_organisation(words: list[str]) -> bool:
    """Whether the capitalised word after ``words`` (the text before it, split) continues an organisation's name
    or gives its place: it follows "of" after an organisation's word ("University of Toronto"), or a comma after
    an organisation's name, alone or with one more capitalised word of the place ("Google Brain, Mountain View",
    "Microsoft Research Asia, Beijing"): an affiliation, no person."""
    k = len(words) - 1
    if not words[k].endswith(",") and k >= 1 and words[k - 1].endswith(",") and words[k][:1].isupper() and (
            words[k].isalpha()):
        k -= 1  # "..., Mountain View": the place's first word was read already
    if not (words[k] == "of" or words[k].endswith(",")):
        return False
    seen = 0
    for word in reversed(words[max(0, k - 4):k + 1]):
        core = word.rstrip(",")
        if core == "of":
            continue
        if not core[:1].isupper() or not core.replace("-", "").isalpha():
            break
        if core.lower() in _ORG_WORDS:
            return True
        seen += 1
        if seen >= 3:
            break
    return False


#: A word naming an institution right after a capitalised word makes that word part of its name ("Brown
#: University", "Stanford Library", "Courant Institute"), not a person's name.
_INSTITUTION_AFTER_RE = re.compile(
    r"[ \t]+(?-i:University|College|Institute|Library|Libraries|School|Hospital|Museum|Foundation|Laboratory"
    r"|Laboratories|Lab|Labs|Center|Centre|Department|Dept|Academy|Observatory|Press|Corporation|Corp|Inc"
    r"|Company|Society)\b")


def institution_after(text: str, end: int) -> bool:
    """Whether a word naming an institution (``_INSTITUTION_AFTER_RE``) follows the word ending at ``end``."""
    return end < len(text) and text[end] in " \t" and _INSTITUTION_AFTER_RE.match(text, end) is not None


#: A word repeated next to itself in another case ("Ho ho ho", "Ha ha"): laughter or an interjection, not a name.
_REPEATED_RE = re.compile(r"[ \t,]+([^\W\d_]+)")
_REPEATED_BEFORE_RE = re.compile(r"(?<![^\W_])([^\W\d_]+)[ \t,]+\Z")


def interjection(text: str, start: int, end: int) -> bool:
    """Whether the short word ``text[start:end]`` (four letters at most) stands in a run of itself (case
    ignored) that is three words long or mixes cases ("Ho ho ho, I have no idea!", "Ha ha"): an interjection,
    not a name ("Wei Wei", twice capitalised, stays a name)."""
    word = text[start:end]
    lowered, run, cased = word.lower(), 1, False
    if len(word) > 4:
        return False  # laughter and interjections are short words ("Ho", "Ha", "Heh"); "khattab, Khattab" is a name
    if text[max(0, start - len(word) - 3):end + len(word) + 3].lower().count(lowered) < 2:
        return False  # the usual case: no repeat nearby (one slice, one count)
    pos = end
    for _ in range(2):
        after = _REPEATED_RE.match(text, pos, pos + 40)
        if after is None or after.group(1).lower() != lowered:
            break
        run, cased, pos = run + 1, cased or after.group(1) != word, after.end()
    pos = start
    for _ in range(2):
        before = _REPEATED_BEFORE_RE.search(text, max(0, pos - 40), pos)
        if before is None or before.group(1).lower() != lowered:
            break
        run, cased, pos = run + 1, cased or before.group(1) != word, before.start()
    return run >= 3 or cased


_POSSESSIVE_NEXT_RE = re.compile(r"[ \t]+(?-i:[A-Z])[^\W_]*['’]s\b")
_CAPS_NEIGHBOUR_RE = re.compile(r"[ \t]+(?-i:[A-Z][A-Z.'’-]+)\b")
_CAPS_BEFORE_RE = re.compile(r"\b(?-i:[A-Z][A-Z.'’-]+)[ \t]+\Z")


def _placed_as_name(text: str, start: int, end: int, exclude: frozenset[str]) -> bool:
    """Whether the capitalised word ``text[start:end]`` stands where a name is offered.  A capitalised word
    inside a sentence is (a proper noun), unless it reads as a place's or an organisation's
    (:func:`_place_or_org`); one that opens a sentence or follows a capitalised function word is
    capitalised for that reason alone ("Later revisions keep ...", "To Be Determined"), so it is a name only
    when name context follows it (``_NAME_CONTEXT_RE``: another name-like capitalised word, an initial, "et
    al.", a verb of authorship) or, opening a sentence, when the sentence is that word alone
    (``_ALONE_AFTER_RE``)."""
    opens = _sentence_start(text, start)
    place = not opens and _place_or_org(text, start, end)
    if not opens and not place and not _after_title_case_word(text, start):
        return True
    context = _NAME_CONTEXT_RE.match(text, end)
    if context is not None:
        surname = context.group(1)
        if surname is None:
            return True
        if place:  # "in San Francisco": a second capitalised word does not make a place a person
            return False
        if name_like(surname, exclude):
            return True
        # a surname that is also a function word ("Kaiming He"): the capitalised pair ends there, not a
        # title-case run going on ("Below Is A Summary") nor a label ("Step One:")
        if surname.lower() in FUNCTION_WORDS and _PAIR_END_RE.match(text, context.end()) is not None:
            return True
    return opens and (_ALONE_AFTER_RE.match(text, end) is not None or text.endswith(("'s", "’s"), start, end) and (
        _WORK_AFTER_RE.match(text, end) is not None) and text[start:end - 2].lower() not in _NO_ONE)  # "Goodfellow's
    # paper introduced GANs."


#: Possessors that are no person: times and pronouns ("Today's paper", "Everybody's favourite work").
_NO_ONE = frozenset("today yesterday tomorrow tonight nobody somebody everybody anybody one year week month "
                    "decade century".split())


#: After a possessive: a work or a group of the possessor ("Goodfellow's paper", "Hinton's original work").
_WORK_AFTER_RE = re.compile(r"[ \t]+(?:[a-z-]+[ \t]+)?(?:papers?|work|articles?|preprints?|study|team|lab|group)\b")


#: A title-case word right after / right before a word of a run (a space or a hyphen between, one line).
_RUN_AFTER_RE = re.compile(r"(?:(?:[ \t]|-)(?-i:[A-Z])[a-z]+)+")
_RUN_BEFORE_RE = re.compile(r"(?:(?<![^\W_])(?-i:[A-Z])[a-z]+(?:[ \t]|-))+\Z")
#: After a run: an acronym in brackets ("(NLP)", "(CNNs)", "(RL)").
_ACRONYM_AFTER_RE = re.compile(r"[ \t]*\((?-i:[A-Z]{2,6})s?\)")
#: Endings of English nouns of a field, a method or a thing (derivational suffixes: -tion/-sion, -ics, -ogy, -ism,
#: -ity; "-ing" of eight letters or more, "-ment" of eight, "-ence"/"-ance" of nine, shorter ones being common
#: surnames: Manning, Fleming, Clement, Lawrence) and "-work" ("Neural Networks").  A surname rarely ends so.
_TERM_SUFFIXES: tuple[tuple[str, int], ...] = (("tion", 5), ("sion", 5), ("ics", 5), ("ogy", 5), ("ism", 5),
                                               ("ity", 5), ("ing", 8), ("ment", 8), ("ence", 9), ("ance", 9),
                                               ("work", 7))
#: Most runs beside a name-like word are short; a run is read at most this far each way (characters).
_RUN_REACH = 80


#: Head nouns of fields and things that no suffix marks ("Computer Science", "Data Mining", "Graph Theory",
#: "Language Models"), singular; none is a common surname.
_TERM_HEADS = frozenset("science theory mining model graph system method algorithm transformer architecture "
                        "agent data net engineering".split())


def _term_word(word: str) -> bool:
    """Whether ``word`` (lower-case) ends as a noun of a field, method or thing (``_TERM_SUFFIXES``) or is one
    of ``_TERM_HEADS``, or is the plural of one ("Networks", "Transformations", "Models")."""
    if word.endswith("s") and not word.endswith(("ss", "ics")):
        word = word[:-1]
    return word in _TERM_HEADS or any(word.endswith(suffix) and len(word) >= least for suffix, least in _TERM_SUFFIXES)


term_word = _term_word  # public name, for the title-run rule of offers.py


def term_words(words: list[str]) -> bool:
    """Whether ``words`` (two or more, any case) make a term by the rules of :func:`term_run`: the last names a
    field, method or thing by its ending, or is a plural after two words or more, or is the acronym of the
    words before it ("Natural Language Processing NLP")."""
    if len(words) < 2:
        return False
    last = words[-1]
    if last.isupper() and "".join(w[0] for w in words[:-1]).upper() == last.rstrip("s"):
        return True
    last = last.lower()
    return _term_word(last) or len(words) >= 3 and last.endswith("s") and not last.endswith("ss")


def term_run(text: str, start: int, end: int) -> bool:
    """Whether the capitalised word ``text[start:end]`` is part of a term, not a person's name: a run of two
    or more title-case words (joined by spaces or hyphens) that is followed by an acronym in brackets
    ("Natural Language Processing (NLP)"), or whose last word names a field, method or thing by its ending
    (:func:`_term_word`: "Computer Vision", "Machine Learning", "Speech Recognition", "Neural Networks"), or a
    run of three or more ending in a plural ("Large Language Models"; a word opening a sentence is not counted).
    People's names end in a surname, and surnames rarely end so ("Kaiming He", "Tom Brown", "Ashish Vaswani" stay
    names). An acronym's plural ("LLMs", "GNNs") is a term too; a word after an initial ("O. Khattab Models ...") is
    a surname, never."""
    if end - start >= 3 and text[end - 1] == "s" and text[start:end - 1].isupper():
        return True
    if _INITIAL_BEFORE_RE.search(text, max(0, start - 4), start) is not None:
        return False
    after = _RUN_AFTER_RE.match(text, end, end + _RUN_REACH)
    run_end = after.end() if after is not None else end
    before = _RUN_BEFORE_RE.search(text, max(0, start - _RUN_REACH), start) if start and text[start - 1] in " \t-" \
        else None
    if after is None and before is None:
        return False  # the usual case: a word alone
    if _ACRONYM_AFTER_RE.match(text, run_end) is not None:
        return True
    last = text[text.rfind(" ", start, run_end) + 1:run_end].rsplit("-", 1)[-1].lower() if after is not None \
        else text[start:end].lower()
    if _term_word(last):
        return True
    run_start = before.start() if before is not None else start
    # a word that opens a sentence is capitalised by its place, not as part of a term: "Maybe Oriol Vinyals"
    # is a two-word run, so a surname ending in "s" after a given name stays a name
    words = len(text[run_start:run_end].split()) - _sentence_start(text, run_start)
    return last.endswith("s") and not last.endswith("ss") and words >= 3


#: Function words that are also common surnames ("X. He", "Y. So"): after an initial they name someone; other
#: function words never do ("A. For.", "A. That.").
_SURNAME_FUNCTION_WORDS = frozenset("he so may will more most long little an do".split()) & FUNCTION_WORDS


#: A given name or an initial right before a word of a name, and one right after it (same line).  An initial may
#: lack its full stop ("Lakshya A Agrawal", as a middle initial is often typed); bare, it is a letter other than
#: "I" (the pronoun) between two words of the name.
_NAME_WORD_BEFORE_RE = re.compile(r"(?:(?-i:[A-Z])(?:\.|[^\W\d_]+)|(?<![^\W_])(?-i:[A-HJ-Z]))[ \t]+\Z")
_NAME_WORD_AFTER_RE = re.compile(r"[ \t]+((?-i:[A-Z])(?:\.|[^\W\d_]+)|(?-i:[A-HJ-Z])(?=[ \t]+(?-i:[A-Z])[a-z]))")


def _name_run(text: str, start: int, end: int, exclude: frozenset[str]) -> tuple[int, int]:
    """The span of the full name that the word at ``text[start:end]`` is part of: up to three capitalised
    :func:`name_like` words or initials on either side ("Ian J. Goodfellow" from any of its words), so that a
    negation before the name or a correction after it reaches each of its words."""
    for _ in range(3):
        word = _NAME_WORD_BEFORE_RE.search(text, max(0, start - 30), start)
        if word is None or not (word.end() - word.start() <= 3 or name_like(word.group().split()[0], exclude)):
            break
        start = word.start()
    for _ in range(3):
        word = _NAME_WORD_AFTER_RE.match(text, end, end + 30)
        if word is None or not (len(word.group(1)) <= 2 or name_like(word.group(1), exclude)):
            break
        end = word.end()
    return start, end


def name_tokens(text: str, exclude: frozenset[str], limit: int = 3,
                counts: Callable[[int, int], bool] | None = None) -> list[str]:
    """Up to ``limit`` words of ``text`` offered as names: capitalised :func:`name_like` words placed as a name
    (:func:`_placed_as_name`) that count (``counts(start, end)``, by default: not retracted); or, for a text of
    at most four words, one of two letters or more, all lower-case or all capitalised ("ian j. goodfellow",
    "_Kingma_"; not "Later later", a sentence), those words."""
    names: list[str] = []
    for match in CAP_WORD_RE.finditer(text):
        if name_like(match.group(), exclude):
            if not _placed_as_name(text, match.start(), match.end(), exclude) or term_run(
                    text, match.start(), match.end()):
                continue  # "Computer Vision", "Natural Language Processing (NLP)": a field, not a person
        elif match.group().lower() not in _SURNAME_FUNCTION_WORDS or (
                _INITIAL_BEFORE_RE.search(text, max(0, match.start() - 4), match.start()) is None):
            continue  # a surname that is also a function word names someone after an initial ("X. He"; not "A. For")
        if interjection(text, match.start(), match.end()):
            continue  # "Ho ho ho": laughter
        if counts(match.start(), match.end()) if counts else not retracted(text, match.start(), match.end()):
            run_start, run_end = _name_run(text, match.start(), match.end(), exclude)
            if (run_start, run_end) != match.span() and retracted(text, run_start, run_end):
                continue  # "Ignore Ian Goodfellow", "Jacob Devlin was my first guess": the whole name is given up
            names.append(match.group())
            if len(names) >= limit:
                return names
    if not names:
        words = _WORD_RE.findall(without_fences(text) if "``" in text or "~~" in text else text)
        if 0 < len(words) <= 4 and all(w.isalpha() for w in words) and any(len(w) > 1 for w in words) and (
                all(w.islower() for w in words) or all(w[0].isupper() for w in words)) and not (
                {w.lower() for w in words} & (NON_NAME_WORDS | exclude)) and not (
                counts is not None and REFUSAL_RE.search(text)) and not term_words(words) and not any(
                len(w) >= 3 and w[-1] == "s" and w[:-1].isupper() for w in words):  # "Keine Ahnung": a refusal;
            names = words  # "Computer Vision": a field; "LLMs": an acronym's plural
    return names


# ----------------------------------------------------------------------------------------- preparing a text


class Response:
    """A response ready for grading (built by :func:`prepare`).

    Attributes:
        text: the first ``MAX_GRADED_CHARS`` characters, LaTeX markup stripped, echoes of the task blanked
            (replaced by spaces, so offsets stay put).
        lower: ``text.lower()``, for cheap substring prefilters.
        raw: the output as given (first ``MAX_GRADED_CHARS`` characters), for quoting in feedback.
        echoed: a copy of the question or rubric was removed.
        truncated: the output was longer than ``MAX_GRADED_CHARS`` characters.
        superseded: spans that :func:`prepare` found superseded by what follows (:func:`trace_spans`), before
            its layout steps changed their tags: reasoning and tool calls; :func:`committed_part` drops them.
    """

    __slots__ = ("text", "lower", "raw", "echoed", "truncated", "ascii", "_may_refuse", "_refuses", "_hits",
                 "superseded")

    def __init__(self, text: str, raw: str = "", echoed: bool = False, truncated: bool = False,
                 lower: str | None = None) -> None:
        self.text = text
        self.lower = text.lower() if lower is None else lower  # prepare() has it already
        self.raw = raw
        self.echoed = echoed
        self.truncated = truncated
        self.ascii = text.isascii()  # a flag of the string: free
        self._may_refuse: bool | None = None
        self._refuses: bool | None = None
        self._hits: dict[KeyTable, tuple[KeyHits, ...]] | None = None
        self.superseded: tuple[tuple[int, int], ...] = ()

    def hits(self, table: KeyTable) -> tuple[KeyHits, ...]:
        """Where the keys of ``table``'s groups occur in ``lower`` (:meth:`KeyTable.scan`), read once per
        response for every rule that uses them."""
        cache = self._hits
        if cache is None:
            cache = self._hits = {}
        found = cache.get(table)
        if found is None:
            found = cache[table] = table.scan(self.lower)
        return found

    def refuses(self) -> bool:
        """:meth:`refused`, read once per response."""
        if self._refuses is None:
            self._refuses = self.refused()
        return self._refuses

    def may_refuse(self) -> bool:
        """Whether a refusal key (``_REFUSAL_KEYS``) occurs anywhere in ``lower``; read once per response, since
        without one no clause of it is a refusal, for any candidate."""
        if self._may_refuse is None:
            self._may_refuse = bool(self.hits(_KEYS)[0])
        return self._may_refuse

    def counts(self, start: int, end: int, numeric: bool = False) -> bool:
        """Whether the candidate at ``text[start:end]`` is offered as an answer: not negated, not corrected, not
        inside a refusal clause and, for a number (``numeric``), not labelled as metadata.  Each check looks
        only at a window around the candidate (key substrings first, then the pattern)."""
        lower = self.lower
        lo = start - WINDOW if start > WINDOW else 0
        # each key search is a cheap necessary condition of the pattern after it (one C call for all the keys)
        if self.ascii:  # the lower-case twins on ``lower`` (see :class:`CaseFree`), called directly
            if _has_negation_key_ascii(lower[lo:start]) and _NEGATION_BEFORE.twin.search(
                    lower, lo, start):
                return False
            if _CORRECTION_AFTER.twin.match(lower, end, end + WINDOW) is not None:
                return False
        else:
            if _has_negation_key(lower[lo:start]) and NEGATION_BEFORE_RE.search(
                    self.text, lo, start):
                return False
            if CORRECTION_AFTER_RE.match(self.text, end, end + WINDOW) is not None:
                return False
        may_refuse = self._may_refuse
        if may_refuse is None:
            may_refuse = self.may_refuse()
        if may_refuse and self.in_refusal(start, end):
            return False
        # the candidate's cue first: the response's refusal (a search of all of it, read once) only when it has none
        if may_refuse and not numeric and not offered_as_answer(self.text, start, end) and self.refuses():
            return False  # "I can't look that up. It proposed Multi-Head Attention": background, not an answer
        if numeric:
            lo = start - METADATA_WINDOW if start > METADATA_WINDOW else 0
            if _has_metadata_key(lower[lo:start]) and _METADATA_BEFORE.search(self, lo, start) is not None:
                return False
            return not id_rule_after(lower, end)
        return True

    def in_refusal(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` lies in a refusal clause: the clause of a refusal phrase, from the last
        contrast word before the phrase (or the clause start) to the first one after it (or the clause end)."""
        if not self.may_refuse():
            return False
        text, lower, n = self.text, self.lower, len(self.text)
        lo = start - CLAUSE_WINDOW if start > CLAUSE_WINDOW else 0
        hi = end + CLAUSE_WINDOW if end + CLAUSE_WINDOW < n else n
        # A text without part stops (most one-line answers) is one part: its window, without the four searches
        # of _part_start/_part_end.
        if "\n" not in text and ";" not in text:
            part_start, part_end = lo, hi
        else:
            part_start, part_end = _part_start(text, lo, start), _part_end(text, end, hi)
        # The clause lies in its line (or semicolon part): an answer on a line of its own is settled here.  A
        # part that is the whole text holds a refusal key (may_refuse): no search needed.
        keys, starts, *_ = self.hits(_KEYS)
        if (part_start or part_end != n) and not keys.within(part_start, part_end):
            return False
        clause_start = _clause_start(text, part_start, start)
        clause_end = _clause_end(text, end, part_end)
        # the same bounds as the part's hold a key (tested above)
        if (clause_start != part_start or clause_end != part_end) and not keys.within(clause_start, clause_end):
            return False
        phrases = matches_at(_REFUSAL.twin, lower, starts.word_starts(lower), clause_start, clause_end) \
            if self.ascii else _REFUSAL.pattern.finditer(text, clause_start, clause_end)
        for phrase in phrases:
            blank_start = clause_start
            for contrast in _CONTRAST.finditer(self, clause_start, phrase.start()):
                blank_start = contrast.start()
            # "A or B, I can't verify which", "A or B — I can't check": a comma or a dash before the refusal starts
            # it, as a comma after it ends it ("I don't know exactly, A or B")
            blank_start = max(blank_start, text.rfind(", ", blank_start, phrase.start()),
                              *(text.rfind(dash, blank_start, phrase.start()) for dash in _CLAUSE_DASHES))
            after = _CONTRAST.search(self, phrase.end(), clause_end)
            blank_end = after.start() if after else clause_end
            comma = text.find(", ", phrase.end(), blank_end)  # "I don't know exactly, A or B": the comma ends it
            blank_end = comma if comma >= 0 else blank_end
            if blank_start <= start and end <= blank_end:
                return True
        return False

    def restated_after(self, end: int) -> int:
        """Where a restatement that follows the candidate ending at ``end`` ends ("A. Actually, it's B": the
        offset before " B"), or -1 when none follows within ``WINDOW`` characters.  The caller decides whether
        a later candidate of its kind makes the first one superseded (:data:`SUPERSEDE_AFTER_RE`)."""
        # one anchored match over a short window: cheaper than any whole-text test of the lead words
        match = _SUPERSEDE_AFTER.match(self, end, end + WINDOW)
        return -1 if match is None else match.end()

    def refused(self) -> bool:
        """Whether the response contains a refusal phrase anywhere (for feedback)."""
        if not self.may_refuse():
            return False
        keys, starts, *_ = self.hits(_KEYS)
        return keyed_any(self, _REFUSAL, _REFUSAL_KEYS, REFUSAL_RE, hits=keys,
                         starts=starts.word_starts(self.lower) if self.ascii else None)


#: Right before a title or a name, what offers it as the answer: a copula or attribution ("it's", "is", "by",
#: "called"), a word of guessing ("I think", "maybe", "probably"), a contrast ("but", "though"), a label's colon,
#: a semicolon or a dash, a line's or the response's start (quotes and emphasis between).
_OFFER_CUE_BEFORE_RE = re.compile(
    r"(?:\b(?:is|was|be|it[’']s|that[’']?s|called|titled|named|by|guess|think|believe|suspect|maybe|perhaps"
    r"|probably|possibly|likely|answer|but|though|although|however|yet|or)|[:;\n]|\s[—–-]|^"
    r"|\b(?:know|sure|certain|recall|remember|say|tell)\b[^,.;:\n]{0,20},)(?:\s*\b(?:either|one\s+of))?"
    r"[\s\"“‘'`*_(\[«‹„「『]*$",
    re.IGNORECASE,
)
#: After a candidate that opens a sentence: the sentence ends there (or goes on only with a guessing phrase).
_ALONE_IN_SENTENCE_RE = re.compile(r"[\s\"”’'`*_)\]»›“」』]*(?:[.!?;\n]|$|\s+or\s|,\s*(?:i\s+think|i\s+believe|maybe"
                                   r"|perhaps|probably|possibly|i\s+guess))", re.IGNORECASE)


#: Dashes that set a clause off ("A or B — I can't check").
_CLAUSE_DASHES: tuple[str, ...] = (" — ", " – ", " - ", "—")


def offered_as_answer(text: str, start: int, end: int) -> bool:
    """Whether the title or name at ``text[start:end]`` is offered as the answer, for a response that refuses:
    a cue right before it (``_OFFER_CUE_BEFORE_RE``: "but it's X", "Maybe X", "Answer: X", X on a line of its
    own), or it is a sentence of its own ("I can't check. Attention Is All You Need.").  Elsewhere in such a
    response it is background ("I can't look that up. It proposed Multi-Head Attention", "... a team at Google
    Brain"), and offers no answer."""
    if _OFFER_CUE_BEFORE_RE.search(text, max(0, start - 30), start) is not None:
        return True
    head = text[max(0, start - 4):start].rstrip(" \"“‘'`*_([«‹„「『")
    return (not head or head[-1] in ".!?") and _ALONE_IN_SENTENCE_RE.match(text, end) is not None


#: A superseding candidate starts at most this many characters after the restatement ("Actually, it was
#: submitted in 2017"); further on it is more information, not a correction ("2015, but it was published at
#: CVPR in 2016").
RESTATE_REACH = 16


def superseded(r: Response, end: int, later: Callable[[], Iterable[int]]) -> bool:
    """Whether the candidate ending at ``end`` is superseded: a restatement follows it
    (:meth:`Response.restated_after`) and another candidate of its kind starts at one of the offsets
    ``later()`` (called only after a restatement is found), at most ``RESTATE_REACH`` characters after it."""
    at = r.restated_after(end)
    return at >= 0 and any(at <= start <= at + RESTATE_REACH for start in later())


# ------------------------------------------------------------------------- what the response takes back or concedes

#: A retraction of everything said before it: the answer is what follows the last one ("I think A or B. Final
#: answer: B", "Final: B", "A. Hmm, scratch that: B", "A... no, wait. B", "I meant B", "Correction: B", "Edit: B",
#: "Update: B", "On second thought, B", "on reflection, B", "the correct answer is B").
RETRACT_ALL_RE = re.compile(
    r"\b(?:(?:my\s+)?final\s+answer|final(?=\s*:)|(?:edit|update|revised)(?=\s*:)|(?:on|upon|after)\s+(?:further\s+)?"
    r"(?:reflection|thought)|thinking\s+again|scratch\s+(?:that|this)|strike\s+that|no[,.!]?\s+wait|wait[,.!]?\s+no\b"
    r"|i\s+meant|correction(?![\s:,—–-]*not\b)|on\s+second\s+thought|i\s+take\s+(?:that|it)\s+back"
    r"|let\s+me\s+correct|i\s+was\s+wrong|(?:the\s+)?(?:correct|right|actual|real|true)\s+answer(?:\s+is|(?=\s*:)))\b",
    re.IGNORECASE,
)
_RETRACT_KEYS: tuple[str, ...] = ("final", "scratch", "strike", "wait", "meant", "correct", "second\nthought",
                                  "second thought", "take", "right answer", "right\nanswer", "actual answer",
                                  "actual\nanswer", "real answer", "real\nanswer", "true answer", "true\nanswer",
                                  "wrong", "edit", "update", "revised", "reflection", "thought", "thinking")
#: A concession: what the clause holding it says is what others say, not the answer ("You might see A cited",
#: "Some say A", "A is usually credited", "A is a common misconception", "Neither A nor B").
CONCESSION_RE = re.compile(
    r"\b(?:you\s+(?:might|may|could|will|would|often|sometimes)\s+(?:\w+\s+)?(?:see|find|read|hear|encounter|think"
    r"|seen|found|heard|encountered)"
    r"|(?:many|most|some|several|other)\s+(?:people\s+|sources\s+|readers\s+)?(?:assume|think|believe|say|claim|cite"
    r"|guess|remember|expect|report|list|mention|credit|attribute|suggest|give|have\s+claimed)"
    r"|(?:natural|obvious|tempting|easy|understandable|typical|usual)\s+(?:guess|answer|assumption|choice|mistake)"
    r"|some(?:\s+(?:people|sources|sites|papers|references|websites|databases|listings|authors|citations))?\s+"
    r"(?:say|claim|think|believe|list|cite|give|credit|attribute|report|suggest|mention)"
    r"|(?:often|commonly|usually|sometimes|frequently|widely|mistakenly|wrongly|incorrectly|erroneously|popularly"
    r"|occasionally|generally)\s+(?:\w+\s+)?(?:cited|credited|attributed|given|listed|quoted|called|confused|thought"
    r"|believed|assumed|reported|mistaken|associated|named|mentioned|said|misattributed|stated)"
    r"|(?:common|frequent|popular|widespread)\s+(?:misconception|mistake|confusion|error|misattribution|guess"
    r"|answer|belief)|people\s+(?:often\s+|sometimes\s+|usually\s+)?(?:think|say|assume|believe|guess|cite)"
    r"|neither|it[’']?s\s+tempting|(?:might|may)\s+(?:be\s+tempted|assume|expect)|contrary\s+to|despite)\b",
    re.IGNORECASE,
)
_CONCESSION_KEYS: tuple[str, ...] = ("you", "some", "many", "most", "several", "other", "natural", "obvious", "easy",
                                     "understandable", "typical", "often", "usual", "common", "frequent", "widely",
                                     "mistaken", "wrong", "incorrect", "erroneous", "popular", "occasional", "general",
                                     "people", "neither", "tempt", "assume", "expect", "contrary", "despite")
#: The claim after a concession: a strong contrast (";", a dash, "in fact", "actually"), or "but", "however",
#: "yet" or a comma and a commitment ("but it's", "but the answer is", "however, the first author was", ", it is").
CLAIM_AFTER_RE = re.compile(
    r"[;—–]|\s-\s|\b(?:in\s+fact|actually|in\s+reality|in\s+truth)\b"
    r"|\bthe\s+(?:correct|right|actual|real|true)\s+(?:(?:\w+\s+){0,2}(?:is|was)\b|\w+\s*:)"
    r"|(?:\b(?:but|however|yet|rather|whereas)\b,?|,)\s*(?=(?:it|this|that)(?:[’']s|\s+is|\s+was)\b"
    r"|the\s+(?:\w+\s+){0,3}(?:is|was)\b|in\s+fact|actually|really|rather|in\s+reality)",
    re.IGNORECASE,
)
#: What may open the sentence of a claim before its contrast word ("It's actually B", "In reality, B").
_CLAIM_LEAD_RE = re.compile(r"\s*(?:(?:it|this|that)(?:[’']s|\s+is|\s+was)\s*)?", re.IGNORECASE)
#: A concession's sentence that points back at the previous one ("That's a common mistake").
_ANAPHORA_RE = re.compile(r"(?:that|this|it)(?:[’']s|\s+is|\s+was)\b", re.IGNORECASE)
_CONCESSION = CaseFree(CONCESSION_RE)
_CLAIM_AFTER = CaseFree(CLAIM_AFTER_RE)
_RETRACT_ALL = CaseFree(RETRACT_ALL_RE)


#: How far back the start of a concession's sentence is looked for (bounds the work per concession).
SENTENCE_REACH = 300


def _sentence_before(text: str, at: int) -> int:
    """Where the sentence holding offset ``at`` starts: after the last ". ", "! ", "? " or line break before it
    (at most ``SENTENCE_REACH`` characters back)."""
    best = text.rfind("\n", max(0, at - SENTENCE_REACH), at) + 1
    best = max(best, at - SENTENCE_REACH)
    for stop in (". ", "! ", "? "):
        i = text.rfind(stop, best, at)
        while i >= 0 and stop == ". " and _abbreviation_before(text, i):
            i = text.rfind(stop, best, i)
        if i >= 0:
            best = i + 2
    return best


#: What ends a sentence after a point: a stop before a space or a line break, or a blank line (a line break alone
#: does not: a heading's items, a table's rows go on).
_SENTENCE_ENDS = (". ", ".\n", "! ", "!\n", "? ", "?\n", "\n\n")


def sentence_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence (or sentences) holding ``text[start:end]``: from :func:`_sentence_before` ``start`` to the
    first stop after ``end`` (``_SENTENCE_ENDS``, the full stop of an initial or "et al." aside), each end at most
    ``SENTENCE_REACH`` characters away."""
    hi = min(len(text), end + SENTENCE_REACH)
    for stop in _SENTENCE_ENDS:
        i = text.find(stop, end, hi)
        while i >= 0 and stop[0] == "." and _abbreviation_before(text, i):
            i = text.find(stop, i + 1, hi)
        if i >= 0:
            hi = i + 1
    return _sentence_before(text, start), hi


def _abbreviation_before(text: str, dot: int) -> bool:
    """Whether the full stop at ``dot`` ends an initial ("Ian J. Goodfellow") or "et al.", not a sentence."""
    return dot >= 1 and text[dot - 1].isupper() and (dot < 2 or not text[dot - 2].isalpha()) or text.endswith(
        ("et al", "et. al"), 0, dot)


def retracted_prefix(r: Response) -> list[tuple[int, int]]:
    """The text before the last retraction of everything said so far (``RETRACT_ALL_RE``), as one span, or
    ``[]``: "I think A or B. Final answer: B" offers B alone.  After "final answer", the answer is its line (or
    the next line when the marker ends its own): the lines after it are remarks ("(I first considered A.)")."""
    keys = r.hits(_KEYS)[2]
    if not keys:
        return []
    found = keyed_matches(r, _RETRACT_ALL, _RETRACT_KEYS, RETRACT_ALL_RE, hits=keys)
    if not found:
        return []
    last = found[-1]
    spans = [(0, last.start())] if last.start() else []
    if last.group().lower().endswith(("answer", "final")):  # "Final answer: B" is B's line; what follows: remarks
        text = r.text
        line_end = text.find("\n", last.end())
        if line_end >= 0 and not text[last.end():line_end].strip(" \t*_:#>-"):
            line_end = text.find("\n", line_end + 1)  # "Final answer:" then the answer on the next line
        if line_end >= 0:
            spans.append((line_end, len(text)))
    return spans


def _key_spans(r: Response, keys: Iterable[str], hits: KeyHits | None) -> list[tuple[int, int]]:
    """``(start, end)`` of the occurrences of ``keys`` in ``r.lower``, key by key, each key's in order and not
    inside its previous one; read from ``hits`` (the keys' :class:`KeyHits`) when given."""
    if hits is not None:
        return hits.occurrences(keys)
    lower, out = r.lower, []
    for key in keys:
        i = lower.find(key)
        while i >= 0:
            out.append((i, i + len(key)))
            i = lower.find(key, i + len(key))
    return out


def matches_at(pattern: re.Pattern[str], subject: str, starts: list[int], pos: int,
                endpos: int) -> Iterator[re.Match[str]]:
    """``pattern.finditer(subject, pos, endpos)``, tried only at the offsets ``starts`` (ascending): the same
    matches when every match of ``pattern`` starts at one of them and none is empty (each ``match`` is anchored,
    where ``finditer`` tries the branch-first pattern at every position)."""
    i, n = bisect_left(starts, pos), len(starts)
    while i < n:
        at = starts[i]
        if at >= endpos:
            return
        found = pattern.match(subject, at, endpos)
        if found is None:
            i += 1
        else:
            yield found
            i = bisect_left(starts, found.end(), i + 1)


def _keyed_hits(r: Response, pattern: CaseFree, occurrences: list[tuple[int, int]], before: int,
                after: int, starts: list[int] | None = None) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` near the key ``occurrences`` (``(start, end)``; see :func:`keyed_matches`), as
    found, each window searched from the end of the last match (as ``finditer`` goes on); ``r.lower`` and
    ``r.text`` have the same length.  With ``starts`` (ascending
    offsets of ``r.lower`` where every match of ``pattern``'s twin starts; ASCII text only), the first match in a
    window is found by anchored matches there instead of a search over every position of it."""
    lower = r.lower
    twin = pattern.twin if r.ascii else pattern.pattern
    subject = lower if r.ascii else r.text
    n, done = len(lower), 0
    for i, j in sorted(occurrences):
        # a window starts after the last match found, as finditer goes on after it: else a window whose key
        # follows a match closely finds that match again and not the one holding its own key
        lo, hi = max(done, i - before if i > before else 0), min(n, j + after)
        if lo >= hi:
            continue
        if starts is None:
            hit = twin.search(subject, lo, hi)
        else:
            hit = next(matches_at(twin, subject, starts, lo, hi), None)
        if hit is not None:
            full = twin.match(subject, hit.start())
            if full is not None:
                done = max(done, full.end())
                yield full


def keyed_matches(r: Response, pattern: CaseFree, keys: Iterable[str], whole: re.Pattern[str],
                  before: int = 40, after: int = 80, hits: KeyHits | None = None,
                  starts: list[int] | None = None) -> list[re.Match[str]]:
    """The matches of ``whole`` in ``r.text``, in order of their starts, searched only in windows around the
    occurrences of ``keys`` in ``r.lower`` (every match of the pattern holds a key, at most ``before`` characters
    after its start and ``after`` before its end; a whole-text search costs a pass of a case-insensitive,
    branch-first pattern over every character, a key occurs in a few places).  A match in a window is taken only
    when the pattern also matches there in the whole text (the window's end cuts lookaheads short).  Falls back to
    ``whole.finditer`` when lower-casing changed the text's length.  ``hits``: the keys' occurrences, when the
    response has read them (:meth:`Response.hits`); ``starts``: see :func:`_keyed_hits`."""
    if len(r.lower) != len(r.text):
        return list(whole.finditer(r.text))
    occurrences = _key_spans(r, keys, hits)
    if _windows_cover(len(occurrences), before + after, len(r.text)):
        return list(whole.finditer(r.text))
    found: dict[int, re.Match[str]] = {}
    for hit in _keyed_hits(r, pattern, occurrences, before, after, starts):
        found.setdefault(hit.start(), hit)
    return [found[k] for k in sorted(found)]


def keyed_any(r: Response, pattern: CaseFree, keys: Iterable[str], whole: re.Pattern[str],
              before: int = 40, after: int = 80, hits: KeyHits | None = None,
              starts: list[int] | None = None) -> bool:
    """Whether :func:`keyed_matches` finds any match (stops at the first)."""
    if len(r.lower) != len(r.text):
        return whole.search(r.text) is not None
    occurrences = _key_spans(r, keys, hits)
    if _windows_cover(len(occurrences), before + after, len(r.text)):
        return whole.search(r.text) is not None
    return next(_keyed_hits(r, pattern, occurrences, before, after, starts), None) is not None


#: Windowed searches are worth it while their windows, summed, stay under this many times the text's length and
#: the text is this long at least: a text made of a key repeated ("not not not ...", 200 KB) would otherwise be
#: searched once per occurrence, windows overlapping, some 30 times over (3 s a grade; blind pass 9).
_WINDOW_COVER_LIMIT = 2
_WINDOW_MIN_TEXT = 4_000


def _windows_cover(occurrences: int, window: int, size: int) -> bool:
    """Whether ``occurrences`` windows of ``window`` characters would read a ``size``-character text more than
    ``_WINDOW_COVER_LIMIT`` times over (texts under ``_WINDOW_MIN_TEXT`` characters never: their windows cost
    little), so one pass over the whole text is cheaper; the whole-text pass finds what the windows find, as
    the windowed functions' docstrings say, and is what they fall back to on texts lower-casing changes."""
    return size >= _WINDOW_MIN_TEXT and occurrences * window > _WINDOW_COVER_LIMIT * size


def _concession_cues(r: Response) -> list[re.Match[str]]:
    """The matches of ``CONCESSION_RE``, in order, tried only at the words its alternatives start with
    (``_CONCESSION_FIRST_WORDS``), each by an anchored match: a whole-text search costs a pass of the
    case-insensitive, branch-first pattern over every character."""
    lower, text = r.lower, r.text
    if len(lower) != len(text):
        return list(CONCESSION_RE.finditer(text))
    twin = _CONCESSION.twin if r.ascii else CONCESSION_RE
    subject = lower if r.ascii else text
    match = twin.match
    return [cue for cue in (match(subject, i) for i in r.hits(_KEYS)[4].word_starts(lower))
            if cue is not None]


#: The first words of ``CONCESSION_RE``'s alternatives: every match starts with one, at a word's start.
_CONCESSION_FIRST_WORDS: tuple[str, ...] = (
    "you", "many", "most", "some", "several", "other", "natural", "obvious", "tempting", "easy", "understandable",
    "typical", "usual", "often", "common", "sometimes", "frequent", "widely", "mistaken", "wrong", "incorrect",
    "erroneous", "popular", "occasional", "general", "widespread", "people", "neither", "it's", "it’s", "its",
    "might", "may",
    "contrary", "despite")


def concession_spans(r: Response) -> list[tuple[int, int]]:
    """Spans of concessions followed by a claim: from the start of the sentence holding the concession
    (``CONCESSION_RE``) to the claim (``CLAIM_AFTER_RE``) within the sentence or at the start of the next one
    ("You might see A cited, but the answer is C": the span holds A; "Some say A; in fact C"; "Neither A nor B
    - it's C")."""
    if not r.hits(_KEYS)[3]:
        return []
    text, spans = r.text, []
    for cue in _concession_cues(r):
        start = _sentence_before(text, cue.start())
        end = text.find("\n", cue.end(), cue.end() + SENTENCE_REACH)
        end = min(len(text), cue.end() + SENTENCE_REACH) if end < 0 else end
        claim = _CLAIM_AFTER.search(r, cue.end(), end)
        if claim is not None:
            stop = _sentence_before(text, claim.start())
            if stop <= cue.start() or _CLAIM_LEAD_RE.fullmatch(text, stop, claim.start()):
                if _ANAPHORA_RE.match(text, start) and start >= 2:  # "A? That's a common mistake - it's B"
                    start = _sentence_before(text, start - 2)
                spans.append((start, claim.start()))
    return spans


#: What withdraws the values after it: a label of rejected candidates ("Alternatives considered and rejected:",
#: "Rejected alternative:", "Ruled out:") or an account of what the answer wrote before ("earlier I wrote",
#: "I previously said", "I had mistakenly given", "my first guess was").
REJECTION_RE = re.compile(
    r"\b(?:(?:(?:considered\s+(?:and|but)\s+)?(?:rejected|ruled\s+out|discarded|dismissed|excluded|eliminated)"
    r"(?:\s+(?:alternatives?|candidates?|options?|answers?|guesses|ids?|titles?|names?|years?))?[ \t*_]*:"
    r"|(?:earlier|previously|before|originally|initially|at\s+first)\s*,?\s*i\s+(?:had\s+)?"
    r"|i\s+(?:had\s+)?(?:earlier|previously|originally|initially|first|mistakenly|wrongly)\s+)"
    r"(?:(?<=:)|wrote|written|said|gave|given|typed|put|listed|answered|stated)"
    r"|my\s+(?:first|initial|original|earlier|previous|old)\s+(?:guess|answer|pick|choice|thought)\s+was)",
    re.IGNORECASE,
)
#: Every match holds one of these (on ASCII text; see :class:`CaseFree`): a rejection word, or "i" and the verb or
#: adverb of the account (``_ACCOUNT_KEY_RE``).
_REJECTION_KEYS: tuple[str, ...] = ("reject", "ruled out", "discard", "dismiss", "exclud", "eliminat", "guess was",
                                    "answer was", "pick was", "choice was", "thought was")
#: The account's key: one pattern with the literal prefix "i " (re scans for the prefix in C), not a find per verb.
_ACCOUNT_KEY_RE = re.compile(r"i (?:wrote|said|gave|had|typed|put|listed|answered|stated|previously|earlier"
                             r"|originally|initially|first|mistakenly|wrongly)\b")
_REJECTION = CaseFree(REJECTION_RE)
#: Every text holding a role line or a role field of a transcript holds one of these (lower case), or a quoted line.
_TURN_KEYS: tuple[str, ...] = ("user:", "human:", "system:", "ai:", "role\"", "role'", "\n>")
#: The keys a response is read for, in one pass (:meth:`Response.hits`): of a refusal (group 0), the first words of a
#: refusal phrase (group 1), the keys of a retraction (group 2), of a concession (group 3), the first words of a
#: concession (group 4), the keys of a rejection (group 5: ``_REJECTION_KEYS``, a scan of the text per key
#: otherwise) and of a transcript's turns (group 6: ``_TURN_KEYS``).
_KEYS = KeyTable(_REFUSAL_KEYS, _REFUSAL_STARTS, _RETRACT_KEYS, _CONCESSION_KEYS, _CONCESSION_FIRST_WORDS,
                 _REJECTION_KEYS, _TURN_KEYS)


def rejected_spans(r: Response) -> list[tuple[int, int]]:
    """Spans of what the response rejects or reports as its earlier mistake (``REJECTION_RE``): a labelled list of
    rejected candidates up to its line's end ("Alternatives considered and rejected: A, B"; the lines below,
    its list's items, when the label ends its line), and an account of an earlier answer up to its clause's
    end ("Edit: C (earlier I wrote A by mistake)", "C; I previously said A").  Searched only around the keys."""
    text, lower, spans = r.text, r.lower, []
    keys = r.hits(_KEYS)[5]
    hits = keyed_matches(r, _REJECTION, _REJECTION_KEYS, REJECTION_RE, 40, 40, hits=keys) if keys else []
    if _ACCOUNT_KEY_RE.search(lower) is not None and len(lower) == len(text):
        twin = _REJECTION.twin if r.ascii else REJECTION_RE
        for key in _ACCOUNT_KEY_RE.finditer(lower):  # the account starts at most 30 characters before its key
            hit = twin.search(lower if r.ascii else text, max(0, key.start() - 30), key.end() + 20)
            if hit is not None:
                hits.append(hit)
    for hit in hits:
        if text[hit.end() - 1] == ":":  # a label: its line, or the lines below it
            end = text.find("\n", hit.end())
            if end >= 0 and not text[hit.end():end].strip(" \t*_"):
                while end >= 0 and _LIST_MARKER_RE.match(text, end + 1):  # the list's items below the label
                    end = text.find("\n", end + 1)
            spans.append((hit.start(), len(text) if end < 0 else end))
        else:  # an account of an earlier answer: to its clause's end
            reach = min(len(text), hit.end() + SENTENCE_REACH)
            stop = _ACCOUNT_END_RE.search(text, hit.end(), reach)
            while stop is not None and _INITIAL_STOP_RE.match(text, stop.start() - 2) and (
                    (word := _NEXT_WORD_AFTER_RE.match(text, stop.end())) is not None
                    and name_like(word.group(1), frozenset())):  # "I previously said T. Mikolov": a name goes on
                stop = _ACCOUNT_END_RE.search(text, stop.end(), reach)
            spans.append((hit.start(), stop.start() if stop else min(len(text), hit.end() + SENTENCE_REACH)))
    return spans


#: Where an account of an earlier answer ends: a closing bracket, a sentence's end (not the full stop of "et al."
#: nor of an initial a name follows: "I previously said T. Mikolov"), a semicolon, a line break, or a contrast
#: that turns to what the answer is now ("I initially answered A, but after checking, it is B").
_ACCOUNT_END_RE = re.compile(r"[)\];\n]|(?<!\bet\sal)[.!?](?=\s|\Z)|,?[ \t]+(?:but|however|though|although|yet)\b|\Z")
#: An initial's full stop (at offset 2 of the match) and the word after it.
_INITIAL_STOP_RE = re.compile(r"[\s.,](?-i:[A-Z])\.")
_NEXT_WORD_AFTER_RE = re.compile(r"[ \t]+((?-i:[A-Z])[^\W\d_]+)")


def _fewer_than_two_gaps(text: str) -> bool:
    """``text.count(" ") + text.count("\n") < 2``, stopping at the second gap (a long answer has one at once)."""
    space = text.find(" ")
    if space >= 0 and text.find(" ", space + 1) >= 0:
        return False
    return text.count(" ") + text.count("\n") < 2


#: A role line of a chat transcript ("User:", "**Assistant:**", "> Human:"): its turn runs to the next role line.
_ROLE_LINE_RE = re.compile(r"^[ \t*_>#]*(user|human|assistant|system|ai)[ \t*_]*:", re.IGNORECASE | re.MULTILINE)
#: A role field of a chat's messages in JSON ("{"role": "user", "content": ...}").
_ROLE_FIELD_RE = re.compile(r"[\"']role[\"'][ \t]*:[ \t]*[\"'](user|human|assistant|system|ai|developer|tool"
                            r"|model)[\"']", re.IGNORECASE)
#: The roles whose turns are the answerer's.
_ANSWERER_ROLES = frozenset({"assistant", "ai", "model"})
#: A block of reasoning or of a tool's call or result, in the tags models and agent frameworks write.
_TRACE_BLOCK_RE = re.compile(r"<(think|thinking|reasoning|reflection|scratchpad|tool_call|tool_calls|tool_result"
                             r"|tool_response|tool_use|function_call|function_result|tool_output)>.*?</\1>",
                             re.IGNORECASE | re.DOTALL)
#: The tags of reasoning blocks (the others of ``_TRACE_BLOCK_RE`` hold a tool's call or result).
_REASONING_TAGS = frozenset({"think", "thinking", "reasoning", "reflection", "scratchpad"})
#: A tool call written as JSON: an object naming the tool, then its arguments (an object or a string).  A tool
#: that answers ("final_answer", "submit_answer", "respond") carries the answer in its arguments: no request.
_TOOL_CALL_RE = re.compile(r"\{\s*[\"'](?:name|tool|function|tool_name)[\"']\s*:\s*[\"'](?![^\"'\n]{0,40}"
                           r"(?:answer|submit|final|respond|reply))[^\"'\n]{0,80}[\"']\s*,\s*"
                           r"[\"'](?:arguments|args|parameters|input)[\"']\s*:\s*(?:\{[^{}]{0,2000}\}|\"(?:[^\"\\\\]"
                           r"|\\.){0,2000}\")\s*\}")
#: The name of a tool that answers, in a call ("name": "final_answer"): its block is the answer, not a request.
_ANSWER_TOOL_RE = re.compile(r"[\"'](?:name|tool|function|tool_name)[\"']\s*:\s*[\"'][^\"'\n]{0,40}"
                             r"(?:answer|submit|final|respond|reply)", re.IGNORECASE)
_has_call_key = contains_any(("arguments", "args", "parameters", "input"))
#: A line quoting an earlier message, as e-mail replies do ("> On Monday, you wrote:", "> Is it W?").
_QUOTED_LINE_RE = re.compile(r"^[ \t]*>[^\n]*$", re.MULTILINE)
#: The attribution of a quoted message ("On Monday, you wrote:", "You asked:", "Jane Doe writes:").
_ATTRIBUTION_RE = re.compile(r"\b(?:wrote|writes|asked|asks|said|says)[ \t]*:", re.IGNORECASE)


def trace_spans(text: str, brace: bool = True) -> list[tuple[int, int]]:
    """What an agent's trace holds before its answer, as spans of ``text`` (read by :func:`prepare` before its
    layout steps rewrite tags and JSON): from the start to the end of the last ``<think>``-like block (reasoning
    the text after it supersedes, as "Final answer:" does), each tool call or result block
    (``_TRACE_BLOCK_RE``) and each tool call written as JSON (``_TOOL_CALL_RE``): its query repeats the question,
    the agent's request, not its answer.  ``[]`` when nothing but blanks follows the last of them: the trace is
    then all there is to grade.  ``brace``: whether ``text`` may hold a "{" (``False`` skips the JSON search)."""
    spans: list[tuple[int, int]] = []
    if "</" in text:
        blocks = [m for m in _TRACE_BLOCK_RE.finditer(text)]
        think = [m.end() for m in blocks if m.group(1).lower() in _REASONING_TAGS]
        if think:
            spans.append((0, think[-1]))
        spans += [m.span() for m in blocks if _ANSWER_TOOL_RE.search(text, m.start(), m.end()) is None]
    if brace and "{" in text and _has_call_key(text):
        spans += [m.span() for m in _TOOL_CALL_RE.finditer(text)]
    if not spans or not text[max(end for _, end in spans):].strip(" \t\n>→=-"):
        return []
    return spans


def turn_spans(r: Response) -> list[tuple[int, int]]:
    """What is not the answer's final turn, as spans to blank (issue 17): what :func:`prepare` found superseded
    (``r.superseded``: the reasoning before a "Final Answer" heading or a ``<think>`` block's end, tool calls
    and their results, :func:`trace_spans`); in a chat transcript (role lines or a ``messages`` array with a
    user's or system's turn and an assistant's), everything but the last assistant turn (a user's question "Is
    it W?" offers no W); quoted messages followed by unquoted text (:func:`_quoted_messages`), another's words.
    ``[]`` when none applies."""
    text, spans = r.text, list(r.superseded)
    roles = [(m.start(), m.end(), m.group(1).lower()) for m in _ROLE_LINE_RE.finditer(text)]
    if not roles and "role" in r.lower:
        roles = [(m.start(), m.end(), m.group(1).lower()) for m in _ROLE_FIELD_RE.finditer(text)]
    if roles and any(role in _ANSWERER_ROLES for *_, role in roles) and any(
            role not in _ANSWERER_ROLES for *_, role in roles):
        last = max(i for i, (*_, role) in enumerate(roles) if role in _ANSWERER_ROLES)
        spans.append((0, roles[last][1]))
        if last + 1 < len(roles):
            spans.append((roles[last + 1][0], len(text)))
        return spans
    if ">" in text:
        spans += _quoted_messages(text)
    return spans


def _quoted_messages(text: str) -> list[tuple[int, int]]:
    """The blocks of quoted lines ("> ...") that quote an earlier message, followed by unquoted text: a block with
    an attribution ("On Monday, you wrote:", "You asked:") or ending in a question ("> Is it W?").  Another
    quoted block is the answer's own markup (a blockquote) and stays."""
    blocks: list[tuple[int, int]] = []
    for m in _QUOTED_LINE_RE.finditer(text):
        if blocks and text[blocks[-1][1]:m.start()].strip() == "":
            blocks[-1] = (blocks[-1][0], m.end())
        else:
            blocks.append(m.span())
    return [(a, b) for a, b in blocks if text[b:].strip() and (
        text[a:b].rstrip(" \t*_\"'”’").endswith("?") or _ATTRIBUTION_RE.search(text, a, b) is not None)]


def committed_part(r: Response) -> Response | None:
    """``r`` with what it takes back (:func:`retracted_prefix`) or concedes (:func:`concession_spans`) blanked,
    or ``None`` when it does neither: the graders grade this part first, and the whole response only when the
    part offers no answer (see :func:`verifiers.arxiv.grading.grade_committed`)."""
    text = r.text
    if _fewer_than_two_gaps(text):  # a retraction or a concession takes a few words: not "A B"
        return None
    turns = turn_spans(r) if r.superseded or r.hits(_KEYS)[6] or r.lower[:1] == ">" else []
    retract, concede = r.hits(_KEYS)[2:4]
    if not retract and not concede and not r.hits(_KEYS)[5] and _ACCOUNT_KEY_RE.search(r.lower) is None and (
            not turns):
        return None
    spans = retracted_prefix(r) + concession_spans(r) + rejected_spans(r) + turns
    if not spans:
        return None
    text = blank(r.text, spans)
    # The part is graded on its own (no offset is compared with r's): a blanked run is read as one space, as
    # prepare() reads every whitespace run, so that no pattern with several \s* in a row meets a long run.
    text = _SPACE_RUN_RE.sub(" ", text)
    return Response(text, r.raw, r.echoed, r.truncated)


_SPACE_RUN_RE = re.compile(r"  +")


def windowed_spans(text: str, lower: str, key: str, pattern: re.Pattern[str], reach: int) -> list[tuple[int, int]]:
    """Spans of ``pattern``'s matches in ``text``, searched only within ``reach`` characters of each occurrence
    of ``key`` in ``lower`` (``text.lower()``; the whole text when the two differ in length)."""
    i = lower.find(key)
    if i < 0:
        return []
    if len(lower) != len(text) or _windows_cover(lower.count(key), 2 * reach + len(key), len(text)):
        return [m.span() for m in pattern.finditer(text)]
    out: list[tuple[int, int]] = []
    pos = 0
    while i >= 0:
        found = pattern.search(text, max(pos, i - reach), min(len(text), i + len(key) + reach))
        if found is not None:
            whole = pattern.match(text, found.start())  # again without the window's end (lookaheads)
            if whole is not None:
                out.append(whole.span())
                pos = whole.end()
        i = lower.find(key, max(i + 1, pos))
    return out


#: A bracketed span that may be a template's placeholder ("[TITLE]", "<first author>", "{title}", "[Insert title
#: here]"): its words are read by :func:`_placeholder_words`.
_BRACKETED_RE = re.compile(r"\[([^\[\]\n]{1,40})\]|<([^<>\n]{1,40})>|\{\{?([^{}\n]{1,40})\}?\}")
#: A masked value: a word of repeated X's (with digits, dots or hyphens: "XXXX.XXXXX", "20XX", "17xx.xxxxx"), the
#: ID scheme's letters ("YYMM.NNNNN") or a run of question marks or hashes.
_MASK_RE = re.compile(r"(?<![\w.])(?:[0-9]*(?:X{2,}|x{2,})[0-9]*(?:[./-][0-9]*(?:X+|x+|N+)[0-9]*)*|YYMM(?:\.N{4,5})?"
                      r"|N{4,5}|YYYY(?:[./-]MM(?:[./-]DD)?)?|(?:DD[./-])?MM[./-]YYYY|\?{2,}|#{2,})(?![\w])")
#: Words of a template's placeholder, beyond those that are never a name (``NON_NAME_WORDS``).
_PLACEHOLDER_WORDS = frozenset("insert enter fill here your placeholder blank todo tbd tba xxx full last given "
                               "surname lastname firstname fullname value field".split())


def _bracketed(text: str) -> list[re.Match[str]]:
    """``list(_BRACKETED_RE.finditer(text))``, matched only at the offsets of "[", "<" and "{" (where every match
    starts): a search of the branch-first pattern tries every character of a long answer."""
    starts = []
    for c in "[<{":
        i = text.find(c)
        while i >= 0:
            starts.append(i)
            i = text.find(c, i + 1)
    out, pos, match = [], 0, _BRACKETED_RE.match
    for i in sorted(starts):
        if i >= pos:
            m = match(text, i)
            if m is not None:
                out.append(m)
                pos = m.end()
    return out


def _placeholder_words(inside: str) -> bool:
    """Whether the inside of a bracketed span is a placeholder: its words are all words that are never a name or
    placeholder words (``_PLACEHOLDER_WORDS``), or it is one upper-case identifier ("PAPER_TITLE"); a quoted key
    and its value are a record's field, not a placeholder ({"first_author": "He"}: "He" is a value)."""
    if '":' in inside or "':" in inside:  # a record's field ({"first_author": "He"}): a key and its value
        return False
    words = _WORD_RE.findall(inside.replace("_", " "))
    if not words:
        return False
    return all(w.lower() in NON_NAME_WORDS or w.lower() in _PLACEHOLDER_WORDS for w in words) or (
        "_" in inside and inside.strip().isupper())


#: Markdown strikethrough: deleted text.
_STRUCK_RE = re.compile(r"~~[^~\n]{1,300}~~")
#: A name-shaped placeholder: the stand-in names of legal and template use ("John Doe", "Jane Doe", "Richard Roe",
#: "Doe, J."), the template's own words ("Firstname Lastname", "Given-name Surname", "Author Name", "Some Author")
#: the names of nobody ("Anonymous", "Anon.", "Unknown Author", "A. N. Other") and filler text ("Lorem Ipsum",
#: "Foo Bar").
_PLACEHOLDER_NAME_RE = re.compile(
    r"\b(?:(?:john|jane|joe|janie|johnny|richard|mary|j\.)\s+(?:[a-z]\.\s+)?(?:doe|roe)\b"
    r"|(?:doe|roe),?\s+(?:john|jane|j\.)(?![\w.])"
    r"|(?:first|given|author)[\s_-]?names?(?:\s*[,/]?\s*|[\s_-]?)(?:last|family|sur)[\s_-]?names?\b"
    r"|(?:last|family|sur)[\s_-]?names?\s*[,/]?\s*(?:first|given)[\s_-]?names?\b"
    r"|(?:some|an|the|unknown|anonymous)\s+(?:author|authors|person|researcher)\b|author[\s_-]names?\b"
    r"|anonymous(?:\s+et\.?\s+al\b)?|anon\.|a\.\s*n\.\s*other\b|(?:doe|roe)(?=\s+et\.?\s+al\b)"
    r"|names?\s+surnames?\b|(?:last|family|sur)[\s_-]?names?,?\s+[a-z]\.(?![a-z])|lorem\s+ipsum(?:\s+dolor(?:\s+sit(?:\s+amet)?)?)?\b"
    r"|foo\s+bar(?:\s+baz)?\b)",
    re.IGNORECASE,
)


def _ends_word(lower: str, key: str) -> bool:
    """Whether ``key`` occurs in ``lower`` at a word's end ("doe" in "john doe**", not in "does")."""
    i = lower.find(key)
    while i >= 0:
        after = i + len(key)
        if after == len(lower) or not lower[after].isalpha():
            return True
        i = lower.find(key, i + 1)
    return False

#: What comes right before "name" in each name key of :data:`_PLACEHOLDER_NAME_RE` ("firstname", "first name",
#: "surname", "author_name", ...): a key occurs exactly when an occurrence of "name" follows one of these.
_NAME_KEY_PREFIXES: tuple[str, ...] = ("first", "first ", "first_", "first-", "last", "sur", "given ", "given-",
                                       "given_", "last ", "family ", "author ", "author_", "author-")


def _follows(lower: str, word: str, prefixes: tuple[str, ...]) -> bool:
    """Whether an occurrence of ``word`` in ``lower`` follows one of ``prefixes`` (so ``prefix + word`` occurs):
    one scan for ``word`` (an answer holds it a few times) instead of one per longer key."""
    i = lower.find(word)
    while i >= 0:
        if lower.endswith(prefixes, 0, i):
            return True
        i = lower.find(word, i + 1)
    return False


#: The keys of :func:`_may_hold_placeholder_name`, for one automaton pass over an ASCII text ("doe" and "roe"
#: count only at a word's end).
_PLACEHOLDER_NAME_KEYS: tuple[str, ...] = ("doe", "roe", *(p + "name" for p in _NAME_KEY_PREFIXES), "anon", "lorem",
                                           "foo bar", "n. other", "n.other", "some author", "unknown author")
_PLACEHOLDER_NAME_AC = ascii_automaton(k.encode() for k in _PLACEHOLDER_NAME_KEYS)


def _may_hold_placeholder_name(lower: str) -> bool:
    """A cheap necessary condition for a :data:`_PLACEHOLDER_NAME_RE` match in ``lower``: one of its keys
    (``_PLACEHOLDER_NAME_KEYS``) occurs; read in one automaton pass when ``lower`` is ASCII, else by substring
    tests, the specific ones only after a short key that each of them holds ("doe", "name", ...), read at that
    key's occurrences."""
    if lower.isascii():
        n = len(lower)
        for k, _, end in _PLACEHOLDER_NAME_AC.find_matches_as_indexes(lower.encode(), overlapping=True):
            if k > 1 or end == n or not lower[end].isalpha():
                return True
        return False
    if ("doe" in lower or "roe" in lower) and (_ends_word(lower, "doe") or _ends_word(lower, "roe")):
        return True
    if "name" in lower and _follows(lower, "name", _NAME_KEY_PREFIXES):
        return True
    if "anon" in lower or "lorem" in lower or "foo bar" in lower:
        return True
    return _follows(lower, "other", ("n. ", "n.")) or _follows(lower, "author", ("some ", "unknown "))


#: The lower-case keys of a masked value (:data:`_MASK_RE`), after the name keys in one automaton.
_MASK_KEYS: tuple[str, ...] = ("xx", "nnnn", "yymm", "yyyy")
_PLACEHOLDER_AC = ascii_automaton(k.encode() for k in _PLACEHOLDER_NAME_KEYS + _MASK_KEYS)


def _placeholder_keys(lower: str) -> tuple[bool, bool]:
    """``(_may_hold_placeholder_name(lower), a mask key occurs)`` for an ASCII ``lower``, in one automaton pass
    (instead of that pass and a scan per mask key)."""
    n, names, masks, first_mask = len(lower), False, False, len(_PLACEHOLDER_NAME_KEYS)
    for k, _, end in _PLACEHOLDER_AC.find_matches_as_indexes(lower.encode(), overlapping=True):
        if k >= first_mask:
            masks = True
        elif k > 1 or end == n or not lower[end].isalpha():
            names = True
        if names and masks:
            break
    return names, masks


#: The first words of ``_SECTION_LABEL_RE``'s labels: each of its matches starts at the line start of one.
_SECTION_LABEL_WORDS: tuple[str, ...] = (
    "answer", "final", "short", "note", "summary", "source", "references", "caveat", "explanation", "details",
    "background", "context", "disclaimer", "remark", "comment", "reasoning", "justification", "confidence",
    "verification", "citation", "update", "tl;dr", "tldr")
#: The response keys (``_KEYS``'s groups, first, so that their key indexes are ``_KEYS``'s), the placeholder keys
#: (a name's, a mask's) and the section labels' words in one automaton: :func:`prepare` reads an ASCII text once for
#: all, instead of a pass for the placeholders, one for the labels and another for the rules.
_PREPARE_KEYS = KeyTable(*_KEYS.groups, _PLACEHOLDER_NAME_KEYS, _MASK_KEYS, _SECTION_LABEL_WORDS)
_N_KEY_GROUPS = len(_KEYS.groups)
#: The indexes (in ``_PREPARE_KEYS``) of the name keys that count only at a word's end ("doe", "roe").
_WORD_END_NAME_KEYS = frozenset(i for i, k in enumerate(_PREPARE_KEYS._keys) if k in _PLACEHOLDER_NAME_KEYS[:2])


def _placeholder_flags(hits: tuple[KeyHits, ...], lower: str) -> tuple[bool, bool]:
    """``_placeholder_keys(lower)`` read from ``_PREPARE_KEYS.scan(lower)`` (``hits``, of an ASCII ``lower``)."""
    n, names = len(lower), False
    for k, _, end in hits[_N_KEY_GROUPS]._mine():
        if k not in _WORD_END_NAME_KEYS or end == n or not lower[end].isalpha():
            names = True
            break
    return names, bool(hits[_N_KEY_GROUPS + 1])


def placeholder_spans(text: str, lower: str, keys: tuple[bool, bool] | None = None) -> list[tuple[int, int]]:
    """Spans of template placeholders, which offer no answer: a bracketed span of placeholder words ("[TITLE]",
    "<author>", "{first_author}", "[Insert title here]"), a masked value ("XXXX.XXXXX", "20XX", "YYMM.NNNNN",
    "???") or a name-shaped placeholder (``_PLACEHOLDER_NAME_RE``: "John Doe", "Firstname Lastname",
    "Anonymous").  Substring tests first: most responses hold neither brackets nor masks nor such names.
    ``keys``: ``_placeholder_keys(lower)`` when the caller has read it (ASCII ``lower`` only)."""
    spans: list[tuple[int, int]] = []
    if keys is not None:
        names, masks = keys
    elif lower.isascii():
        names, masks = _placeholder_keys(lower)
    else:
        names = _may_hold_placeholder_name(lower)
        masks = "xx" in lower or "nnnn" in lower or "yy" in lower and ("yymm" in lower or "yyyy" in lower)
    if names:
        spans += [m.span() for m in _PLACEHOLDER_NAME_RE.finditer(text)]
    # each test below leads with one character (one memchr); the multi-character keys only after it
    if "[" in text or "<" in text or "{" in text:
        for m in _bracketed(text):
            inside = m.group(1) or m.group(2) or m.group(3)
            if inside and inside[0] != "/" and _placeholder_words(inside) or inside and inside[0] == "/" and (
                    _placeholder_words(inside[1:])):
                spans.append(m.span())
    if "~" in text and "~~" in text:  # struck-through text is deleted: "~~A~~ B" offers B
        spans += [m.span() for m in _STRUCK_RE.finditer(text)]
    if masks or "?" in text and "??" in text or "#" in text and "##" in text:
        spans += [m.span() for m in _MASK_RE.finditer(text)]
    return spans


#: An inline enumerator (after a space or at a line's start): "(1)", "2)", "(b)", "Option A:", "Candidate 2 -"
#: (group 1..4: its label; a "1." only before a capital, a digit or a quote).
_INLINE_ENUMERATOR_RE = re.compile(
    r"(?:\(([1-9a-h]|i{1,3}|iv|vi{0,3})\)|([1-9a-h])\)|([1-9])\.(?=[ \t]+[\"“'*_0-9(?-i:A-Z)])"
    r"|(?:option|candidate|choice|alternative|possibility)\s+([1-9a-h])\s*[:.)—–-])(?=[ \t])", re.IGNORECASE)
#: A field of the answer written as an XML element ("<title>...</title>"), or one whose value is one answer written
#: as a JSON array
#: ("first_author": ["A", "B"]: group 1, the array's inside).
_has_option_word = contains_any(("ption", "andidate", "hoice", "lternative", "ossibilit"))
_XML_TAG_RE = re.compile(r"<(/?)((?i:title|first[_-]?author|authors?|answer|year|arxiv[_-]?id|id|name|candidate"
                         r"|option|paper))>")
_ONE_ANSWER_KEYS = r"(?:title|first[_ -]?author|answer|arxiv[_ -]?id|id|year|name)"
_JSON_ARRAY_RE = re.compile(r"\b" + _ONE_ANSWER_KEYS + r"[\"']?\s*[:=]\s*\[([^\[\]\n]{1,600})\]", re.IGNORECASE)
#: Inline separators of items: " | " inside a line that is no table row, " • ", " · ".
_INLINE_SEPARATORS: tuple[str, ...] = (" | ", " • ", " · ")


_OPTION_WORDS: tuple[str, ...] = ("option", "candidate", "choice", "alternative", "possibility")
_OPTION_AC = ascii_automaton(word.encode() for word in _OPTION_WORDS)
#: The ". " of a digit 1-9 at a word's start ("2. "): led by the literal ". ", so ``re`` skips to the full stops in C
#: and checks the digit and the whitespace before it there (a Python loop over every ". " costs more).
_DIGIT_DOT_RE = re.compile(r"\. (?<=(?<!\S)[1-9]\. )")


#: The characters that may stand right before the ")" of an enumerator ("(3)", "b)", "(iv)"), in either case (and
#: the two dotted and dotless i's that ``re.IGNORECASE`` matches with "i").
_ENUMERATOR_LAST = frozenset("123456789abcdefghivABCDEFGHIV\u0130\u0131")


def _inline_marks(text: str) -> list[re.Match[str]]:
    """The matches of ``_INLINE_ENUMERATOR_RE`` in ``text`` that start the text or follow whitespace, in order,
    tried only where one can be: ending at a ")" (at most five characters before it), at a digit before ". ",
    at an option word, each only after whitespace.  The same matches as such a ``finditer`` (they cannot
    overlap, and none of the first two kinds holds whitespace, so skipping the starts not after whitespace
    loses none), without running the branch-first pattern at every letter a-h of a long answer."""
    found: dict[int, re.Match[str]] = {}
    match = _INLINE_ENUMERATOR_RE.match
    i = text.find(")")
    while i >= 0:
        if not i or text[i - 1] not in _ENUMERATOR_LAST:  # "(for example ...)": no enumerator ends there
            i = text.find(")", i + 1)
            continue
        for j in range(i - 5 if i > 5 else 0, i):
            if j and not text[j - 1].isspace():
                continue
            m = match(text, j)
            if m is not None and m.end() == i + 1:
                found.setdefault(j, m)
                break
        i = text.find(")", i + 1)
    for dot in _DIGIT_DOT_RE.finditer(text):
        m = match(text, dot.start() - 1)
        if m is not None:
            found.setdefault(dot.start() - 1, m)
    lower = text.lower()
    if lower.isascii() and len(lower) == len(text):  # every option word's every start: one automaton pass,
        if _has_option_word(lower):  # after a test of their tails (a few C scans; most texts hold none)
            for _, i, _ in _OPTION_AC.find_matches_as_indexes(lower.encode(), overlapping=True):
                if not i or text[i - 1].isspace():
                    m = match(text, i)
                    if m is not None:
                        found.setdefault(i, m)
    elif len(lower) == len(text):
        for word in _OPTION_WORDS:
            i = lower.find(word)
            while i >= 0:
                if not i or text[i - 1].isspace():
                    m = match(text, i)
                    if m is not None:
                        found.setdefault(i, m)
                i = lower.find(word, i + 1)
    else:
        found.update((m.start(), m) for m in _INLINE_ENUMERATOR_RE.finditer(text)
                     if m.start() not in found and (m.start() == 0 or text[m.start() - 1].isspace()))
    return [found[k] for k in sorted(found)]


def one_item_per_line(text: str) -> str:
    """``text`` with the candidates of a layout each on a line of its own (same length, so offsets stay): items
    of an inline enumeration ("(1) A (2) B", "Option A: ... Option B: ..."), XML elements ("<title>A</title>
    <title>B</title>" reads "title: A" then "title: B") and the values of a JSON array under a key of one
    answer ("title", "first_author", "answer", "year", "id").  The list rules then read them as items, so
    several candidates so laid out are hedging."""
    # two ")" (found from the first, not counted over the whole text), a "2. " or an option word
    if text.find(")", text.find(")") + 1) >= 0 or "2. " in text or ":" in text and _has_option_word(text):
        marks = _inline_marks(text)
        if len({(m.group(1) or m.group(2) or m.group(3) or m.group(4)).lower() for m in marks}) >= 2:
            chars = list(text)
            for m in marks:
                if m.start() > 0 and chars[m.start() - 1] in " \t":
                    chars[m.start() - 1] = "\n"
            text = "".join(chars)
    if "<" in text and ">" in text:
        text = _XML_TAG_RE.sub(lambda m: (" " * (len(m.group()) - 1) + "\n") if m.group(1) else
                               f"{m.group(2)}: ", text)
    if "[" in text and (":" in text or "=" in text):
        text = _JSON_ARRAY_RE.sub(lambda m: m.group().replace(", ", ",\n").replace(",\t", ",\n"), text)
    # each multi-character key only after its rare character (one memchr): " | " alone stops at every space
    if "|" in text and " | " in text or "•" in text and " • " in text or "·" in text and " · " in text:
        text = "\n".join(_split_inline_items(line) for line in text.split("\n"))
    if '"' in text and ("\":" in text or "\" :" in text):
        text = _JSON_NEXT_KEY_RE.sub(lambda m: ",\n" if m.group(1) else "\n", text)
    return text


#: The comma before the next key of a JSON object on one line ('{"answer": "A", "note": "..."}'): each key's line.
_JSON_NEXT_KEY_RE = re.compile(r",([ \t]?)(?=\"[\w -]{1,30}\"\s*:)")
#: A two-cell table row ("| Answer | A |"): a key and its value.
_KEY_VALUE_ROW_RE = re.compile(r"\|( [^|\n]{1,40}? )\|( [^|\n]+? )\|[ \t]*\Z")


def _split_inline_items(line: str) -> str:
    """``line`` with its inline separators (``_INLINE_SEPARATORS``) turned into line breaks (same length), unless
    it is a table row (it starts with "|")."""
    if line.lstrip().startswith("|"):
        row = _KEY_VALUE_ROW_RE.fullmatch(line.strip())
        if row is not None and not set(row.group(1) + row.group(2)) <= set(" -:"):  # "| Answer | A |": "Answer: A"
            at = line.index("|")
            return f"{line[:at]} {row.group(1).rstrip()}:{' ' * (len(row.group(1)) - len(row.group(1).rstrip()))}" \
                   f"{row.group(2)} {line[at + len(line.strip()):]}"
        return line
    for sep in _INLINE_SEPARATORS:
        if sep in line:
            line = line.replace(sep, "\n" + sep[1:])
    return line


#: Every text that :func:`verifiers.arxiv.normalise.squeeze_spaces`, :func:`one_item_per_line` or
#: :func:`placeholder_spans` changes holds one of these (ASCII text; the steps run on any other text).
#: (One-character keys first: each is one memchr, and a long answer holds a line break.)
_has_layout_key = contains_any(("\n", "\t", "\r", "\x0b", "\x0c", ")", ":", "<", "[", "{", "|", "=", "  ", "xx", "XX",
                                "xX", "Xx", "??", "##", "YY", "NNNN", "2. ", "~~"))


#: A line (lower-cased) holding only a section label, as a heading or alone, without a colon ("## Answer", "###
#: Notes", "**Sources**"): a section's name offers no title or name.  A label with a colon ("Answer:") is a lead-in
#: and read by the rules of lead-ins.
_SECTION_LABEL_RE = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]+)?[*_]*(?:answer|final\s+answer|short\s+answer|notes?|summary|sources?|references"
    r"|caveats?|explanation|details|background|context|disclaimer|remarks?|comments?|reasoning|justification"
    r"|confidence|verification|citation|update|tl;?dr)[*_]*[ \t]*$", re.MULTILINE)

#: What may stand between a line's start and a section label's first word (``_SECTION_LABEL_RE``).
_SECTION_LABEL_LEAD = " \t#*_"


def _section_labels(lower: str, hits: tuple[KeyHits, ...] | None) -> list[tuple[int, int]]:
    """The spans of ``_SECTION_LABEL_RE.finditer(lower)``.  With ``hits`` (``_PREPARE_KEYS.scan(lower)``) the
    pattern is tried only at the line starts of its labels' first words (``_SECTION_LABEL_WORDS``) with nothing
    but a heading's marks before them: a whole-text search tries the line start at every character."""
    if hits is None:
        return [m.span() for m in _SECTION_LABEL_RE.finditer(lower)]
    found = hits[_N_KEY_GROUPS + 2]
    if not found:
        return []
    starts = set()
    for _, s, _ in found._mine():
        line = lower.rfind("\n", 0, s) + 1
        if line == s or not lower[line:s].strip(_SECTION_LABEL_LEAD):
            starts.add(line)
    match, spans, after = _SECTION_LABEL_RE.match, [], 0
    for start in sorted(starts):
        if start >= after:  # as finditer goes on: no match inside the previous one
            label = match(lower, start)
            if label is not None:
                spans.append(label.span())
                after = label.end()
    return spans


#: A record's key or value in single quotes, as a Python dict literal or a YAML line writes it ("{'first_author':
#: 'He'}", "title: 'X'"): after a brace, a bracket, a comma or a colon, and closed before the next one or the line's
#: end (group 1: what opens it, group 2: the inside).  An apostrophe inside a word ("it's") neither opens nor
#: closes one.  Read as double quotes, so that a record grades alike however its strings are quoted.
_SINGLE_QUOTED_FIELD_RE = re.compile(r"([{\[,:][ \t]*)'([^'\n]{1,300})'(?=[ \t]*(?:[,:}\]\n]|\Z))")
#: The openings ``_SINGLE_QUOTED_FIELD_RE`` needs, one of them at least (a cheap test first).
_may_hold_single_quoted_field = contains_any(("{'", "['", ": '", ":'", ", '"))


def prepare(output: str, echoes: Iterable[Phrase] = ()) -> Response:
    """Read ``output`` for grading: cut to ``MAX_GRADED_CHARS``, drop invisible characters and read look-alike
    letters as Latin (:func:`verifiers.arxiv.normalise.unconfuse`), strip markup, squeeze whitespace runs
    (:func:`verifiers.arxiv.normalise.squeeze_spaces`), put layout items on lines of their own
    (:func:`one_item_per_line`), blank ``echoes`` of the task and template placeholders
    (:func:`placeholder_spans`) (see the module docstring; refusals, negations and metadata are judged per
    candidate by :meth:`Response.counts`)."""
    truncated = len(output) > MAX_GRADED_CHARS
    raw = output[:MAX_GRADED_CHARS] if truncated else output
    text = strip_markup(unconfuse(raw))
    brace = "{" in text
    if brace:  # BibTeX's protective braces: "title={{Adam:} {A} {Method} ...}"
        text = unbrace_bibtex(text)
    if "'" in text and _may_hold_single_quoted_field(text):
        text = _SINGLE_QUOTED_FIELD_RE.sub(r'\1"\2"', text)  # same length: offsets into ``raw`` still hold
    plain = text.isascii() and not _has_layout_key(text)  # the usual short answer: none of the steps below applies
    superseded: tuple[tuple[int, int], ...] = ()
    if not plain:
        text = squeeze_spaces(text)
        # tags and JSON before one_item_per_line rewrites them (same length); no brace before unbracing, none after
        if brace or "</" in text:
            superseded = tuple(trace_spans(text, brace))
        text = one_item_per_line(text)
    lower = text.lower()
    spans: list[tuple[int, int]] = []
    for echo in echoes:
        if echo.key in lower:  # the usual case is no echo: skip the call
            spans += echo.spans(text, lower)
    if lower.isascii():  # the placeholder keys and the rules' keys (``_KEYS``) in one pass
        hits = _PREPARE_KEYS.scan(lower)
        keys = _placeholder_flags(hits, lower)
        # name-shaped placeholders ("John Doe") are plain text: their own cheap test
        placeholders = [] if plain and not keys[0] else placeholder_spans(text, lower, keys)
    else:
        hits = None
        placeholders = [] if plain and not _may_hold_placeholder_name(lower) else placeholder_spans(text, lower)
    if "\n" in lower:  # a section label on a line of its own ("## Answer", "Notes"): no candidate (not an echo)
        labels = _section_labels(lower, hits)
        if labels:
            placeholders = placeholders + labels
            # a "Final Answer" heading: the reasoning above it is superseded, as by "Final answer:"
            final = next((start for start, end in reversed(labels) if "final" in lower[start:end]), 0)
            if final:
                superseded = (*superseded, (0, final))
    if placeholders or spans:
        text = blank(text, spans + placeholders)
        response = Response(text, raw, bool(spans), truncated, text.lower())
        response.superseded = superseded
        return response
    response = Response(text, raw, False, truncated, lower)
    response.superseded = superseded
    if hits is not None:  # the text scanned is the response's: its rules read these hits
        response._hits = {_KEYS: hits[:_N_KEY_GROUPS]}
    return response


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with the characters of ``spans`` ((start, end) offsets, any order, may overlap) replaced by
    spaces, so that every other offset stays put."""
    out, pos = [], 0
    for start, end in sorted(spans):
        start = max(start, pos)
        if start < end:
            out += [text[pos:start], " " * (end - start)]
            pos = end
    out.append(text[pos:])
    return "".join(out)


# ------------------------------------------------------------------------------------------- per-paper data


_CAMEL_RE = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _split_camel(phrase: str) -> str:
    """``phrase`` with a space at each lower-to-upper case change ("DeepSeekMath" -> "Deep Seek Math", "LoRA" ->
    "Lo RA"): its parts may then be written apart or together ("DeepSeekMath", "Deep\u200bSeek Math"), spacing
    being one of the differences normalisation ignores."""
    return _CAMEL_RE.sub(" ", phrase) if _CAMEL_RE.search(phrase) else phrase


def _parts_pattern(phrase: str) -> str:
    """Whole-word pattern of ``phrase``'s letter and digit runs, any separators (or none) between them; "and"
    may be written "&"."""
    parts = _WORD_PART_RE.findall(fold(_split_camel(phrase)))
    return r"(?<![^\W_])" + _GAP.join("(?:and|&)" if p == "and" else re.escape(p) for p in parts) + r"(?![^\W_])"


def _key(phrase: str) -> str:
    """The longest letter or digit run of ``phrase``, lower-cased: every match of its pattern contains it."""
    return max(_WORD_PART_RE.findall(fold(_split_camel(phrase))), key=len)


#: Words ignored when counting a title's content words.
STOP_WORDS: frozenset[str] = frozenset(
    "a an the of in into on at to for from by with and or is are be can its it all you we our".split()
)


def content_words(title: str) -> tuple[str, ...]:
    """Distinct content words of a title, in order: whitespace-separated words, squashed, minus
    ``STOP_WORDS``.  A hyphenated compound ("Chain-of-Thought") is one word."""
    words = (squash(word) for word in title.split())
    return tuple(dict.fromkeys(word for word in words if word and word not in STOP_WORDS))


@dataclass(frozen=True)
class Phrase:
    """A precompiled phrase matcher (a title, the task's question or rubric, a surname).

    Attributes:
        phrase: the phrase as written.
        pattern: its pattern (case-insensitive).
        key: a lower-case substring every match contains (the longest letter or digit run): the prefilter.
        first: the lower-case start of every match (its first letter or digit run), or ``None`` when matches
            may start otherwise; with it, matches are tried only where ``first`` occurs shortly before ``key``.
        offset: where ``key`` sits in the phrase (characters from its start).
        reach: how far around ``key`` a match may extend (for the search when ``first`` is ``None``).
    """

    phrase: str
    pattern: re.Pattern[str]
    key: str
    first: str | None
    offset: int
    reach: int

    @classmethod
    def title(cls, title: str) -> Phrase:
        """A title: case, punctuation, spacing and hyphenation may differ (see ``_parts_pattern``)."""
        return cls.of(title, re.compile(_parts_pattern(title), re.IGNORECASE))

    @classmethod
    def sentence(cls, sentence: str) -> Phrase:
        """A sentence of the task (question or rubric): case-insensitive, any whitespace, final punctuation
        optional."""
        words = sentence.rstrip("?.!").split()
        return cls.of(sentence, re.compile(r"\s+".join(map(re.escape, words)) + r"[?.!]?", re.IGNORECASE))

    @classmethod
    def of(cls, phrase: str, pattern: re.Pattern[str], anchored: bool = True) -> Phrase:
        """The matcher of ``phrase`` by ``pattern`` (``anchored``: every match starts with its first run)."""
        parts = _WORD_PART_RE.findall(fold(_split_camel(phrase)))
        key = max(parts, key=len)
        offset = max(fold(phrase).find(key), 0)
        return cls(phrase, pattern, key, parts[0] if anchored else None, offset, 2 * len(phrase) + 20)

    def spans(self, text: str, lower: str) -> list[tuple[int, int]]:
        """Spans of the matches in ``text`` (``lower`` is ``text.lower()``)."""
        i = lower.find(self.key)
        if i < 0:
            return []
        if self.first is None:
            return windowed_spans(text, lower, self.key, self.pattern, self.reach)
        if len(lower) != len(text):  # offsets in lower would not be offsets in text
            return [m.span() for m in self.pattern.finditer(text)]
        out: list[tuple[int, int]] = []
        first, pos, size = self.first, 0, len(self.key)
        while i >= 0:
            j = lower.find(first, max(pos, i - 2 * self.offset - 8), i + len(first))
            while 0 <= j <= i:
                match = self.pattern.match(text, j)
                if match is not None and match.end() >= i + size:
                    out.append(match.span())
                    pos = match.end()
                    break
                j = lower.find(first, j + 1, i + len(first))
            i = lower.find(self.key, max(i + 1, pos))
        return out


#: A word with hyphens inside it ("Bi-directional", "state-of-the-art").
_COMPOUND_RE = re.compile(r"[^\W_]+(?:-[^\W_]+)+")


def _joined(compound: re.Match[str]) -> str:
    word = compound.group()
    return word.replace("-", "") + " " * word.count("-")


def spans_dehyphenated(phrase: Phrase, text: str, lower: str) -> list[tuple[int, int]]:
    """Spans of ``phrase`` in ``text`` read with the hyphens inside words dropped ("Bi-directional" for a
    title's "Bidirectional": hyphenation is one of the differences normalisation ignores, see
    :mod:`verifiers.arxiv.normalise`), for when :meth:`Phrase.spans` finds none; ``[]`` at once when even
    the hyphen-free text lacks the phrase's key.  Each compound keeps its place (its hyphens become spaces at
    its end), so a span starts where it does in ``text``; its end is moved to the end of the word it falls in."""
    if "-" not in text or phrase.key not in lower.replace("-", ""):
        return []
    joined = _COMPOUND_RE.sub(_joined, text)
    out = []
    for start, end in phrase.spans(joined, joined.lower()):
        while end < len(text) and (text[end].isalnum() or text[end] == "-" and text[end - 1].isalnum()):
            end += 1
        out.append((start, end))
    return out


@dataclass(frozen=True)
class PaperMatcher:
    """Precompiled matchers for one paper (built once per verifier, used on every grade).

    Attributes:
        title: matcher of this paper's title.
        title_words: ``(key, whole-word pattern)`` per content word, for partial credit (``key``: a lower-case
            substring of every match, the prefilter).
        other_titles: matchers of every other known paper's title, grouped under gate words: ``(gate, group)``,
            where every title of ``group`` contains ``gate`` (one substring test rules out a whole group).
        author: the citation forms of the first author accepted as naming them (see ``author_pattern``).
        ambiguous: the surname is also a common English word.
        question_words: lower-cased words of each kind's question (never names).
        year: the submission year, as text.
        last_name: the first author's surname.
        name_exclude: the words never read as another name next to the author's: the author question's
            words and the surname itself.
    """

    paper: Paper
    title: Phrase
    title_words: tuple[tuple[str, re.Pattern[str]], ...]
    other_titles: tuple[tuple[str, tuple[Phrase, ...]], ...]
    author: Phrase
    ambiguous: bool
    question_words: dict[str, frozenset[str]]
    year: str
    last_name: str
    name_exclude: frozenset[str]

    @classmethod
    def build(cls, paper: Paper, others: Iterable[Paper], questions: dict[str, str]) -> PaperMatcher:
        """Compile the matchers of ``paper``; ``others`` are the other known papers, ``questions`` the
        question of each task kind (``{kind: question}``)."""
        originals = {squash(w): w for w in paper.title.split()}
        title_words = tuple((_key(originals[key]), re.compile(_parts_pattern(originals[key]), re.IGNORECASE))
                            for key in content_words(paper.title))
        ambiguous = paper.last_name.lower() in NON_CONTENT_WORDS
        qwords = {kind: frozenset(w.lower() for w in _WORD_RE.findall(q)) for kind, q in questions.items()}
        author = Phrase.of(paper.last_name, author_pattern(paper, ambiguous), anchored=not ambiguous)
        return cls(paper, Phrase.title(paper.title), title_words,
                   gate_groups([Phrase.title(o.title) for o in others if o.title != paper.title]),
                   author, ambiguous, qwords, str(paper.year), paper.last_name,
                   qwords.get("author", frozenset()) | {author.key})


def gate_groups(matchers: list[Phrase]) -> tuple[tuple[str, tuple[Phrase, ...]], ...]:
    """Group title matchers under few gate words (greedy set cover by words of five or more letters, ties to
    the longer word), so that a text without a gate word needs no further test for that group's titles."""
    words = {t.phrase: {w for w in _WORD_PART_RE.findall(fold(_split_camel(t.phrase))) if len(w) >= 5} or {t.key}
             for t in matchers}
    left = list(matchers)
    groups = []
    while left:
        counts: dict[str, int] = {}
        for t in left:
            for w in words[t.phrase]:
                counts[w] = counts.get(w, 0) + 1
        gate = max(sorted(counts), key=lambda w: (counts[w], len(w)))
        groups.append((gate, tuple(t for t in left if gate in words[t.phrase])))
        left = [t for t in left if gate not in words[t.phrase]]
    return tuple(groups)


def author_pattern(paper: Paper, ambiguous: bool) -> re.Pattern[str]:
    """The first author's accepted citation forms, one rule for every author.

    The surname counts, as a whole word in any case, when written in a citation form: with the given name
    (either order, "Kaiming He", "He Kaiming", "He, Kaiming"), with the given name's initial ("K. He", "He, K.",
    Vancouver "He K"),
    followed by "et al." ("He et al."), or as the whole answer; always as a whole name, not part of a hyphenated
    one ("Smith-Vaswani" is someone else).  A surname that is not also a common English
    word counts on its own too ("Kingma wrote it"); one that is ("He", "Long") counts only in those forms, since
    alone it reads as the word, and in an answer position (:func:`verifiers.arxiv.grading._bare_surname_spans`:
    "The first author is He.", "He and colleagues").  Source: author-date citation conventions (APA 7th ed.,
    sections 8.17 and 9.8: "Surname et al." in text, "Surname, Initials." in references).
    """
    # a whole name: not part of a hyphenated one ("Smith-Vaswani", "Vaswani-Smith" are other people)
    surname = rf"(?<![^\W_][-‐‑]){_parts_pattern(paper.last_name)}(?![-‐‑][^\W_])"
    if not ambiguous:
        return re.compile(surname, re.IGNORECASE)
    given = _parts_pattern(paper.given_name)
    initial = re.escape(paper.given_name[0].upper())
    middle = r"(?:\s+(?-i:[A-Z])\.?)*"
    forms = [
        rf"{given}{middle}\s+{surname}",                       # Kaiming He, Ian J. Goodfellow
        rf"{surname},?\s+{given}",                              # He Kaiming, He, Kaiming
        rf"(?<![^\W_])(?-i:{initial})\.?{middle}\s*{surname}",  # K. He, K He
        rf"{surname},\s*(?-i:{initial})\.",                     # He, K.
        # He K (Vancouver), not before a lower-case word other than a joiner or copula ("He K or Zhang X")
        rf"{surname}\s+(?-i:{initial}[A-Z]{{0,2}})(?![^\W_]|\.?\s*(?!(?:or|and|nor|vs|is|was)\b)(?-i:[a-z]))",
        rf"{surname}\s+et\.?\s+al\b",                           # He et al.
        rf"^[\W_]*{surname}[\W_]*$",                            # the whole answer
    ]
    return re.compile("|".join(f"(?:{f})" for f in forms), re.IGNORECASE)
