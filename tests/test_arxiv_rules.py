"""Tests of the arXiv grader's rules closed in stop 9 (issue 17): a candidate cue reaches its own sentence only,
a full name keeps its given names inside emphasis, an English-word surname counts in an answer position, a full
given name that is not the author's names another person, a title with any subtitle added is another title,
"forget A" rejects A as "not A" does, a guess offers names."""

from __future__ import annotations

import pytest
from helpers import assert_gives_up
from helpers import grade_arxiv as grade
from hypothesis import given, settings
from hypothesis import strategies as st

# ------------------------------------------------------------- long answers: a cue reaches its sentence only

#: Background prose of a long answer: cue words of candidates ("options", "choices", "alternatives",
#: "possibilities"), capitalised terms and product names, a sentence-initial word before a capitalised word.
BACKGROUND = (
    "Training relies on stochastic gradient methods and careful choices of hyperparameters.",
    "Hugging Face offers several options for loading the pretrained weights.",
    "One of the options for fine-tuning is the Hugging Face library.",
    "Several alternatives exist, such as Long Short-Term Memory networks.",
    "Some design choices made by Google Brain researchers mattered.",
    "Researchers in Computer Vision and Natural Language Processing (NLP) weigh the alternatives it opened.",
    "Many possibilities were explored in follow-up work on Reinforcement Learning.",
    "Most Transformer variants keep the same recipe, with a few design choices changed.",
    "Later Versions of the code add options for mixed precision.",
    "The paper is on arXiv, where the full author list and version history can be found.",
    "Ablation studies isolate the contribution of each component.",
)
#: (task, the first author as the answer gives it, another person's name).
AUTHORS = [("1706.03762/author", "Ashish Vaswani", "Noam Shazeer"),
           ("1301.3781/author", "Tomas Mikolov", "Quoc Le"),
           ("1412.6980/author", "Diederik P. Kingma", "Jimmy Ba"),
           ("2201.11903/author", "Jason Wei", "Denny Zhou")]
#: How the answer sentence offers the name (emphasis and quotes around a full name included).
ANSWER_FORMS = ("The first author is {N}.", "The first author is **{N}**.", "**Answer:** {N}", "Answer: \"{N}\"",
                "It was written by _{N}_ and colleagues.")


def long_answer(paragraphs: list[list[str]], answer: str, at: int) -> str:
    texts = [" ".join(p) for p in paragraphs]
    texts.insert(at % (len(texts) + 1), answer)
    return "\n\n".join(texts)


@given(task=st.sampled_from(AUTHORS), form=st.sampled_from(ANSWER_FORMS), at=st.integers(0, 8),
       paragraphs=st.lists(st.lists(st.sampled_from(BACKGROUND), min_size=1, max_size=4), min_size=1, max_size=6))
@settings(max_examples=120, deadline=None)
def test_background_prose_names_no_candidate(task: tuple[str, str, str], form: str, at: int,
                                             paragraphs: list[list[str]]) -> None:
    """However long the answer, cue words and capitalised terms in its background prose offer no second name."""
    task_id, name, _ = task
    assert grade(task_id, long_answer(paragraphs, form.format(N=name), at)).correctness == 1.0


@given(task=st.sampled_from(AUTHORS), form=st.sampled_from(ANSWER_FORMS),
       paragraphs=st.lists(st.lists(st.sampled_from(BACKGROUND), min_size=1, max_size=4), min_size=1, max_size=6),
       alternative=st.sampled_from(["Another possibility, though, is {W}.", "My second guess would be {W}.",
                                    "I am torn between {N} and {W}.", "{N} and {W} are both candidates.",
                                    "{W} is another option.", "Alternatively, it might be {W}."]))
@settings(max_examples=80, deadline=None)
def test_a_candidate_in_its_cue_sentence_still_hedges(task: tuple[str, str, str], form: str,
                                                      paragraphs: list[list[str]], alternative: str) -> None:
    """The same long answer with another name called a candidate in the cue's own sentence is hedged."""
    task_id, name, other = task
    output = long_answer(paragraphs, form.format(N=name), 0) + "\n\n" + alternative.format(N=name, W=other)
    assert grade(task_id, output).correctness == 0.5, output


