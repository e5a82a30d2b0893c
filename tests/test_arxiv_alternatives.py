"""Tests of the arXiv grader's rules closed in stop 10 (issue 17): a citation form of the first author ("Mikolov,
T.", "Hinton et al.", "Goodfellow, I. J.") is read as a whole name, so names offered as alternatives to it hedge and
a retraction after it retracts it, as for the full name; "A (no, not B)" commits to A and rejects B."""

from __future__ import annotations

import pytest
from helpers import grade_arxiv as grade
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.arxiv import PAPERS, Paper

#: How an answer cites the first author (APA 7, sections 8.17 and 9.8): full name, initial first, inverted with
#: initials or given name, "et al.".
CITATION_FORMS = ("{G} {S}", "{I}. {S}", "{S}, {I}.", "{S}, {G}", "{S} et al.", "{S}, {I}. et al.", "{S} {I}")
#: Other people, in the same forms (no first author of a known paper).
OTHERS = ("Jeffrey Dean", "Dean, J.", "Greg Corrado", "Corrado, G. S.", "Sutskever et al.", "Ilya Sutskever",
          "J. Dean", "Dean J")
#: Names offered as alternatives ({A} and {B} are both candidates).
ALTERNATIVES = ("{A} or {B}", "Either {A} or {B}.", "{A} (or possibly {B})", "Could be {A}, could be {B}.",
                "{A}? {B}?", "{A}, if not {B}", "It's {A}, though {B} is also possible.", "maybe {A} or {B}",
                "It's either {A} or {B}.\n\nBoth worked on the method at the time.\n\nI lean to neither.",
                "One of {A} or {B}.", "Either {A} or {B} — I can't verify which.", "{A}; maybe {B}",
                "I'd say {A}, but it could also be {B}.", "{A} (70%), {B} (30%)")
#: A first name retracted for a second one: the text commits to {B}.
RETRACTIONS = ("At first I thought {A}, but it's {B}.", "{A}. Actually, it's {B}.", "{A}? No - {B}",
               "{B} (I previously said {A}, which was wrong)", "earlier I wrote {A}; the first author is {B}",
               "{A}, sorry, {B}", "{A} is wrong; it's {B}.", "I initially said {A}, but the first author is {B}.",
               "{A} — no wait, {B}.", "{A} is the second author; the first is {B}.")


def cite(paper: Paper, form: str) -> str:
    return form.format(G=paper.given_name, I=paper.given_name[0], S=paper.last_name)


@given(paper=st.sampled_from(PAPERS), form=st.sampled_from(CITATION_FORMS), other=st.sampled_from(OTHERS),
       template=st.sampled_from(ALTERNATIVES), right_first=st.booleans())
@settings(max_examples=200, deadline=None)
def test_a_cited_name_among_alternatives_hedges(paper: Paper, form: str, other: str, template: str,
                                                right_first: bool) -> None:
    """The first author in any citation form, offered with another name as an alternative (either order): hedged
    (0.75); two other names: wrong (0.50)."""
    task_id, right = f"{paper.arxiv_id}/author", cite(paper, form)
    a, b = (right, other) if right_first else (other, right)
    output = template.format(A=a, B=b)
    assert grade(task_id, output).composite == 0.75, output
    wrong = template.format(A=other, B="Oriol Vinyals" if other != "Oriol Vinyals" else "Jeffrey Dean")
    assert grade(task_id, wrong).composite == 0.5, wrong


@given(paper=st.sampled_from(PAPERS), form=st.sampled_from(CITATION_FORMS), other=st.sampled_from(OTHERS),
       template=st.sampled_from(RETRACTIONS))
@settings(max_examples=200, deadline=None)
def test_a_retracted_cited_name_is_not_the_answer(paper: Paper, form: str, other: str, template: str) -> None:
    """The first author in any citation form, then retracted for another name: graded by the other name (wrong),
    as with the full name; the same retraction the other way round is correct."""
    task_id, right = f"{paper.arxiv_id}/author", cite(paper, form)
    output = template.format(A=right, B=other)
    assert grade(task_id, output).composite == 0.5, output
    assert grade(task_id, template.format(A=other, B=right)).composite == 1.0


@given(paper=st.sampled_from(PAPERS), form=st.sampled_from(CITATION_FORMS[1:]), other=st.sampled_from(OTHERS),
       template=st.sampled_from(ALTERNATIVES + RETRACTIONS + ("{A}", "The first author is {A}.", "Maybe {A}.",
                                                              "{A} (confidence: low)", "{A} (no, not {B})")))
