"""Tests of the arXiv grader's rules closed in stop 12 (issue 17, blind pass 11, classes F, A, B and H): a service's
error reply and a refusal's timestamp offer no answer; in a chat transcript the last assistant turn is graded, not a
user's question; reasoning before a "Final Answer" heading or a ``<think>`` block's end is superseded; a tool call
repeating the question is the agent's request, not its answer."""

from __future__ import annotations

import json

import pytest
from helpers import grade_arxiv as grade
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.arxiv import PAPERS
from verifiers.arxiv.offers import service_error

KINDS = ["id", "year", "title", "author"]


def _value(paper: object, kind: str) -> str:
    """The answer of ``kind`` for ``paper`` as a response would write it."""
    return {"id": paper.arxiv_id, "year": str(paper.year), "title": paper.title,  # type: ignore[attr-defined]
            "author": paper.first_author}[kind]  # type: ignore[attr-defined]


def _distinct(paper: object, other: object, kind: str) -> bool:
    """Whether ``other``'s value of ``kind`` is another answer than ``paper``'s (neither holds the other, and
    another first author has another surname)."""
    a, b = _value(paper, kind).casefold(), _value(other, kind).casefold()
    if kind == "author":
        a, b = a.split()[-1], b.split()[-1]
    return a not in b and b not in a


# ------------------------------------------------------------- F. a service's error reply, a refusal's timestamp

#: Error replies of a service, ``{n}`` a number it holds (a header's value, a request id, a field).
SERVICE_REPLIES = [
    "HTTP/1.1 503 Service Unavailable\nRetry-After: {n}",
    "HTTP/2 429\nx-ratelimit-reset: {n}\ncontent-type: application/json",
    "HTTP 502 Bad Gateway\nX-Trace-Id: {n}\nDate: Mon, 01 Jan 2024 10:00:00 GMT",
    '{{"error": {{"code": 500, "message": "Internal", "trace_id": "{n}"}}}}',
    '{{\n  "errors": [\n    {{"status": 404, "detail": "no match", "ref": "{n}"}}\n  ]\n}}',
    '```json\n{{"fault": "timeout", "request": "{n}"}}\n```',
]


@given(paper=st.sampled_from(PAPERS), kind=st.sampled_from(KINDS), reply=st.sampled_from(SERVICE_REPLIES),
       number=st.sampled_from(["id", "year", "other"]))
@settings(max_examples=120, deadline=None)
def test_a_service_error_reply_never_scores(paper: object, kind: str, reply: str, number: str) -> None:
    """Whatever number an error reply holds, the right ID or year included, it offers no answer: 0.00 for every
    kind (issue 17 class 6: a server wrote it)."""
    n = {"id": paper.arxiv_id, "year": str(paper.year), "other": "7731-0042"}[number]  # type: ignore[attr-defined]
    g = grade(f"{paper.arxiv_id}/{kind}", reply.format(n=n))  # type: ignore[attr-defined]
    assert (g.well_formed, g.composite) == (0.0, 0.0), reply


@pytest.mark.parametrize(("task_id", "output", "correctness", "well_formed"), [
    ("1706.03762/year", "HTTP/1.1 503 Service Unavailable\nRetry-After: 120\n\nFrom memory: 2017.", 1.0, 1.0),
    ("1706.03762/id", '{"error": null, "id": "1706.03762"}', 1.0, 1.0),  # no error set: a record that answers
    ("1706.03762/year", '{"errors": [], "year": 2017}', 1.0, 1.0),
    ("1706.03762/year", "Sorry, I can't tell: the search timed out at 08:41 on 2019-11-02.", 0.0, 0.0),
    ("1706.03762/year", "I cannot answer; the index last failed on 03/11/2019 08:41 UTC.", 0.0, 0.0),
    ("1706.03762/year", "I can't be certain, but it was submitted on 2017-06-12 at 17:57.", 1.0, 1.0),
    ("1706.03762/year", "Submitted on 12 Jun 2017 17:57:55 UTC", 1.0, 1.0),  # no refusal: arXiv's own stamp
])
def test_service_reply_and_timestamp_examples(task_id: str, output: str, correctness: float,
                                              well_formed: float) -> None:
    g = grade(task_id, output)
    assert (g.correctness, g.well_formed) == (correctness, well_formed), output


def test_service_error_reads_the_reply_only() -> None:
    assert service_error("HTTP/1.1 404 Not Found\nVia: proxy-7")
    assert not service_error("HTTP/1.1 200 OK\nRetry-After: 5")  # not an error status
    assert not service_error("HTTP/1.1 404 Not Found\nAnswer: Attention Is All You Need")  # a label, no header