@pytest.mark.parametrize(("task_id", "output", "correctness"), [
    # the cue and the other name in different sentences: background, not a candidate
    ("1706.03762/author", "Ashish Vaswani. The choice of optimiser was discussed with Noam Shazeer.", 1.0),
    ("1706.03762/author", "Answer: Ashish Vaswani.\n\nThe options are many.\n\nNoam Shazeer also contributed.", 1.0),
    # in the cue's sentence, after the cue: a candidate
    ("1706.03762/author", "Ashish Vaswani. Other options: Noam Shazeer.", 0.5),
    ("1706.03762/author", "Ashish Vaswani (70%), Noam Shazeer (30%)", 0.5),
    # a full name in emphasis keeps its given name: "**Pavel Mikolov**" is another person
    ("1301.3781/author", "The first author is **Pavel Mikolov**.", 0.0),
    ("1301.3781/author", "The first author is **Tomas Mikolov**. Alternatively it might be Quoc Le.", 0.5),
])
def test_cue_scope_examples(task_id: str, output: str, correctness: float) -> None:
    assert grade(task_id, output).correctness == correctness, output


# ------------------------------------------------------- a surname that is also an English word ("He")

#: Answer positions: alone, after a label, a copula, "by" or a hedge word, opening a line, in a citation.
HE_ANSWERS = ("He", "The first author is He.", "First author: He", "Answer: **He**", "It was written by He.",
              "I think it was He.", "He and colleagues (2015) introduced residual learning.", "He (2015)",
              "He, Zhang, Ren and Sun", "It was written by He, Zhang, Ren, and Sun.", "- He\n- (the others follow)",
              "The first author is He, with Zhang second.", "First author — He", "**He**, 2015",
              "I believe the first author is He (Microsoft Research).")
#: A pronoun opening a clause, or the word inside prose: no name.
HE_PRONOUNS = ("He did not say.", "He, however, never said.", "Note: He was at a large lab then.",
               "I cannot recall. He was at a large lab then.", "He (in an interview) never said.")


@pytest.mark.parametrize("output", HE_ANSWERS)
def test_english_word_surname_in_an_answer_position_counts(output: str) -> None:
    assert grade("1512.03385/author", output).correctness == 1.0, output


@pytest.mark.parametrize("output", HE_PRONOUNS)
def test_english_word_surname_as_a_pronoun_is_no_name(output: str) -> None:
    assert grade("1512.03385/author", output).composite == 0.0, output


@pytest.mark.parametrize(("output", "correctness"), [
    ("Maybe He or Zhang.", 0.5), ("The first author is Zhang, not He.", 0.0), ("X. He", 0.0),
    ("He proposed residual networks with Xiangyu Zhang.", 0.0),
])
def test_english_word_surname_with_other_names(output: str, correctness: float) -> None:
    assert grade("1512.03385/author", output).correctness == correctness, output


@given(lead=st.sampled_from(["The first author is", "First author:", "It was written by", "Answer:", "Probably"]),
       markup=st.sampled_from(["", "**", "_", "\""]), stop=st.sampled_from(["", ".", "!", "\n\nThat is all."]))
@settings(max_examples=60, deadline=None)
def test_english_word_surname_after_an_answer_cue(lead: str, markup: str, stop: str) -> None:
    """Any answer cue, any emphasis, any ending: the capitalised surname in the answer's place names the author;
    the same sentence with a lower-case verb after it makes it a pronoun."""
    closing = {"": "", "**": "**", "_": "_", "\"": "\""}[markup]
    assert grade("1512.03385/author", f"{lead} {markup}He{closing}{stop}").correctness == 1.0
    assert grade("1512.03385/author", f"{lead} {markup}He{closing} left the lab{stop}").correctness == 0.0


# ------------------------------------------------------- the same surname with another whole given name

from verifiers.arxiv.papers import PAPERS  # noqa: E402

#: Given names that share an initial with some first author's but are no form of it.
OTHER_GIVEN = {"J": ["Jerry", "Julia", "Jasper"], "T": ["Tobias", "Teresa", "Tatiana"], "I": ["Irene", "Igor"],
               "D": ["Daniel", "Dmitri"], "G": ["Gregory", "Gabriel"], "K": ["Kevin", "Karl"], "A": ["Andrew", "Anna"],
               "O": ["Olga", "Oscar"], "Z": ["Zoe", "Zachary"], "L": ["Laura", "Lucas"], "E": ["Emily", "Ethan"]}
