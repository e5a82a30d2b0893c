"""Tests of the arXiv grader's rules on what offers a title or a name (issue 17, stop 10): service metadata,
placeholders spelled out, prose sentences and titles given as authors offer nothing (0.00, not 0.50); a real
wrong title stays wrong (0.50) whatever wraps it; a title's layout (a lead-in line, its author line, guillemets,
BibTeX braces) does not change its grade; a near-miss title of the same paper is another title."""

from __future__ import annotations

import pytest
from helpers import grade_arxiv as grade
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.arxiv.offers import metadata_line, offers_nothing, prose_sentence
from verifiers.arxiv.papers import PAPERS

# ------------------------------------------------------------- text that offers no title and no name

#: Lines a server, a support desk or a template writes, and sentences of prose: none names a paper or a person.
NOTHING = (
    "HTTP 503 Service Unavailable - try again in a minute.",
    "HTTP/1.1 404 Not Found",
    "Error 502: Bad Gateway. The upstream host closed the connection.",
    "500 Internal Server Error",
    "Trace ID: 9c1e-77ab. The request could not be completed.",
    "Ticket #4471 created; our support staff will reply shortly.",
    "Case number 88213 has been escalated.",
    "Copyright 2021 Some Publisher. All rights reserved.",
    "(c) 2019 Acme Analytics Ltd",
    "To Be Announced",
    "Untitled",
    "TBA",
    "Title pending review.",
    "503 Service Temporarily Unavailable",
    "Earlier drafts differed slightly.",
    "The connection was reset by the remote host.",
    "Nothing further could be retrieved.",
    "Lo siento, no tengo acceso a internet en este momento.",
    "Es tut mir leid, ich habe keinen Zugriff.",
)


@pytest.mark.parametrize("output", NOTHING)
@pytest.mark.parametrize("kind", ["title", "author"])
def test_metadata_placeholders_and_prose_offer_nothing(output: str, kind: str) -> None:
    assert grade(f"1512.03385/{kind}", output).composite == 0.0, output


#: Titles that are not the task's paper's: another known paper's, made-up ones, sentence case, a trailing stop.
WRONG_TITLES = ("Going deeper with convolutions", "Distributed Representations of Sentences and Documents",
                "Neural Word Vectors for Everyone", "Sequence to sequence learning with neural networks",
                "Learning Phrase Representations Using Encoder Networks.", "Attention Is All You Need")


@pytest.mark.parametrize("output", WRONG_TITLES)
def test_a_real_wrong_title_stays_wrong(output: str) -> None:
    assert grade("1512.03385/title", output).composite == 0.5, output


@pytest.mark.parametrize("output", WRONG_TITLES[:5])
def test_a_title_given_as_the_author_names_no_one(output: str) -> None:
    assert grade("1512.03385/author", output).composite == 0.0, output


@pytest.mark.parametrize(("output", "composite"), [
    ("LLMs", 0.0), ("GPUs and TPUs", 0.0), ("Example Corp", 0.0),
    # a wrong person stays wrong, with an organisation or a place beside the name
    ("Quoc Le", 0.5), ("Quoc Le of Google Brain", 0.5), ("Ronald Williams at Northeastern University", 0.5),
    ("Quoc Le with Ilya Sutskever", 0.5),
    # a name beside a title still names someone
    ("Going Deeper with Convolutions - Christian Szegedy", 0.5),
    ("Attention Is All You Need, Vaswani et al., 2017", 0.5),
    ("Attention Is All You Need\nAshish Vaswani", 0.5), ("Sequence to Sequence Learning: Ilya Sutskever", 0.5),
])
def test_author_shapes(output: str, composite: float) -> None:
    assert grade("1301.3781/author", output).composite == composite, output


def test_the_shape_rules_alone() -> None:
    assert metadata_line("HTTP 429 Too Many Requests") and metadata_line("Request ID: 12-ab.")
    assert not metadata_line("Requests for Comments on Attention")
    assert prose_sentence("Later revisions changed little.") and prose_sentence("An engineer will follow up.")
    # no full stop, title case, or a participle before a preposition: a title's shape
    assert not prose_sentence("Later revisions changed little")
    assert not prose_sentence("Convolutional networks trained on images.")
    assert not prose_sentence("Neural Networks Changed Little.")
    assert not offers_nothing("") and not offers_nothing("Going deeper with convolutions")


@given(status=st.sampled_from(["HTTP 429 Too Many Requests", "Error 503", "Request ID: 7f3a-11", "Ticket #2019",
                               "© 2024 Example Inc.", "Status code: 500", "Correlation-ID 55e1"]),
       tail=st.sampled_from(["", " Please retry later.", " The upstream service timed out.",
                             " An engineer will follow up.", " All rights reserved."]),
       task=st.sampled_from([f"{p.arxiv_id}/{k}" for p in PAPERS for k in ("title", "author")]))