@settings(max_examples=200, deadline=None)
def test_a_citation_form_grades_as_the_full_name(paper: Paper, form: str, other: str, template: str) -> None:
    """Whatever the grader does with "Tomas Mikolov" in an answer, it does with "Mikolov, T.", "T. Mikolov",
    "Mikolov et al." in its place."""
    task_id = f"{paper.arxiv_id}/author"
    full = grade(task_id, template.format(A=paper.first_author, B=other))
    cited = grade(task_id, template.format(A=cite(paper, form), B=other))
    assert cited.correctness == full.correctness, (template, form)


#: One name committed to, with doubt, a refusal after it, or co-authors named in their place: correct.
COMMITTED = ("Maybe {A}", "{A} (confidence: low)", "I think it's {A}.", "Probably {A}, but I'm not sure.",
             "{A}? I'm not 100% sure.", "{A} — I can't verify this from memory.", "{A}, with {B} as second author.",
             "{A} and {B}", "{A}, {B}", "The first author is {A}; {B} is the second author.", "{A} (co-author: {B})",
             "Answer: {A}\n\nIt is a well-known paper.", "{A}. I can't check arXiv right now, though.",
             "{A}, I believe.")


@given(paper=st.sampled_from(PAPERS), form=st.sampled_from(CITATION_FORMS), other=st.sampled_from(OTHERS),
       template=st.sampled_from(COMMITTED))
@settings(max_examples=200, deadline=None)
def test_one_cited_name_committed_to_is_correct(paper: Paper, form: str, other: str, template: str) -> None:
    """A single name said with doubt commits to it (the README's "maybe A"), and naming co-authors in their own
    place is no hedge, in every citation form."""
    output = template.format(A=cite(paper, form), B=other)
    assert grade(f"{paper.arxiv_id}/author", output).correctness == 1.0, output


@pytest.mark.parametrize(("task_id", "output", "correctness"), [
    ("1301.3781/author", "Either Mikolov, T. or Jeffrey Dean.", 0.5),
    ("1503.02531/author", "Hinton et al. or Oriol Vinyals", 0.5),
    ("1406.2661/author", "Goodfellow, I. J. (or possibly Yoshua Bengio)", 0.5),
    ("1301.3781/author", "Dean, J. or Mikolov, T.", 0.5),
    ("1301.3781/author", "It's Jeffrey Dean, though Mikolov is also possible.", 0.5),
    ("1301.3781/author", "Corrado, G. or Dean, J.", 0.0),
    # a retraction after a citation retracts it
    ("1301.3781/author", "At first I thought Mikolov, Tomas, but it's Jeffrey Dean.", 0.0),
    ("1406.2661/author", "Goodfellow, Ian. Actually, it's Jean Pouget-Abadie.", 0.0),
    ("1301.3781/author", "Mikolov, T.? No - Jeffrey Dean", 0.0),
    # the initial before a name is the next author's: a list names its first author first
    ("1706.03762/author", "Vaswani, A. Shazeer, N. Parmar", 1.0),
    ("1706.03762/author", "Vaswani, A., Shazeer, N., & Parmar, N. (2017)", 1.0),
    ("1706.03762/author", "Shazeer, N., & Vaswani, A. (2017)", 0.0),
    # one name with doubt commits
    ("1301.3781/author", "Maybe Mikolov, T.", 1.0), ("1301.3781/author", "Mikolov, T. (confidence: low)", 1.0),
    # Vancouver initials, a year after the citation, a cue calling the names candidates
    ("1301.3781/author", "Dean J or Mikolov T", 0.5), ("1406.2661/author", "Goodfellow IJ, Pouget-Abadie J", 1.0),
    ("1301.3781/author", "Either Dean et al. (2012) or Mikolov et al. (2013).", 0.5),
    ("1301.3781/author", "Possibly Dean, J.; possibly Mikolov, T.", 0.5),
    ("1301.3781/author", "I believe it's Dean, J., although it might be Mikolov, T.", 0.5),
    ("1301.3781/author", "Hmm, Dean, J.? Or Mikolov, T.?", 0.5),
    ("1301.3781/author", "Two candidates: Dean, J. and Mikolov, T.", 0.5),
    ("1706.03762/author", "The authors include Noam Shazeer and Ashish Vaswani.", 0.0),
    # an initial after "sorry," is no refusal ("sorry, I ..."); an account of an earlier answer ends at its sentence
    ("1406.2661/author", "Jeffrey Dean, sorry, I. Goodfellow", 1.0),
    ("1301.3781/author", "I previously said Mikolov, T. That was wrong: it's Dean, J.", 0.0),
])
def test_citation_form_examples(task_id: str, output: str, correctness: float) -> None:
    assert grade(task_id, output).correctness == correctness, output