CITATIONS = ("{G} {S}", "{S}, {G}", "The first author is {G} {S}.", "{G} {S} et al.", "Answer: **{G} {S}**")


@given(paper=st.sampled_from(PAPERS), pick=st.integers(0, 2), form=st.sampled_from(CITATIONS))
@settings(max_examples=120, deadline=None)
def test_another_whole_given_name_with_the_same_initial_is_another_person(paper: object, pick: int,
                                                                           form: str) -> None:
    """The surname with a whole given name of the same initial that is no form of the author's names someone
    else (0.50); with the author's own given name it is correct."""
    names = OTHER_GIVEN[paper.given_name[0]]
    task_id = f"{paper.arxiv_id}/author"
    output = form.format(G=names[pick % len(names)], S=paper.last_name)
    assert grade(task_id, output).composite == 0.5, output
    assert grade(task_id, form.format(G=paper.given_name, S=paper.last_name)).correctness == 1.0


@pytest.mark.parametrize(("task_id", "output", "correctness"), [
    ("2201.11903/author", "Jerry Wei", 0.0), ("2006.11239/author", "Tin Kam Ho", 0.0),
    ("2201.11903/author", "Wei, Jerry", 0.0), ("2201.11903/author", "JERRY WEI", 0.0),
    # the author's given name, a short form, a spelling one letter apart, a known form, accents; an initial
    ("2006.11239/author", "Jon Ho", 1.0), ("2006.11239/author", "Jonathon Ho", 1.0),
    ("2006.11239/author", "Jonathan Daniel Ho", 1.0), ("1503.02531/author", "Geoff Hinton", 1.0),
    ("1412.6980/author", "Durk Kingma", 1.0), ("2005.14165/author", "Thomas Brown", 1.0),
    ("1301.3781/author", "Tomáš Mikolov", 1.0), ("2201.11903/author", "J. Wei", 1.0),
    # a title's words before the name are no given name
    ("2103.00020/author", "Improving Language Understanding by Generative Pre-Training Radford", 1.0),
])
def test_given_name_examples(task_id: str, output: str, correctness: float) -> None:
    assert grade(task_id, output).correctness == correctness, output


# ------------------------------------------------------------- a title with a subtitle added

#: Made-up subtitles: words that are never names ("Transformers", "PyTorch", "Google", "Everyone") make a subtitle
#: as any other title words do.
SUBTITLES = ("Transformers for Everyone", "A Comprehensive Survey", "Revisited and Extended", "PyTorch Edition",
             "Theory and Practice", "The Transformer Paper", "Everyone's Guide", "Google Research Notes",
             "Lessons Learned", "An Introduction")


@given(paper=st.sampled_from(PAPERS), subtitle=st.sampled_from(SUBTITLES), quote=st.sampled_from(["", "\"", "**"]))
@settings(max_examples=120, deadline=None)
def test_a_title_with_any_colon_subtitle_is_another_title(paper: object, subtitle: str, quote: str) -> None:
    """The right title with a made-up subtitle after a colon is a longer title: wrong (0.50), for every paper and
    every subtitle alike; the title alone is correct."""
    task_id = f"{paper.arxiv_id}/title"
    output = f"{quote}{paper.title}: {subtitle}{quote}"
    assert grade(task_id, output).composite == 0.5, output
    assert grade(task_id, f"{quote}{paper.title}{quote}").composite == 1.0


@pytest.mark.parametrize(("output", "composite"), [
    ("Attention Is All You Need: Transformers for Everyone", 0.5),
    ("Attention Is All You Need: PyTorch Edition", 0.5),
    # one word that is never a title's after the colon, or what follows on the next line: no subtitle
    ("Attention Is All You Need: NeurIPS 2017", 1.0), ("Attention Is All You Need:\nVaswani et al., 2017", 1.0),
    # names with "et al." after the colon attribute the title, as after a dash
    ("Attention Is All You Need: Vaswani et al.", 1.0), ("Attention Is All You Need: Ashish Vaswani et al., 2017", 1.0),
])
def test_colon_subtitle_examples(output: str, composite: float) -> None:
    assert grade("1706.03762/title", output).composite == composite, output


