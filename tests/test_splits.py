"""Tests of verifiers.splits.split_by_group: determinism, group-disjointness, sizes and errors."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.base import DatasetError, Splits, Task
from verifiers.splits import split_by_group


def make_pool(group_sizes: list[int]) -> list[Task]:
    """A synthetic pool: group ``g<i>`` holds ``group_sizes[i]`` tasks."""
    return [
        Task(task_id=f"g{g}/{k}", kind="k", question=f"question {g} {k}", expected_behavior="rubric",
             answer=f"{g}-{k}", group=f"g{g}")
        for g, size in enumerate(group_sizes)
        for k in range(size)
    ]


def groups_of(tasks: tuple[Task, ...]) -> set[str]:
    return {t.group for t in tasks}


def assert_valid(splits: Splits, pool: list[Task], n: int) -> None:
    """Invariants every split must satisfy."""
    all_tasks = splits.trainset + splits.valset + splits.holdout
    assert len(all_tasks) == n
    assert len({t.task_id for t in all_tasks}) == n, "a task was selected twice"
    assert set(all_tasks) <= set(pool)
    train, val, hold = groups_of(splits.trainset), groups_of(splits.valset), groups_of(splits.holdout)
    assert not train & val and not train & hold and not val & hold, "a group straddles two splits"
    position = {t.task_id: i for i, t in enumerate(pool)}
    for _, tasks in splits.items():
        indices = [position[t.task_id] for t in tasks]
        assert indices == sorted(indices), "tasks inside a split must keep pool order"


POOL_17x4 = make_pool([4] * 17)


def test_full_pool_of_17_groups_of_4_splits_36_16_16() -> None:
    splits = split_by_group(POOL_17x4, None, seed=0)
    assert splits.sizes == {"trainset": 36, "valset": 16, "holdout": 16}
    assert_valid(splits, POOL_17x4, 68)
    assert splits.extra["num_cases"] == 68 and splits.extra["pool_size"] == 68


@pytest.mark.parametrize("seed", [0, 1, 7, 12345])
def test_same_seed_same_splits(seed: int) -> None:
    a = split_by_group(POOL_17x4, 20, seed)
    b = split_by_group(list(POOL_17x4), 20, seed)
    assert a == b
    assert a.digest() == b.digest()


def test_different_seeds_give_different_splits() -> None:
    digests = {split_by_group(POOL_17x4, None, seed).digest() for seed in range(5)}
    assert len(digests) == 5


def test_global_random_state_is_untouched() -> None:
    random.seed(99)
    state = random.getstate()
    split_by_group(POOL_17x4, 30, seed=3)
    assert random.getstate() == state


def test_round_robin_represents_as_many_groups_as_possible() -> None:
    pool = make_pool([10, 1, 1, 1, 1, 1])  # one big group, five singletons
    splits = split_by_group(pool, 6, seed=0)
    all_tasks = splits.trainset + splits.valset + splits.holdout
    assert len(groups_of(all_tasks)) == 6, "6 tasks should come from 6 different groups"
    splits = split_by_group(POOL_17x4, 17, seed=4)
    assert len(groups_of(splits.trainset + splits.valset + splits.holdout)) == 17


def test_three_cases_fill_all_three_splits() -> None:
    splits = split_by_group(POOL_17x4, 3, seed=0)
    assert splits.sizes == {"trainset": 1, "valset": 1, "holdout": 1}
    assert_valid(splits, POOL_17x4, 3)


def test_uneven_groups_stay_whole_and_near_target() -> None:
    pool = make_pool([8, 5, 5, 3, 3, 2, 2, 1, 1])
    splits = split_by_group(pool, None, seed=2)
    assert_valid(splits, pool, 30)
    assert all(size > 0 for size in splits.sizes.values())
    # every group present in a split is present with all of its tasks
    for _, tasks in splits.items():
        for group in groups_of(tasks):
            assert sum(t.group == group for t in tasks) == sum(t.group == group for t in pool)
    assert splits.sizes["trainset"] >= splits.sizes["valset"]
    assert splits.sizes["trainset"] >= splits.sizes["holdout"]


def test_two_groups_cannot_fill_three_splits_but_stay_disjoint() -> None:
    pool = make_pool([3, 3])
    splits = split_by_group(pool, None, seed=0)
    assert_valid(splits, pool, 6)
    assert sorted(splits.sizes.values()) == [0, 3, 3]


@pytest.mark.parametrize("bad", [2, 0, -1, 69])
def test_out_of_range_num_cases_raise_helpful_error(bad: int) -> None:
    with pytest.raises(DatasetError) as info:
        split_by_group(POOL_17x4, bad, seed=0)
    message = str(info.value)
    assert f"num_cases={bad}" in message
    assert "3 to 68" in message
    assert "omit num_cases" in message


@pytest.mark.parametrize("bad", [True, 3.0, "10"])
def test_non_integer_num_cases_rejected(bad: object) -> None:
    with pytest.raises(DatasetError, match="num_cases="):
        split_by_group(POOL_17x4, bad, seed=0)  # type: ignore[arg-type]


def test_tiny_pool_rejected() -> None:
    with pytest.raises(DatasetError, match="only 2 task"):
        split_by_group(make_pool([1, 1]), None, seed=0)


def test_jsonl_round_trip(tmp_path: Path) -> None:
    splits = split_by_group(POOL_17x4, 12, seed=5)
    paths = splits.save_jsonl(tmp_path)
    for name, tasks in splits.items():
        lines = paths[name].read_text(encoding="utf-8").splitlines()
        assert tuple(Task.from_dict(json.loads(line)) for line in lines) == tasks


@settings(max_examples=150, deadline=None)
@given(
    group_sizes=st.lists(st.integers(min_value=1, max_value=6), min_size=3, max_size=15),
    fraction=st.floats(min_value=0.0, max_value=1.0),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_split_invariants_hold_for_any_pool(group_sizes: list[int], fraction: float, seed: int) -> None:
    pool = make_pool(group_sizes)
    n = 3 + round(fraction * (len(pool) - 3))
    splits = split_by_group(pool, n, seed)
    assert_valid(splits, pool, n)
    selected_groups = groups_of(splits.trainset + splits.valset + splits.holdout)
    assert len(selected_groups) == min(n, len(group_sizes)), "round-robin must maximise group coverage"
    assert all(size > 0 for size in splits.sizes.values()), "3+ selected groups must fill all splits"
    assert split_by_group(pool, n, seed) == splits