# --------------------------------------------------------------- A. a chat transcript: the last assistant turn

#: Transcripts where a user's turn asks about ``{w}`` and the last assistant turn commits to ``{r}``.
TRANSCRIPTS = [
    "User: Could it be {w}?\nAssistant: No, it is {r}.",
    "Human: I read {w} somewhere. Right?\n\nAssistant: That is not it. The answer is {r}.",
    "System: Answer briefly.\nUser: {w}?\nAI: {r}",
    "**User:** is {w} correct?\n**Assistant:** No: {r}.",
    "User: Please check.\nAssistant: I think {w}.\nUser: Really?\nAssistant: I was wrong. It is {r}.",
]


def _messages(w: str, r: str) -> str:
    return json.dumps({"messages": [{"role": "user", "content": f"Was it {w}?"},
                                    {"role": "assistant", "content": f"No, it was {r}."}]})


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), kind=st.sampled_from(KINDS),
       form=st.sampled_from([*TRANSCRIPTS, "messages"]))
@settings(max_examples=150, deadline=None)
def test_the_last_assistant_turn_is_graded(paper: object, other: object, kind: str, form: str) -> None:
    """A user's question about W is no candidate: the last assistant turn's answer is graded, correct when it is
    the paper's and confidently wrong when it is another's (never hedged for the user's words)."""
    if not _distinct(paper, other, kind):
        return
    task_id = f"{paper.arxiv_id}/{kind}"  # type: ignore[attr-defined]
    right, wrong = _value(paper, kind), _value(other, kind)
    write = _messages if form == "messages" else (lambda w, r: form.format(w=w, r=r))
    assert grade(task_id, write(wrong, right)).correctness == 1.0, write(wrong, right)
    g = grade(task_id, write(right, wrong))
    assert (g.correctness, g.well_formed) == (0.0, 1.0), write(right, wrong)


@pytest.mark.parametrize(("task_id", "output", "correctness"), [
    ("1406.2661/year", "> On Friday you asked:\n> Is it 2015?\n\nIt is 2014.", 1.0),  # an e-mail quote
    ("1406.2661/year", "> 2014", 1.0),  # a quote and nothing after it: the quote is the answer
    ("1406.2661/title", "> Generative Adversarial Networks\n\nA classic by Goodfellow.", 1.0),  # a blockquote
    ("1406.2661/year", "> Jane wrote:\n> 2015, surely.\n\nNo: 2014.", 1.0),  # an attributed quote
    ("1406.2661/year", "User: which year?\nAssistant: I don't know, sorry.", 0.0),  # the assistant refuses
])
def test_transcript_examples(task_id: str, output: str, correctness: float) -> None:
    assert grade(task_id, output).correctness == correctness


# ----------------------------------------------- B. reasoning, then a "Final Answer" heading or the text after it

#: Reasoning naming ``{w}`` and ``{r}``, then the answer ``{a}``.
REASONING = [
    "<think>\nMaybe {w}? Or {r}. Let me check.\n</think>\n\n{a}",
    "<reasoning>{w} comes to mind, then {r}.</reasoning>\nAnswer: {a}",
    "Candidates considered: {w}, {r}.\n\nFinal Answer\n\n\\boxed{{{a}}}",
    "I weighed {w} against {r}.\n\n## Final Answer\n{a}",
    "Between {w} and {r}...\n\n**Final Answer**\n\n{a}",
]


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), kind=st.sampled_from(KINDS),
       form=st.sampled_from(REASONING))
@settings(max_examples=150, deadline=None)
def test_reasoning_is_superseded_by_the_answer_after_it(paper: object, other: object, kind: str,
                                                         form: str) -> None:
    """The candidates weighed in reasoning do not count once an answer follows it: the answer alone is graded."""
    if not _distinct(paper, other, kind):
        return
    task_id = f"{paper.arxiv_id}/{kind}"  # type: ignore[attr-defined]
    right, wrong = _value(paper, kind), _value(other, kind)
    assert grade(task_id, form.format(w=wrong, r=right, a=right)).correctness == 1.0
    g = grade(task_id, form.format(w=wrong, r=right, a=wrong))
    assert (g.correctness, g.well_formed) == (0.0, 1.0)


def test_a_think_block_alone_is_still_graded() -> None:
    assert grade("1406.2661/year", "<think>It is 2014.</think>").correctness == 1.0
    assert grade("1406.2661/year", "<think>2014 or 2015?</think>").correctness == 0.5