# ------------------------------------------------- metadata labels: one list, two scopes (before, in a bracket)

@given(label=st.sampled_from(["error 503", "status 404", "request id 7f3a", "retrieved from arXiv", "accessed",
                              "ticket 12", "cached copy", "as of", "last updated", "session abc", "fetched"]),
       date=st.sampled_from(["12/03/2021", "2021-03-12", "03.12.2021"]), bracket=st.sampled_from(["()", "[]"]))
@settings(max_examples=60, deadline=None)
def test_a_date_after_a_metadata_label_in_its_bracket_is_no_year(label: str, date: str, bracket: str) -> None:
    """A date inside a bracket after a label of the shared metadata rule dates the response, not the paper: the
    year given plainly is graded alone (correct, not hedged)."""
    output = f"It was submitted in 2017 {bracket[0]}{label}, {date}{bracket[1]}."
    assert grade("1706.03762/year", output).correctness == 1.0, output


def test_a_date_in_a_bracket_without_a_label_is_a_candidate() -> None:
    assert grade("1706.03762/year", "It was submitted in 2017 (or 12/03/2018).").correctness == 0.5
    assert grade("1706.03762/year", "2017 (submitted 12 Jun 2017)").correctness == 1.0


# ------------------------------------------------------------- "forget A", and a guess or an initial after a cue

#: A rejection verb before a candidate, as "not A": the answer is the other candidate.
REJECTIONS = ["Forget", "On second thought, forget", "Forget about", "Ignore", "Disregard", "Scratch that, forget"]


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), verb=st.sampled_from(REJECTIONS),
       kind=st.sampled_from(["id", "year"]))
@settings(max_examples=120, deadline=None)
def test_a_rejected_candidate_is_not_the_answer(paper: object, other: object, verb: str, kind: str) -> None:
    right, wrong = (paper.arxiv_id, other.arxiv_id) if kind == "id" else (str(paper.year), str(other.year))
    if right == wrong:
        return
    task_id = f"{paper.arxiv_id}/{kind}"
    assert grade(task_id, f"{verb} {wrong}. It is {right}.").composite == 1.0
    assert grade(task_id, f"{verb} {right}. It is {wrong}.").composite == 0.5


@pytest.mark.parametrize(("task_id", "output", "correctness"), [
    ("1301.3781/author", "On second thought, forget Tomas Mikolov. The first author is Kai Chen.", 0.0),
    ("1301.3781/author", "Forget Kai Chen: the first author is Tomas Mikolov.", 1.0),
    ("1301.3781/id", "Don't forget: 1301.3781 is the ID.", 1.0),
    ("1301.3781/id", "Never forget 1301.3781.", 1.0),
    ("1503.02531/author", "Best guess: Oriol Vinyals. Second guess: Hinton, G..", 0.5),
    ("1503.02531/author", "I'm torn between G. Hinton and Oriol Vinyals.", 0.5),
    ("1503.02531/author", "My best guess: G. Hinton.", 1.0),
    ("1301.3781/id", "I fetched 1301.3781 from arXiv.", 1.0),  # a retrieval label marks a date in a bracket only
    ("1301.3781/id", "cached 1301.3781", 1.0),
])
def test_rejection_and_guess_examples(task_id: str, output: str, correctness: float) -> None:
    assert grade(task_id, output).correctness == correctness


# ------------------------------------------------- an answer given up: an account of it, a label, struck text

#: Forms that give up ``{w}`` and answer ``{r}`` (issue 17, pass 9): an account of an earlier belief or a
#: retraction before the given-up candidate, a correction after it, a "wrong"/"right" line label, struck text.
GIVEN_UP = [
    "I used to believe {w}, but these days I am sure it is {r}.",
    "I withdraw {w}; the answer is {r}.",
    "Incorrect: {w}\nCorrect: {r}",
    "<del>{w}</del> {r}",
    "<strike>{w}</strike> → {r}",
    "{r}. ({w} was my initial answer.)",
    "First I checked {w}. That does not fit.\nThen {r}.",
    "Answering {w} would be wrong; {r}.",
    "Earlier I wrote {w}; it is actually {r}.",
    "{r} (correction - not {w})",
]


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), form=st.sampled_from(GIVEN_UP),
       kind=st.sampled_from(["id", "year", "title"]))
