"""Ground truth of the arXiv verifier: 17 landmark ML papers and the four tasks each yields.

``PAPERS`` holds the arXiv ID, the exact title and the first author as listed on arXiv
(``python -m verifiers.arxiv --validate`` re-checks them against the live arXiv API).  The submission year
is derived from the identifier: arXiv identifiers are ``YYMM.NNNN`` (to 2014-12) or ``YYMM.NNNNN``
(from 2015-01) with an optional ``vN`` version suffix, so the year is ``2000 + YY``
(source: https://info.arxiv.org/help/arxiv_identifier.html).

Every paper yields four tasks (68 in all): ``id`` (title -> ID), ``title`` (ID -> exact title),
``author`` (title and ID -> first author) and ``year`` (ID -> submission year).
"""

from __future__ import annotations

from dataclasses import dataclass

from verifiers.base import Task


@dataclass(frozen=True)
class Paper:
    """One paper's ground truth as listed on arXiv.

    Attributes:
        arxiv_id: identifier without version, ``YYMM.NNNN`` or ``YYMM.NNNNN``.
        title: the exact arXiv title (whitespace-normalised).
        first_author: the first author's name as arXiv lists it (given names first, surname last).
    """

    arxiv_id: str
    title: str
    first_author: str

    @property
    def yymm(self) -> str:
        """The ``YYMM`` prefix of the identifier (year and month of submission)."""
        return self.arxiv_id[:4]

    @property
    def year(self) -> int:
        """Submission year, ``2000 + YY`` of the identifier's ``YYMM`` prefix."""
        return 2000 + int(self.arxiv_id[:2])

    @property
    def last_name(self) -> str:
        """The first author's last name (last whitespace-separated word of ``first_author``)."""
        return self.first_author.split()[-1]

    @property
    def given_name(self) -> str:
        """The first author's first given name (first whitespace-separated word of ``first_author``)."""
        return self.first_author.split()[0]


#: Ground truth, checked against arXiv (``--validate``).  Order is the pool order.
PAPERS: tuple[Paper, ...] = (
    Paper("1301.3781", "Efficient Estimation of Word Representations in Vector Space", "Tomas Mikolov"),
    Paper("1406.2661", "Generative Adversarial Networks", "Ian J. Goodfellow"),
    Paper("1412.6980", "Adam: A Method for Stochastic Optimization", "Diederik P. Kingma"),
    Paper("1503.02531", "Distilling the Knowledge in a Neural Network", "Geoffrey Hinton"),
    Paper("1512.03385", "Deep Residual Learning for Image Recognition", "Kaiming He"),
    Paper("1706.03762", "Attention Is All You Need", "Ashish Vaswani"),
    Paper("1810.04805", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
          "Jacob Devlin"),
    Paper("2005.14165", "Language Models are Few-Shot Learners", "Tom B. Brown"),
    Paper("2006.11239", "Denoising Diffusion Probabilistic Models", "Jonathan Ho"),
    Paper("2010.11929", "An Image is Worth 16x16 Words: Transformers for Image Recognition at Scale",
          "Alexey Dosovitskiy"),
    Paper("2103.00020", "Learning Transferable Visual Models From Natural Language Supervision",
          "Alec Radford"),
    Paper("2106.09685", "LoRA: Low-Rank Adaptation of Large Language Models", "Edward J. Hu"),
    Paper("2201.11903", "Chain-of-Thought Prompting Elicits Reasoning in Large Language Models", "Jason Wei"),
    Paper("2203.02155", "Training language models to follow instructions with human feedback", "Long Ouyang"),
    Paper("2310.03714", "DSPy: Compiling Declarative Language Model Calls into Self-Improving Pipelines",
          "Omar Khattab"),
    Paper("2402.03300", "DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open Language Models",
          "Zhihong Shao"),
    Paper("2507.19457", "GEPA: Reflective Prompt Evolution Can Outperform Reinforcement Learning",
          "Lakshya A Agrawal"),
)

#: Other forms of the first authors' given names that name the same person, beside the given name itself, a
#: short form it starts with ("Geoff", "Alex", "Jon") and a one-letter spelling variant ("Thomas", "Alexei"),
#: which the grader accepts for every author: English short forms that are no prefix ("Tom" of Thomas, "Jake" of
#: Jacob, "Ted" of Edward; "Dirk" of Diederik), transliterations ("Aleksei") and the name an author goes by
#: (Diederik P. Kingma signs "Durk Kingma").  Keyed by the given name as ``PAPERS`` lists it.
GIVEN_NAME_FORMS: dict[str, tuple[str, ...]] = {
    "Diederik": ("Durk", "Dirk"),
    "Tom": ("Thomas", "Tommy"),
    "Tomas": ("Tom",),
    "Jacob": ("Jake",),
    "Edward": ("Ted", "Eddie", "Ned"),
    "Alexey": ("Aleksei", "Alexej", "Aleksey", "Alexander"),
}

#: Task kinds, in pool order within each paper.
KINDS: tuple[str, ...] = ("id", "title", "author", "year")

QUESTION_TEMPLATES: dict[str, str] = {
    "id": 'What is the arXiv identifier of the paper titled "{title}"?',
    "title": "What is the exact title of the arXiv paper {arxiv_id}?",
    "author": 'Who is the first author of the paper "{title}" (arXiv:{arxiv_id})?',
    "year": "In which year was the arXiv paper {arxiv_id} submitted?",
}

RUBRIC_TEMPLATES: dict[str, str] = {
    "id": "States the arXiv identifier {arxiv_id} of '{title}' and nothing else, without listing other "
          "candidate identifiers.",
    "title": "Gives the exact title '{title}' of arXiv paper {arxiv_id}, committing to a single title.",
    "author": "Names {first_author} as the first author of '{title}' (arXiv {arxiv_id}).",
    "year": "States {year} as the submission year of arXiv paper {arxiv_id} (the YYMM prefix {yymm} means "
            "2000 + {yy}) and gives a single year.",
}


def _fields(paper: Paper) -> dict[str, str | int]:
    return {"arxiv_id": paper.arxiv_id, "title": paper.title, "first_author": paper.first_author,
            "year": paper.year, "yymm": paper.yymm, "yy": paper.arxiv_id[:2]}


def answer_of(paper: Paper, kind: str) -> str:
    """The ground-truth answer of ``paper`` for task ``kind`` (one of ``KINDS``), as a string."""
    return {"id": paper.arxiv_id, "title": paper.title, "author": paper.first_author,
            "year": str(paper.year)}[kind]


def make_tasks(paper: Paper) -> tuple[Task, ...]:
    """The four tasks (in ``KINDS`` order) of one paper; ``task_id`` is ``"<arxiv_id>/<kind>"``."""
    fields = _fields(paper)
    return tuple(
        Task(task_id=f"{paper.arxiv_id}/{kind}", kind=kind,
             question=QUESTION_TEMPLATES[kind].format(**fields),
             expected_behavior=RUBRIC_TEMPLATES[kind].format(**fields),
             answer=answer_of(paper, kind), group=paper.arxiv_id)
        for kind in KINDS
    )