# ------------------------------------------------------------------- "A (no, not B)" rejects B, commits to A

@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), kind=st.sampled_from(["id", "year"]),
       form=st.sampled_from(["{A} (no, not {B})", "{A} (not {B})", "arXiv:{A} (no, not {B})", "{A} (No, not {B}.)"]))
@settings(max_examples=120, deadline=None)
def test_a_bracketed_rejection_commits_to_the_answer_before_it(paper: Paper, other: Paper, kind: str,
                                                               form: str) -> None:
    """"A (no, not B)" answers A and rejects B: correct when A is right, wrong when B is; "A (no, B)" still
    corrects A to B."""
    right, wrong = (paper.arxiv_id, other.arxiv_id) if kind == "id" else (str(paper.year), str(other.year))
    if right == wrong:
        return
    task_id = f"{paper.arxiv_id}/{kind}"
    if kind == "year" and form.startswith("arXiv"):
        form = form[6:]
    assert grade(task_id, form.format(A=right, B=wrong)).composite == 1.0
    assert grade(task_id, form.format(A=wrong, B=right)).composite == 0.5
    assert grade(task_id, f"{wrong} (no, {right})").composite == 1.0
    assert grade(task_id, f"{right} (no, {wrong})").composite == 0.5


@pytest.mark.parametrize(("task_id", "output", "correctness"), [
    ("1301.3781/author", "Tomas Mikolov (no, not Jeffrey Dean)", 1.0),
    ("1301.3781/author", "Jeffrey Dean (no, not Tomas Mikolov)", 0.0),
    ("1706.03762/title", "\"Attention Is All You Need\" (no, not \"Attention Is All You Want\")", 1.0),
])
def test_bracketed_rejection_examples(task_id: str, output: str, correctness: float) -> None:
    assert grade(task_id, output).correctness == correctness, output


# ------------------------------------------------------- a refusal clause after candidates does not cancel them

#: A refusal clause after the candidates, set off by a comma, a dash or a full stop.
REFUSAL_AFTER = (" — I can't verify which from memory.", ", I can't check which.", ". I cannot verify this.",
                 " - I don't have access to arXiv.")


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), kind=st.sampled_from(["id", "year", "author"]),
       refusal=st.sampled_from(REFUSAL_AFTER), lead=st.sampled_from(["", "It's either ", "Maybe "]))
@settings(max_examples=120, deadline=None)
def test_candidates_before_a_refusal_clause_still_hedge(paper: Paper, other: Paper, kind: str, refusal: str,
                                                        lead: str) -> None:
    """"A or B — I can't verify which": the refusal does not take back the candidates offered before it; the
    right one among them is hedged, as without the refusal."""
    values = {"id": lambda p: p.arxiv_id, "year": lambda p: str(p.year), "author": lambda p: p.first_author}[kind]
    if values(paper) == values(other) or paper.last_name == other.last_name:
        return
    task_id = f"{paper.arxiv_id}/{kind}"
    output = f"{lead}{values(paper)} or {values(other)}{refusal}"
    assert grade(task_id, output).composite == 0.75, output
    assert grade(task_id, f"I can't verify this, but it's either {values(other)} or {values(paper)}.").composite \
        == 0.75


@pytest.mark.parametrize(("task_id", "output", "correctness"), [
    ("1301.3781/author", "It's either T. Mikolov or Kai Chen — I can't verify which from memory.", 0.5),
    ("1301.3781/author", "I can't verify this, but it's either Mikolov, T. or Chen, K.", 0.5),
    ("1301.3781/title", "I don't know exactly, Efficient Estimation of Word Representations in Vector Space or "
                        "Distributed Representations of Words and Phrases and their Compositionality", 0.5),
    ("1301.3781/author", "Tomas Mikolov — I can't verify this from memory.", 1.0),
    # a refusal alone, or with background prose after it, still offers nothing
    ("1301.3781/author", "I'm sorry, I can't browse arXiv.", 0.0),
    ("1706.03762/title", "I can't look that up. It proposed Multi-Head Attention.", 0.0),
])
def test_refusal_after_candidates_examples(task_id: str, output: str, correctness: float) -> None:
    assert grade(task_id, output).correctness == correctness, output