@settings(max_examples=150, deadline=None)
def test_a_given_up_candidate_is_not_the_answer(paper: object, other: object, form: str, kind: str) -> None:
    assert_gives_up(form, paper, other, kind)


@pytest.mark.parametrize(("task_id", "output", "correctness"), [
    ("1406.2661/author", "Goodfellow (correction: not Bengio)", 1.0),  # the correction negates what it names
    ("1406.2661/author", "Bengio. Correction: Goodfellow.", 1.0),  # a bare correction still replaces
    ("1406.2661/id", "X is wrong: 1406.2661", 1.0),  # "wrong:" labels a rejected answer only at a line's start
    ("1406.2661/id", "I used to 1406.2661", 1.0),  # "used to" rejects only as "used to think/believe"
    ("1406.2661/id", "1406.2661. It matches the abstract.", 1.0),
])
def test_given_up_examples(task_id: str, output: str, correctness: float) -> None:
    assert grade(task_id, output).correctness == correctness


# ----------------------------------------------------- two names offered as candidates on an author task

#: Forms that offer ``{a}`` and ``{b}`` as two candidates for one first author (issue 17, pass 9): a listing cue
#: before or after the names, a candidate called possible too, an alternation after a sentence's end or a
#: bracket, "and/or", "it may well be" in a later paragraph.
TWO_NAMES = [
    "The answer is one of: {a}; {b}.",
    "Possible answer: {a}. Other possible answer: {b}.",
    "Most likely: {a}. Also likely: {b}.",
    "Several names spring to mind as candidates: {a} and {b}.",
    "{a} and {b}, one of these two.",
    "{a} (best guess) / {b} (fallback)",
    "{a}. {b} is equally plausible.",
    "{a}. Or perhaps {b}.",
    "{a} and/or {b}.",
    "My memory says {a}.\n\nStill, it could also be {b}.",
    "{a}\n\nA widely cited paper; {b} seems equally possible.",
]


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), form=st.sampled_from(TWO_NAMES),
       first=st.booleans())
@settings(max_examples=150, deadline=None)
def test_two_names_offered_as_candidates_hedge(paper: object, other: object, form: str, first: bool) -> None:
    right, rival = paper.first_author, other.first_author
    if right.split()[-1] == rival.split()[-1] or right.split()[-1] in {"He", "Ho", "Hu"} or (
            rival.split()[-1] in {"He", "Ho", "Hu"}):
        return  # English-word surnames have rules of their own (see the README)
    a, b = (right, rival) if first else (rival, right)
    assert grade(f"{paper.arxiv_id}/author", form.format(a=a, b=b)).correctness == 0.5


@pytest.mark.parametrize(("task_id", "output", "correctness"), [
    ("1412.6980/author", "Disregard Jimmy Ba; Diederik P. Kingma.", 1.0),  # a negator before a full name
    ("1412.6980/author", "Disregard Diederik P. Kingma; Jimmy Ba.", 0.0),
    ("1412.6980/author", "Diederik P. Kingma is right; Jimmy Lei Ba was my earlier answer.", 1.0),
    ("1412.6980/author", "Diederik P. Kingma. It is one of the best-known optimisers.", 1.0),  # no "one of:" cue
    ("1412.6980/author", "Diederik P. Kingma; it may well be the most cited optimiser paper.", 1.0),
    ("1412.6980/author", "Diederik P. Kingma is one of the authors, with Jimmy Ba.", 1.0),
    ("1412.6980/author", "Diederik P. Kingma, with Jimmy Ba. A journal version is also possible.", 1.0),
    ("1412.6980/author", "Diederik P. Kingma\n\nA classic; Jimmy L Ba is also plausible.", 0.5),  # a bare initial
    ("1412.6980/author", "Kingma is credited as the second author; Ba comes first.", 0.0),
    ("1412.6980/author", "Ba was ranked third, and Kingma first.", 1.0),
])
def test_full_name_and_cue_examples(task_id: str, output: str, correctness: float) -> None:
    assert grade(task_id, output).correctness == correctness