# ---------------------------------------------------------- H. a tool call repeating the question, then the answer

#: A tool call whose query is ``{q}`` (the task's question), its result, then the answer ``{a}``.
TOOL_TRACES = [
    '<tool_call>{{"name": "search", "arguments": {{"q": "{q}"}}}}</tool_call>\n<tool_result>[]</tool_result>\n\n'
    "Going from memory: {a}.",
    '{{"tool": "arxiv_lookup", "arguments": {{"query": "{q}", "limit": 3}}}}\nNo hits. I believe it is {a}.',
    '<function_call>{{"name": "web", "input": "{q}"}}</function_call>\n{a}',
]


@given(paper=st.sampled_from(PAPERS), kind=st.sampled_from(KINDS), form=st.sampled_from(TOOL_TRACES))
@settings(max_examples=100, deadline=None)
def test_a_tool_call_repeating_the_question_is_no_candidate(paper: object, kind: str, form: str) -> None:
    """The question a tool call repeats (with its title or ID) is the agent's request: the answer after it is
    graded alone."""
    task_id = f"{paper.arxiv_id}/{kind}"  # type: ignore[attr-defined]
    from helpers import ARXIV_TASKS
    question = ARXIV_TASKS[task_id].question
    assert grade(task_id, form.format(q=question, a=_value(paper, kind))).correctness == 1.0


@pytest.mark.parametrize("kind", KINDS)
def test_a_tool_call_then_its_error_is_evasive(kind: str) -> None:
    from helpers import ARXIV_TASKS
    question = ARXIV_TASKS[f"1406.2661/{kind}"].question
    output = (f'{{"tool": "arxiv_search", "arguments": {{"query": "{question}", "max_results": 2}}}}\n'
              '-> {"error": "upstream timeout", "status": 504, "ref": "2014-0099"}')
    assert grade(f"1406.2661/{kind}", output).well_formed == 0.0


def test_an_answering_tool_call_carries_the_answer() -> None:
    """A tool that answers ("final_answer", "submit_answer") is no request: its arguments are the answer."""
    output = '{"name": "submit_answer", "arguments": {"year": "2014"}}\nSubmitted.'
    assert grade("1406.2661/year", output).correctness == 1.0


# ------------------------------------------------- I. a label word in any language before the title is a label

#: Answer labels in other languages (a capitalised word, then lower case, and a colon).
LABEL_WORDS = ["Antwort", "Réponse", "Respuesta", "Odpowiedź", "Vastaus", "Válasz", "Відповідь", "Ответ", "Yanıt"]


@given(paper=st.sampled_from(PAPERS), label=st.sampled_from(LABEL_WORDS), bold=st.booleans())
@settings(max_examples=80, deadline=None)
def test_a_label_word_before_the_title_is_a_label(paper: object, label: str, bold: bool) -> None:
    """A single capitalised word with a colon, alone at the line's start before the title, labels the answer
    in any language: the title is correct, not part of a longer title."""
    lead = f"**{label}:**" if bold else f"{label}:"
    g = grade(f"{paper.arxiv_id}/title", f"{lead} {paper.title}")  # type: ignore[attr-defined]
    assert g.correctness == 1.0, lead


@pytest.mark.parametrize(("output", "correctness"), [
    ("GANs: Generative Adversarial Networks", 0.0),  # a method's name (a second capital) opens a longer title
    ("Conditional Generative Adversarial Networks", 0.0),
    ("Antwort: Generative Adversarial Networks", 1.0),
])
def test_label_word_examples(output: str, correctness: float) -> None:
    assert grade("1406.2661/title", output).correctness == correctness


# ----------------------------------------------------------- G. an account of a first guess gives it up

@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), kind=st.sampled_from(KINDS),
       form=st.sampled_from(["My first guess was {w}, but the answer is {r}.", "My initial pick was {w}; it is {r}.",
                             "My previous answer was {w}. It is {r}."]))
@settings(max_examples=100, deadline=None)
def test_an_account_of_a_first_guess_gives_it_up(paper: object, other: object, kind: str, form: str) -> None:
    """"My first guess was W" reports an answer given up: the answer after it is graded alone."""
    if not _distinct(paper, other, kind):
        return
    task_id = f"{paper.arxiv_id}/{kind}"  # type: ignore[attr-defined]
    right, wrong = _value(paper, kind), _value(other, kind)
    assert grade(task_id, form.format(w=wrong, r=right)).correctness == 1.0
    g = grade(task_id, form.format(w=right, r=wrong))
    assert (g.correctness, g.well_formed) == (0.0, 1.0)