# ------------------------------------------------------- conditional branches and option lists, wrong one first

@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), kind=st.sampled_from(["id", "year", "author"]),
       form=st.sampled_from(["If you mean the original version, {A}; if you mean the follow-up, {B}.",
                             "If the list is alphabetical, {A}; otherwise {B}.",
                             "If you count the workshop version, {A}. Otherwise, {B}."]), right_first=st.booleans())
@settings(max_examples=120, deadline=None)
def test_conditional_branches_hedge_in_either_order(paper: Paper, other: Paper, kind: str, form: str,
                                                    right_first: bool) -> None:
    """Two answers under two conditions hedge whichever branch holds the right one."""
    values = {"id": lambda p: p.arxiv_id, "year": lambda p: str(p.year), "author": lambda p: p.first_author}[kind]
    if values(paper) == values(other) or paper.last_name == other.last_name:
        return
    a, b = (values(paper), values(other)) if right_first else (values(other), values(paper))
    output = form.format(A=a, B=b)
    assert grade(f"{paper.arxiv_id}/{kind}", output).composite == 0.75, output


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(["Distributed Representations of Words and Phrases and "
                                                             "their Compositionality", "Sequence to Sequence "
                                                             "Learning with Neural Networks", "Deep Learning"]),
       label=st.sampled_from(["Option {L}: ", "**Option {L}:** ", "Candidate {L}: ", "- Option {L} - ", "Option {L}. ",
                              "Option {L}) ", "Choice {L} - ", "Alternative: "]),
       right_first=st.booleans())
@settings(max_examples=120, deadline=None)
def test_option_lines_hedge_in_either_order(paper: Paper, other: str, label: str, right_first: bool) -> None:
    """"Option A: X\\nOption B: Y" lists two candidate titles: hedged whichever line holds the right title (one
    rule of labelled candidates, whatever ends the label: a colon, a dash, or a full stop or bracket after its
    index)."""
    a, b = (paper.title, other) if right_first else (other, paper.title)
    output = f"{label.format(L='A')}{a}\n{label.format(L='B')}{b}"
    assert grade(f"{paper.arxiv_id}/title", output).composite == 0.75, output
    assert grade(f"{paper.arxiv_id}/title", f"{label.format(L='A')}{paper.title}").composite == 1.0


# ------------------------------------------------------- a co-author in a two-author citation, for every surname

@given(paper=st.sampled_from(PAPERS), form=st.sampled_from(["{S} & Zhang", "{S} & Zhang (2016)", "({S} & Zhang, 2016)",
                                                            "{S} and Zhang (2016)", "As {S} and Zhang (2016) showed, "
                                                            "depth helps.", "{S}, Zhang et al.",
                                                            "{S} and Zhang, 2016", "The paper by {S} & Zhang."]))
@settings(max_examples=120, deadline=None)
def test_a_two_author_citation_names_its_first_author_for_every_surname(paper: Paper, form: str) -> None:
    """APA's two-author citation ("Kingma & Ba", "He and Zhang (2015)") names its first author, for a surname
    that is also an English word ("He", "Ho", "Hu", "Wei", "Long") as for any other; the co-author first names
    someone else."""
    task_id = f"{paper.arxiv_id}/author"
    assert grade(task_id, form.format(S=paper.last_name)).correctness == 1.0, form
    swapped = form.replace("{S}", "Zhang-X").replace("Zhang", "{S}", 1).replace("Zhang-X", "Zhang")
    assert grade(task_id, swapped.format(S=paper.last_name)).correctness == 0.0, swapped


@pytest.mark.parametrize(("output", "composite"), [
    ("Option A. Attention Is All You Need. Option B. Self-Attention Networks for Translation.", 0.75),
    ("Option 2) Self-Attention Networks for Translation\nOption 1) Attention Is All You Need", 0.75),
    ("Best guess: Attention Is All You Need. Alternative: Self-Attention Networks for Translation", 0.75),
    # a full stop after a label word without an index ends a sentence, it labels nothing
    ("Attention Is All You Need\n\nAlternative. Self-Attention Networks for Translation was a later paper.", 1.0),
    ("Option A. Attention Is All You Need", 1.0),
])
def test_labelled_candidates_examples(output: str, composite: float) -> None:
    assert grade("1706.03762/title", output).composite == composite, output