# ------------------------------------- an answer under a condition after another work; a dash-listed subtitle


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), kind=st.sampled_from(["id", "year", "author"]),
       first=st.booleans(), lead=st.sampled_from(["I may have it mixed up with a related paper, in which case",
                                                  "Unless I am thinking of its follow-up paper, in which case"]))
@settings(max_examples=100, deadline=None)
def test_an_answer_under_a_condition_hedges(paper: object, other: object, kind: str, first: bool, lead: str) -> None:
    def value(p: object) -> str:
        return {"id": p.arxiv_id, "year": str(p.year), "author": p.first_author}[kind]
    right, rival = value(paper), value(other)
    if right == rival or kind == "author" and {right.split()[-1], rival.split()[-1]} & {"He", "Ho", "Hu"}:
        return
    a, b = (right, rival) if first else (rival, right)
    output = f"My answer: {a}. {lead} the answer would be {b}."
    assert grade(f"{paper.arxiv_id}/{kind}", output).correctness == 0.5


@pytest.mark.parametrize(("task_id", "output", "correctness"), [
    ("1406.2661/title", "Generative Adversarial Networks — Models, Training and Applications", 0.0),
    ("1406.2661/title", "Generative Adversarial Networks - Foundations, Methods, and Evaluation", 0.0),
    ("1406.2661/title", "Generative Adversarial Networks - Goodfellow, Mirza and Courville", 1.0),  # an attribution
    ("1406.2661/id", "1406.2661. A related paper is 1411.1784; it would be cited as a follow-up.", 1.0),
])
def test_condition_and_subtitle_examples(task_id: str, output: str, correctness: float) -> None:
    assert grade(task_id, output).correctness == correctness


# ------------------------------------------------------------------------ a section label offers no candidate

SECTION_LABELS = ["# Summary", "### Sources", "**Caveats**", "Explanation", "## Short answer", "#### Remarks"]


@given(paper=st.sampled_from(PAPERS), label=st.sampled_from(SECTION_LABELS), kind=st.sampled_from(["title", "author"]),
       wrap=st.sampled_from(["{v}", "**{v}**", "_{v}_"]))
@settings(max_examples=100, deadline=None)
def test_a_section_label_is_no_candidate(paper: object, label: str, kind: str, wrap: str) -> None:
    value = wrap.format(v=paper.title if kind == "title" else paper.first_author)
    output = f"{label}\n\n{value}\n\n## Background\n\nI recall it from the literature; do check arXiv."
    assert grade(f"{paper.arxiv_id}/{kind}", output).correctness == 1.0


# ------------------------------------------------------------------------------------- a month and a year


@given(paper=st.sampled_from(PAPERS), month=st.integers(1, 12), sep=st.sampled_from([".", "/", "-"]),
       pad=st.booleans())
@settings(max_examples=100, deadline=None)
def test_a_month_and_year_gives_the_year(paper: object, month: int, sep: str, pad: bool) -> None:
    date = f"{month:02d}{sep}{paper.year}" if pad else f"{month}{sep}{paper.year}"
    assert grade(f"{paper.arxiv_id}/year", f"Submitted {date}.").correctness == 1.0


@pytest.mark.parametrize(("output", "correctness", "well_formed"), [
    ("13.2013", 0.0, 0.0),  # no month 13: a dotted number, skipped whole
    ("release 4.2013.2", 0.0, 0.0),  # a version number
    ("11/2013", 1.0, 1.0),
])
def test_month_year_examples(output: str, correctness: float, well_formed: float) -> None:
    got = grade("1301.3781/year", output)
    assert (got.correctness, got.well_formed) == (correctness, well_formed)


@pytest.mark.parametrize(("task_id", "output"), [
    ("1406.2661/title", "Tool error: Connection timed out. Please retry later."),
    ("1406.2661/title", "Lookup timed out (3 attempts)."),
    ("1406.2661/author", "The bot cannot fetch papers. No results returned."),
    ("1406.2661/title", "Search Bot 3.1 could not retrieve the record."),
])
def test_a_tool_failure_is_evasive(task_id: str, output: str) -> None:
    got = grade(task_id, output)
    assert (got.correctness, got.well_formed) == (0.0, 0.0)
