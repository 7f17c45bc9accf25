"""The identity memo behind the estimators' and planner's repeated questions."""

from __future__ import annotations

from gpuplan.memo import IdentityMemo


def test_an_equal_but_different_object_is_not_a_hit() -> None:
    a, b = [1, 2], [1, 2]  # equal, two objects
    memo: IdentityMemo[str] = IdentityMemo()
    memo.put(a, None, None, ("x",), "made for a")
    assert memo.get(a, None, None, ("x",)) == "made for a"
    assert memo.get(b, None, None, ("x",)) is None
    assert memo.get(a, None, None, ("y",)) is None  # the values are part of the key


def test_the_memo_starts_again_empty_at_its_limit() -> None:
    memo: IdentityMemo[int] = IdentityMemo(limit=2)
    held = [object() for _ in range(3)]
    for i, obj in enumerate(held):
        memo.put(obj, None, None, (), i)
    assert len(memo) == 1 and memo.get(held[2], None, None, ()) == 2 and memo.get(held[0], None, None, ()) is None