@settings(max_examples=120, deadline=None)
def test_no_status_line_ever_scores(status: str, tail: str, task: str) -> None:
    """No status, error, ticket or copyright line, with or without a prose sentence after it, scores above 0.00
    on a title or author task."""
    assert grade(task, status + tail).composite == 0.0, status + tail


# ------------------------------------------------------------- a wrong title's grade does not depend on its wrapper

WRAPPERS = ("{T}", "```\n{T}\n```", "> {T}", "<answer>{T}</answer>", "「{T}」", "I can't browse arXiv, but it's {T}.",
            "I can't browse arXiv, but it's '{T}'.", "I can't browse arXiv, but it's «{T}».", "**{T}**")


@given(wrapper=st.sampled_from(WRAPPERS), title=st.sampled_from(["Going deeper with convolutions",
                                                                   "Rethinking the inception architecture"]))
@settings(max_examples=40, deadline=None)
def test_a_wrong_title_is_wrong_in_any_wrapper(wrapper: str, title: str) -> None:
    assert grade("1406.2661/title", wrapper.format(T=title)).composite == 0.5, wrapper


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_the_right_title_is_right_in_any_wrapper(wrapper: str) -> None:
    assert grade("1406.2661/title", wrapper.format(T="Generative Adversarial Networks")).composite == 1.0, wrapper


# ------------------------------------------------------------- a near miss of the title offered beside it

def near_miss(title: str, pick: int, word: str) -> str:
    """``title`` with one of its longer words replaced by ``word``: a made-up title one word away."""
    words = title.split()
    long_words = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha()]
    at = long_words[pick % len(long_words)]
    words[at] = word
    return " ".join(words)


HEDGES = ("{A}, though it might be {B}", "{A}, if not {B}", "One of: {A}, {B}", "Best guess: {B}. Second guess: {A}",
          "- {A}\n- {B}", "{A}, though possibly {B}", '{{"title": "{A}", "alternative": "{B}"}}',
          '{{"title": "{A}", "alternatives": ["{B}"]}}', "Option 1: {A}\nOption 2: {B}")


@given(paper=st.sampled_from([p for p in PAPERS if any(len(w) > 4 and w.isalpha() for w in p.title.split())]),
       pick=st.integers(0, 5), word=st.sampled_from(["Gadgets", "Embeddings", "Classification", "Nets"]),
       form=st.sampled_from(HEDGES))
@settings(max_examples=150, deadline=None)
def test_the_title_with_a_near_miss_beside_it_hedges(paper: object, pick: int, word: str, form: str) -> None:
    """The right title offered with a title one word away, in any template of candidates, is hedged (0.75), as
    with another paper's title; the near miss alone is wrong."""
    other = near_miss(paper.title, pick, word)
    if other.lower() == paper.title.lower():
        return
    task_id = f"{paper.arxiv_id}/title"
    assert grade(task_id, form.format(A=paper.title, B=other)).composite == 0.75, form
    assert grade(task_id, other).composite < 0.75


@pytest.mark.parametrize(("output", "composite"), [
    # a lead-in line, then the title on its own line
    ("Based on my knowledge, the exact title is:\n\nGenerative Adversarial Networks", 1.0),
    ("The title of the paper is\n\n**Generative Adversarial Networks**", 1.0),
    # the title, then its author line
    ("Generative Adversarial Networks\nIan J. Goodfellow, Jean Pouget-Abadie, Mehdi Mirza", 1.0),
    ("Generative Adversarial Networks\nIan Goodfellow, Jean Pouget-Abadie and Mehdi Mirza", 1.0),
    # guillemets after a refusal clause, as other quotes
    ("I can't browse arXiv, but it's «Generative Adversarial Networks».", 1.0),
    ("I can't browse arXiv, but it's «Conditional Generative Adversarial Nets».", 0.5),
    # negations and corrections grade the title committed to
    ("Not Generative Adversarial Networks, it is Generative Adversarial Nets", 0.5),
    ("Generative Adversarial Nets? No - Generative Adversarial Networks", 1.0),
    ("My first instinct is Generative Adversarial Networks ... Final answer: Generative Adversarial Nets", 0.5),
    ("Final answer: Attention Is All You Need\n\n(Note: Generative Adversarial Networks is a common confusion)", 0.5),
    # a candidate label with no title after it offers none
    ("Best guess: Generative Adversarial Networks. Second guess: none.", 1.0),
    ('{"title": "Generative Adversarial Networks", "alternatives": []}', 1.0),
])
def test_title_layout_examples(output: str, composite: float) -> None:
    assert grade("1406.2661/title", output).composite == composite, output


def test_bibtex_braces_outside_a_field_are_normalisation() -> None:
    title = "Image is Worth 16x16 Words: Transformers for Image Recognition at Scale"
    assert grade("2010.11929/title", "{An} " + title).composite == 1.0
    assert grade("2010.11929/title", "An {Image} is Worth 16x16 Words: {Transformers} for Image Recognition at "
                                     "Scale").composite == 1.0
    assert grade("2010.11929/title", "{title}").composite == 0.0  # a placeholder keeps its braces
