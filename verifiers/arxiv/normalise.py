"""Text normalisation and word lists shared by the arXiv graders.

Normalisation is what a title or name may differ by and still be the same: case, punctuation, spacing,
quotes, hyphenation (``Pre-training`` = ``Pretraining`` = ``pre training``), LaTeX markup (``\\textbf{...}``,
``$16\\times16$``) and the look-alike ``×`` for ``x``.  The word lists say which words never make a title
or a name on their own: English function words, conversational filler and the vocabulary of the question.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

#: Feedback quotes at most this many characters of the response; feedback stays below FEEDBACK_MAX.
QUOTE_CHARS = 80
FEEDBACK_MAX = 299

#: English function words (articles, pronouns, auxiliaries, prepositions, conjunctions, common adverbs).
FUNCTION_WORDS: frozenset[str] = frozenset("""
a an the this that these those there here it its it's itself he she him her his hers they them their we us our
you your yours i me my mine i'm i've i'd i'll you're we're they're he's she's that's there's here's what's
who's is are was were be been being am do does did done doing have has had having will would shall should can
could may might must not no nor yes and or but if then so as of in on at to for from by with about into over
under after before between through during without within via than too very also just only even still
yet again ever never always often sometimes some any all each every both either neither other another such
same which who whom whose what when where why how whether while because since until unless though although
however therefore thus hence more most less least much many few one two three first second third last
""".split())

#: Conversational filler, refusal and error-page words, the vocabulary of the questions and rubrics and of
#: looking a paper up ("check the abstract page", "compare with Google Scholar"): text made only of these (and
#: FUNCTION_WORDS) offers no title and no name.
DISCOURSE_WORDS: frozenset[str] = frozenset("""
great good nice excellent interesting fascinating wonderful awesome amazing important famous well-known
known popular influential seminal classic landmark notable question questions answer answers answered asking
ask asked thanks thank thx please sure certainly absolutely definitely indeed okay ok alright right hello hi
hey dear hmm hm um uh ah oh wow well yeah yep nope sorry apologies apologize apologise unfortunately sadly
regrettably honestly actually basically really truly happy glad help helping helpful let let's me look
looking check checking think thinking believe guess recall remember know knowing sure unsure certain
uncertain idea clue unknown none n/a tbd lol maybe perhaps possibly probably likely unclear say said tell
mean meant find found search searching verify confirm provide give given note noted hope wish like love
title titles titled author authors authored first-author wrote written writer year years
arxiv identifier identifiers id ids number exact exactly correct incorrect wrong true false topic field
research researcher researchers work works study article articles publication published submitted
information details source sources detail link links reference references database internet web online
browse browsing access knowledge cutoff cut-off data training model assistant ai language-model
ai-assistant llm chatbot response responses reply query request user system instructions instruction
rubric expected behavior behaviour states gives names committing commit single nothing else candidate
candidates listing listed something someone anything anyone everything everyone thing things stuff
go going goes see get got make made take want try use used come keep put show seem feel wait done unable
unfortunate apologies refuse decline ticket session request error trace incident code
correction corrected correcting erratum edit edited scratch oops instead rather
denied forbidden unauthorized unauthorised unavailable blocked restricted timeout rate limit exceeded quota
token tokens service region lookup failed failure maintenance offline outage min ms
read compare visit consult click download page pages pdf header website site homepage scholar abstract google
semantic name names placeholder status available
patience helps luck cheers regards welcome appreciate appreciated enjoy hopefully
option options choice choices alternative alternatives primary backup preferred final update edit
""".split())

#: Words that never make a title on their own ("Some Other Paper" is a made-up title; "Great question" is not).
NON_CONTENT_WORDS: frozenset[str] = FUNCTION_WORDS | DISCOURSE_WORDS
#: Words that are never a person's name (capitalised or not): the above plus the nouns of a citation.
NON_NAME_WORDS: frozenset[str] = NON_CONTENT_WORDS | frozenset(
    "paper papers preprint conference journal proceedings et al al. university institute lab team group "
    "dr dr. prof prof. professor mr mr. mrs mrs. ms ms. sir phd ph.d. postdoc msc bsc "
    "january february march april june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday "
    "ticket request reference error session trace incident case code cut-off cutoff update updated "
    "google brain openai deepmind meta microsoft facebook nvidia labs inc corp corporation ltd llc gmbh plc "
    "stanford berkeley mit "
    "neurips nips icml iclr cvpr "
    "acl emnlp pytorch tensorflow transformer transformers "
    # the words opening another branch or alternative ("Otherwise, A": no name listed before A)
    "otherwise alternatively else "
    # the verbs that reject what follows ("Ignore A", "Forget A"): a sentence's first word, not a given name
    "ignore ignoring forget disregard retract withdraw "
    # greetings and seasons' wishes ("Merry Christmas! I don't know.")
    "merry christmas xmas holidays holiday greetings cheers goodbye bye welcome congratulations".split())

_NON_ALNUM_RE = re.compile(r"[\W_]+")
_WS_RE = re.compile(r"\s+")
#: ``\times`` reads as ``x``; other LaTeX commands are markup whose argument is the text (``\emph{X}`` -> ``X``).
_LATEX_TIMES_RE = re.compile(r"\\times(?![A-Za-z])|×")
#: Three backticks or more are a Markdown code fence or span, not LaTeX's opening quote.
_LATEX_COMMAND_RE = re.compile(r"\\[A-Za-z]+\*?|\\(?=[&%$#_{}])|[{}$]|(?<!`)``(?!`)|''")


def fold(text: str) -> str:
    """Case-folded text with look-alike characters mapped (``×`` -> ``x``)."""
    folded = text.casefold()
    return folded.replace("×", "x") if "×" in folded else folded


def squash(text: str) -> str:
    """``fold(text)`` without any non-alphanumeric characters: case, punctuation, spacing and hyphens
    no longer matter ("Pre-training" = "Pretraining" = "pre training" -> ``"pretraining"``)."""
    return _NON_ALNUM_RE.sub("", fold(text))


def normalise_whitespace(text: str) -> str:
    """``text`` with every run of whitespace replaced by one space, stripped."""
    return " ".join(text.split())


#: Typesetting hyphenation: a hyphen at a line end between two letters joins the parts of one word.
_LINE_END_HYPHEN_RE = re.compile(r"-(?<=[^\W\d_]-)[ \t]*\r?\n[ \t]*(?=[^\W\d_])")


def strip_markup(text: str) -> str:
    """``text`` with LaTeX markup removed, ``×`` read as ``x`` (``$16\\times 16$`` -> ``16 x 16``,
    ``\\textbf{Adam}`` -> ``Adam``, `````quoted''`` -> ``"quoted"``) and words hyphenated across a line
    break joined (``Net-\\nworks`` -> ``Networks``).  Cheap when there is neither markup nor a hyphen."""
    if "\n" in text and "-" in text:  # two memchr scans; a search for "-\n" itself costs eight times more
        text = _LINE_END_HYPHEN_RE.sub("", text)
    if "\\" not in text and "$" not in text and "`" not in text and (text.isascii() or "×" not in text):
        return text  # one memchr each (isascii is a flag: no "×" in ASCII text)
    if "×" in text or "\\times" in text:
        text = _LATEX_TIMES_RE.sub(" x ", text)
    return _LATEX_COMMAND_RE.sub(lambda m: '"' if m.group() in ("``", "''") else "", text)


#: A BibTeX field's opening ("title={", "title = {").
_BIBTEX_FIELD_RE = re.compile(r"\w[ \t]*=[ \t]*\{")
#: A protective brace pair around one word inside a BibTeX value ("{{Adam:} {A} {Method} for ...}"), after an
#: opening brace or a space: the word alone (group 1).
_PROTECTED_WORD_RE = re.compile(r"(?<=[{\s])\{([^\s{}]{1,60})\}")


#: Outside a BibTeX field, a protective brace pair around one capitalised word that has lower-case letters
#: (BibTeX's way of keeping a capital: "{An} Image is Worth ...") next to another word on its line.  A
#: placeholder ("{title}", "{TITLE}") is lower-case or all capitals, so it stays.
_PROTECTED_IN_TEXT_RE = re.compile(
    r"(?<![^\s{(\"“'])\{((?-i:[A-Z])[^\W\d_]*(?-i:[a-z])[^\s{}]{0,58})\}(?=[ \t:,]*[^\W_])"
    r"|(?<=[^\W_][ \t])\{((?-i:[A-Z])[^\W\d_]*(?-i:[a-z])[^\s{}]{0,58})\}")


def unbrace_bibtex(text: str) -> str:
    """``text`` with BibTeX's protective braces around single words read away when it holds a BibTeX field
    (``title={{Adam:} {A} {Method} for {Stochastic} {Optimization}}`` -> ``title={Adam: A Method for Stochastic
    Optimization}``): BibTeX uses them to keep capitals, they are no part of the title.  A placeholder right
    after the field's ``=`` ("title={TITLE}") is left as it is.  Outside a field, a braced capitalised word
    with lower-case letters beside another word is read away too (``_PROTECTED_IN_TEXT_RE``: "{An} Image is
    Worth ...").  Cheap without a brace."""
    if "{" not in text:
        return text
    if "=" not in text or _BIBTEX_FIELD_RE.search(text) is None:
        return _PROTECTED_IN_TEXT_RE.sub(lambda m: m.group(1) or m.group(2), text) if "}" in text else text
    return _PROTECTED_WORD_RE.sub(r"\1", text)


def quote(text: str) -> str:
    """At most ``QUOTE_CHARS`` characters of ``text``, whitespace collapsed, in double quotes."""
    snippet = " ".join(text.lstrip()[: QUOTE_CHARS * 4].split())
    if len(snippet) > QUOTE_CHARS:
        snippet = snippet[: QUOTE_CHARS - 1] + "…"
    return f'"{snippet}"' if snippet else "(empty)"


def listing(values: Sequence[str], limit: int = 3) -> str:
    """Up to ``limit`` values, comma-separated, with ``(+N more)`` for the rest."""
    shown = ", ".join(values[:limit])
    return shown if len(values) <= limit else f"{shown} (+{len(values) - limit} more)"


def clip(feedback: str) -> str:
    """``feedback`` cut to ``FEEDBACK_MAX`` characters (with an ellipsis when cut)."""
    return feedback if len(feedback) <= FEEDBACK_MAX else feedback[: FEEDBACK_MAX - 1] + "…"


def words_of(text: str) -> frozenset[str]:
    """Lower-cased words (letters, digits, inner hyphens and apostrophes) of ``text``."""
    return frozenset(w.lower() for w in re.findall(r"[^\W_]+(?:['’-][^\W_]+)*", text))


# ------------------------------------------------------------------------------ invisible and look-alike characters

#: Characters that show nothing and are dropped before matching: zero-width space, non-joiner, joiner, word
#: joiner, byte-order mark (zero-width no-break space) and the soft hyphen ("Atten\u00adtion" is "Attention").
INVISIBLE_CHARS = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
#: Letters of other scripts that look like a Latin letter, read as that letter (Cyrillic and Greek capitals and
#: the Cyrillic small letters that copy a Latin one): "Аttention" with a Cyrillic "А" is "Attention".
HOMOGLYPHS: dict[str, str] = {
    **dict(zip("АВЕКМНОРСТУХІЈЅаеорсухіјѕԁһԛԝ", "ABEKMHOPCTYXIJSaeopcyxijsdhqw", strict=True)),
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧο", "ABEZHIKMNOPTYXo", strict=True)),
}
#: A zero-width space between a lower-case and a capital letter separates two words ("Ashish\u200bVaswani").
_ZERO_WIDTH_GAP_RE = re.compile("(?<=[a-z])[\u200b\u2060\ufeff]+(?=[A-Z])")
_HOMOGLYPHS = str.maketrans(HOMOGLYPHS)
#: A word (letters, digits, inner hyphens and apostrophes).
_WORD_AT_RE = re.compile(r"[\w'’-]+")
_LOOK_ALIKE_RE = re.compile("[" + "".join(HOMOGLYPHS) + "]")
_ASCII_LETTER_RE = re.compile(r"[A-Za-z]")
#: The whitespace characters (``str.isspace``, what ``\s`` matches) other than the space and the line break; none
#: lies above U+3000.
OTHER_SPACE_CHARS = "".join(c for c in map(chr, range(0x3001)) if c.isspace() and c not in " \n")
#: A line break next to a space or a line break ("\n ", " \n", "\n\n"), and the first two alone: each pattern starts
#: with the line break, so ``re`` skips to the (few) line breaks of a text, where a test of " \n" stops at every space.
_NEWLINE_PAIR_RE = re.compile(r"\n(?:(?<= \n)|[ \n])")
_SPACE_NEWLINE_RE = re.compile(r"\n(?<= \n)")
_NEWLINE_SPACE_RE = re.compile("\n ")
_NEWLINE_RUN_RE = re.compile("\n\n+")


def _latin_words(text: str) -> str:
    """``text`` with each word holding a look-alike letter passed through :func:`_latin_word` (each word read
    once: linear in the text)."""
    out, pos = [], 0
    for hit in _LOOK_ALIKE_RE.finditer(text):
        if hit.start() < pos:
            continue  # inside a word already read
        start = hit.start()
        while start > pos and (text[start - 1].isalnum() or text[start - 1] in "'’-"):
            start -= 1
        end = _WORD_AT_RE.match(text, hit.start()).end()
        out += [text[pos:start], _latin_word(text[start:end])]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _latin_word(w: str) -> str:
    """The word with its look-alike letters read as Latin when it is written in Latin letters: it holds an ASCII
    letter, or every letter of it has a Latin look-alike.  A word of another script ("не знаю") is kept."""
    latin = w.translate(_HOMOGLYPHS)
    if latin == w or _ASCII_LETTER_RE.search(w) or latin.isascii():
        return latin
    return w


def _nfkc(text: str) -> str:
    """``unicodedata.normalize("NFKC", text)``, line by line when the text is not in that form already: a line
    break is a stable character (UAX #15: it neither reorders nor composes with a neighbour, and no character
    folds to it), so the form of the text is the form of its lines joined, and only the lines holding a
    compatibility character (an ellipsis, a non-breaking space, a ligature) go through the full normalisation,
    which costs about 0.2 us a character where the form test costs a hundredth of it."""
    normalize, is_normalized = unicodedata.normalize, unicodedata.is_normalized
    if "\n" not in text:
        return normalize("NFKC", text)
    if is_normalized("NFKC", text):
        return text
    return "\n".join([line if line.isascii() or is_normalized("NFKC", line) else normalize("NFKC", line)
                      for line in text.split("\n")])


def unconfuse(text: str) -> str:
    """``text`` with invisible characters dropped (``INVISIBLE_CHARS``: "Atten\u00adtion" is "Attention"),
    compatibility forms folded (NFKC: full-width "Ａ" is "A", the ligature "ﬁ" is "fi") and look-alike letters
    read as Latin in words written in Latin letters (``HOMOGLYPHS``: "Аttention" with a Cyrillic "А" is
    "Attention"; see :func:`_latin_word`).  ASCII text is returned as it is (one flag test)."""
    if text.isascii():
        return text
    if "\u200b" in text or "\u2060" in text or "\ufeff" in text:  # a zero-width space between two words is a space
        text = _ZERO_WIDTH_GAP_RE.sub(" ", text)
    # A test per character (``in``: a C scan) instead of ``str.translate``, which looks every character of a
    # non-ASCII text up in a dict (14 ms for each of the two on a 50 KB answer with one curly quote).
    for c in INVISIBLE_CHARS:
        if c in text:
            text = text.replace(c, "")
    text = _nfkc(text)
    if text.isascii() or not any(map(text.__contains__, HOMOGLYPHS)):  # no look-alike: no word to read
        return text
    return _latin_words(text)


def squeeze_spaces(text: str) -> str:
    """``text`` with every whitespace run read as one space, or as one line break when it holds one (tabs,
    runs of spaces, blank lines, non-breaking spaces): the phrases the grader looks for ("I don't\\tknow", "as
    \\n of") then differ from their written form by single spaces and line breaks only.  Cheap on text without
    such runs (a few substring tests)."""
    if not text.isascii():
        # Every whitespace character but the space and the line break read as a space first: what is left is
        # squeezed as in ASCII text below, with C scans, where a regex tried at each character took 12 ms a
        # grade on a 50 KB answer.  A run is one space or one line break either way, so the result is the same.
        for c in OTHER_SPACE_CHARS:
            if c in text:
                text = text.replace(c, " ")
    elif text.isprintable() and "  " not in text:  # printable: no tab, no line break
        return text
    else:  # ASCII: the other whitespace characters it can hold (\x1c-\x1f, rare, are kept there as before)
        for c in "\t\r\x0b\x0c":  # str.replace loops: linear C scans, cheaper than a regex on every character
            if c in text:
                text = text.replace(c, " ")
    # Each step runs only when it has something to change: a test of a two-character key with a frequent
    # character (a space) is a pass over the text, and a long answer's usual odd space is only its blank lines.
    while "  " in text:
        text = text.replace("  ", " ")
    if "\n" in text and _NEWLINE_PAIR_RE.search(text) is not None:  # regexes led by "\n": they skip to line breaks
        if _SPACE_NEWLINE_RE.search(text) is not None:
            text = text.replace(" \n", "\n")
        if _NEWLINE_SPACE_RE.search(text) is not None:
            text = text.replace("\n ", "\n")
        if "\n\n" in text:
            text = _NEWLINE_RUN_RE.sub("\n", text)  # one pass, however long the runs
    return text