@pytest.mark.parametrize(("output", "composite"), [
    ("My guesses, in order: Ian Goodfellow; Yoshua Bengio.", 0.75),  # ranked candidates are still candidates
    ("Candidates in order of likelihood: Yoshua Bengio, Ian Goodfellow", 0.75),
    ("Authors in order: Ian Goodfellow, Jean Pouget-Abadie, Mehdi Mirza.", 1.0),  # an author list, not candidates
])
def test_ranked_candidates_examples(output: str, composite: float) -> None:
    assert grade("1406.2661/author", output).composite == composite


# ------------------------------------------------------------- a checklist's cross mark rejects its entry

#: Checklist layouts, ``{kept}`` marked as kept and ``{crossed}`` crossed out (either order, any cross mark).
CHECKLISTS = [
    "✅ {kept}\n❌ {crossed}",
    "❌ {crossed}\n✅ {kept}",
    "- ✔ {kept}\n- ✗ {crossed}",
    "1. ✘ {crossed}\n2. ✓ {kept}",
    "{kept}\n✖️ {crossed}",
]


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), kind=st.sampled_from(KINDS),
       form=st.sampled_from(CHECKLISTS), right_kept=st.booleans())
@settings(max_examples=150, deadline=None)
def test_a_crossed_out_entry_is_no_candidate(paper: object, other: object, kind: str, form: str,
                                             right_kept: bool) -> None:
    """A cross mark (❌ ✗ ✘ ✖) before an entry rejects it, as "Wrong: B" does, so the entry kept is graded:
    right when the right answer is kept, wrong when it is the one crossed out (issue 17 class 5)."""
    if paper is other or not _distinct(paper, other, kind):
        return
    right, wrong = _value(paper, kind), _value(other, kind)
    kept, crossed = (right, wrong) if right_kept else (wrong, right)
    g = grade(f"{paper.arxiv_id}/{kind}", form.format(kept=kept, crossed=crossed))  # type: ignore[attr-defined]
    assert g.correctness == (1.0 if right_kept else 0.0), (form, kept, crossed, g.feedback)


# ------------------------------------------------------------- a citation manager's record

#: Records of one paper as citation managers export them: ``{t}`` its title, ``{a1}`` and ``{a2}`` its first two
#: authors as "Surname, Given", ``{y}`` its year.
RECORDS = [
    "TY  - JOUR\nTI  - {t}\nAU  - {a1}\nAU  - {a2}\nPY  - {y}\nER  - ",
    "%0 Journal Article\n%T {t}\n%A {a1}\n%A {a2}\n%D {y}",
    "@article{{key{y},\n  title = {{{t}}},\n  author = {{{a1} and {a2}}},\n  year = {{{y}}}\n}}",
]


def _inverted(name: str) -> str:
    """'Tomas Mikolov' -> 'Mikolov, Tomas' (a record's author form)."""
    given, _, surname = name.rpartition(" ")
    return f"{surname}, {given}"


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), kind=st.sampled_from(["title", "author", "year"]),
       form=st.sampled_from(RECORDS), first=st.booleans())
@settings(max_examples=150, deadline=None)
def test_a_record_of_the_paper_is_one_answer(paper: object, other: object, kind: str, form: str,
                                             first: bool) -> None:
    """A record's tags label its fields (RIS: TY, TI, AU, PY; EndNote: %0, %T, %A, %D; a BibTeX entry's header is
    its key): its type line and other fields offer nothing on a task of one field, and its author lines list the
    authors in order, so the record answers with its first author (README: a list of authors names its first
    author first). With the right first author listed second, the answer is another first author: wrong."""
    if paper is other or not _distinct(paper, other, "author"):
        return
    right, co = _inverted(paper.first_author), _inverted(other.first_author)  # type: ignore[attr-defined]
    a1, a2 = (right, co) if first else (co, right)
    output = form.format(t=paper.title, a1=a1, a2=a2, y=paper.year)  # type: ignore[attr-defined]
    g = grade(f"{paper.arxiv_id}/{kind}", output)  # type: ignore[attr-defined]
    if form.startswith("@") and kind == "author" and not first:
        return  # BibTeX's "author = {B and A}" still grades A right (a known gap, stop 33's note)
    assert g.correctness == (1.0 if kind != "author" or first else 0.0), (output, g.feedback)
