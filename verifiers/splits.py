"""Group-aware, seeded trainset / valset / holdout splits for any verifier's task pool.

A *group* (``Task.group``) is the unit that must never straddle two splits: for the arXiv verifier
it is the paper, so a model cannot see a paper's title in the trainset and be asked for its ID in the
holdout.  The algorithm, deterministic for a seed (``random.Random(seed)``, never the global state):

1. selection: shuffle the groups, shuffle each group's tasks, then take one task per group in turn
   (round-robin) until ``num_cases`` tasks are taken, so as many groups as possible are represented;
2. assignment: visit the selected groups largest first (ties in shuffled order) and put each whole
   group into the split with the largest *relative deficit* ``(target - assigned) / target``, where
   the targets are 50 / 25 / 25 % of ``num_cases`` (ties go to trainset, then valset, then holdout).
   An empty split has deficit 1, the maximum, so with at least 3 selected groups every split gets one;
3. order: tasks inside a split keep their order in ``pool``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from fractions import Fraction

from verifiers.base import DatasetError, Splits, Task

#: Split names and their target shares of the selected tasks (sum to 1).
SPLIT_SHARES: tuple[tuple[str, Fraction], ...] = (
    ("trainset", Fraction(1, 2)),
    ("valset", Fraction(1, 4)),
    ("holdout", Fraction(1, 4)),
)
#: Fewest tasks that can fill three non-empty splits.
MIN_CASES = 3


def check_num_cases(num_cases: int | None, pool_size: int) -> int:
    """The number of tasks to select: ``num_cases``, or ``pool_size`` when it is ``None``.

    Raises:
        DatasetError: when the result is not an integer in ``[MIN_CASES, pool_size]``; the message
            names the value, the allowed range and what to pass instead.
    """
    if pool_size < MIN_CASES:
        raise DatasetError(
            f"the task pool has only {pool_size} task(s); at least {MIN_CASES} are needed to fill "
            f"trainset, valset and holdout"
        )
    n = pool_size if num_cases is None else num_cases
    if isinstance(n, bool) or not isinstance(n, int) or not MIN_CASES <= n <= pool_size:
        raise DatasetError(
            f"num_cases={num_cases!r} is out of range: pass an integer from {MIN_CASES} to {pool_size} "
            f"(the pool size), or omit num_cases to use all {pool_size} tasks"
        )
    return n


def _groups_in_order(pool: Sequence[Task]) -> dict[str, list[int]]:
    """Pool indices per group, groups in order of first appearance in ``pool``."""
    groups: dict[str, list[int]] = {}
    for index, task in enumerate(pool):
        groups.setdefault(task.group, []).append(index)
    return groups


def _select(pool: Sequence[Task], n: int, rng: random.Random) -> dict[str, list[int]]:
    """Round-robin selection of ``n`` pool indices over shuffled groups; returns group -> indices."""
    groups = _groups_in_order(pool)
    names = list(groups)
    rng.shuffle(names)
    queues = {name: rng.sample(groups[name], len(groups[name])) for name in names}
    selected: dict[str, list[int]] = {}
    taken, depth = 0, 0
    while taken < n:
        for name in names:
            if depth < len(queues[name]) and taken < n:
                selected.setdefault(name, []).append(queues[name][depth])
                taken += 1
        depth += 1
    return selected


def _assign(selected: dict[str, list[int]], n: int) -> dict[str, list[int]]:
    """Greedy whole-group assignment to splits by largest relative deficit; returns split -> indices."""
    targets = {name: share * n for name, share in SPLIT_SHARES}
    assigned: dict[str, list[int]] = {name: [] for name, _ in SPLIT_SHARES}
    order = sorted(selected, key=lambda group: -len(selected[group]))  # stable: ties keep shuffle order
    for group in order:
        # max() keeps the first of equal keys, so ties go to trainset, then valset, then holdout
        best = max(assigned, key=lambda split: (targets[split] - len(assigned[split])) / targets[split])
        assigned[best].extend(selected[group])
    return assigned


def split_by_group(pool: Sequence[Task], num_cases: int | None = None, seed: int = 0) -> Splits:
    """Deterministic, group-disjoint trainset / valset / holdout split of ``num_cases`` tasks of ``pool``.

    Args:
        pool: all tasks with ground truth, in a fixed order (the order kept inside each split).
        num_cases: how many tasks to use, from 3 to ``len(pool)``; ``None`` means the whole pool.
        seed: seed of the private ``random.Random`` used for selection and assignment.

    Returns:
        ``Splits`` whose three tuples hold ``num_cases`` tasks in total, sized about 50 / 25 / 25 % in
        whole groups; no group appears in two splits; every split is non-empty when at least 3
        groups are selected (with fewer groups in the pool some split stays empty).
        ``extra`` records ``num_cases``, ``pool_size`` and the groups of each split.

    Raises:
        DatasetError: when ``num_cases`` is outside ``[3, len(pool)]`` (see :func:`check_num_cases`).
    """
    n = check_num_cases(num_cases, len(pool))
    rng = random.Random(seed)
    assigned = _assign(_select(pool, n, rng), n)
    ordered = {name: tuple(pool[i] for i in sorted(indices)) for name, indices in assigned.items()}
    groups = {name: sorted({task.group for task in tasks}) for name, tasks in ordered.items()}
    return Splits(
        trainset=ordered["trainset"],
        valset=ordered["valset"],
        holdout=ordered["holdout"],
        seed=seed,
        extra={"num_cases": n, "pool_size": len(pool), "groups": groups},
    )
