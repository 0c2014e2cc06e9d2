"""rlvr's numpy API against hand-computed values, invariances and error messages."""

import math

import numpy as np
import pytest

import rlvr

# k = 1 of G = 4 with a long positive: L+ = 40, L- = 10.
TOKENS = [40, 10, 10, 10]
ADV = [1.5, -0.5, -0.5, -0.5]
GROUPS = [0, 0, 0, 0]


def test_rules_are_the_design_table():
    assert rlvr.RULES == (
        "token-mean",
        "seq-mean-token-mean",
        "seq-mean-token-sum",
        "seq-mean-token-sum-norm",
        "group-token-mean",
        "balanced",
        "balanced-mass",
    )


def test_weights_by_hand():
    w = rlvr.all_weights(TOKENS, ADV, GROUPS, max_len=50)
    assert w["token-mean"] == pytest.approx([1 / 70] * 4, rel=1e-15)
    assert w["seq-mean-token-mean"] == pytest.approx([1 / 160, 1 / 40, 1 / 40, 1 / 40], rel=1e-15)
    assert w["seq-mean-token-sum"] == pytest.approx([1 / 4] * 4, rel=1e-15)
    assert w["seq-mean-token-sum-norm"] == pytest.approx([1 / 200] * 4, rel=1e-15)
    # balanced: S+ gets 1/4 over 40 tokens, S- gets 3/4 over 30 tokens
    assert w["balanced"] == pytest.approx([1 / 160, 1 / 40, 1 / 40, 1 / 40], rel=1e-15)
    assert w["balanced-mass"] == pytest.approx(w["balanced"], rel=1e-15)
    assert w["balanced"].dtype == np.float64


def test_balanced_two_groups_and_mass_variant():
    tokens = [4, 6, 2, 8, 5, 5, 5]
    adv = [1.0, -1.0, 2.0, -0.5, 0.0, 0.0, 0.0]
    groups = [7, 7, 7, 7, 3, 3, 3]
    b = rlvr.weights("balanced", tokens, adv, groups)
    # B = 2. Group 7: S+ = {0, 2} (2 of 4, 6 tokens), S- = {1, 3} (2 of 4, 14 tokens).
    # Group 3: all zero: S0 gets 3/3 over 15 tokens.
    assert b == pytest.approx([0.5 * 0.5 / 6, 0.5 * 0.5 / 14, 0.5 * 0.5 / 6, 0.5 * 0.5 / 14] + [0.5 / 15] * 3)
    m = rlvr.weights("balanced-mass", tokens, adv, groups)
    # S+: M+ = 3, sum |A||o| = 4 + 4 = 8 -> (1/2)(3/4)/8; S-: M- = 1.5, sum = 6 + 4 = 10 -> (1/2)(1.5/4)/10
    assert m[:4] == pytest.approx([0.5 * 0.75 / 8, 0.5 * 0.375 / 10, 0.5 * 0.75 / 8, 0.5 * 0.375 / 10])
    assert m[4:] == pytest.approx(b[4:])
    # a mean: sum_i w_i |o_i| = 1
    assert float(np.dot(b, tokens)) == pytest.approx(1.0, rel=1e-14)


def test_weights_are_permutation_equivariant_and_take_any_group_ids():
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 30, size=24)
    adv = rng.normal(size=24)
    groups = np.repeat(np.arange(6), 4)
    perm = rng.permutation(24)
    for rule in rlvr.RULES:
        w = rlvr.weights(rule, tokens, adv, groups, max_len=30)
        wp = rlvr.weights(rule, tokens[perm], adv[perm], groups[perm], max_len=30)
        assert wp == pytest.approx(w[perm], rel=1e-14), rule
        names = np.array([f"uid-{g}" for g in groups], dtype=object)  # verl's uid
        assert rlvr.weights(rule, tokens, adv, names, max_len=30) == pytest.approx(w, rel=1e-14), rule
        assert rlvr.weights(rule, list(tokens), list(adv), list(groups + 100), max_len=30) == pytest.approx(w), rule
    assert (rlvr.weights("balanced", [0, 3], [1.0, -1.0], [0, 0]) == [0.0, 0.5 / 3]).all()


def test_torch_tensors_are_accepted():
    torch = pytest.importorskip("torch")
    w = rlvr.weights("balanced", torch.tensor(TOKENS), torch.tensor(ADV, requires_grad=True), torch.tensor(GROUPS))
    assert w == pytest.approx([1 / 160, 1 / 40, 1 / 40, 1 / 40])


def test_advantages_by_hand():
    # group 0: rewards 1, 0, 0, 0: mean 0.25, unbiased std 0.5
    a = rlvr.advantages([0, 0, 0, 0, 1, 1], [1.0, 0.0, 0.0, 0.0, 2.0, 2.0])
    assert a == pytest.approx([0.75 / (0.5 + 1e-6), -0.25 / (0.5 + 1e-6)] + [-0.25 / (0.5 + 1e-6)] * 2 + [0.0, 0.0])
    assert rlvr.advantages([0, 0], [1.0, 0.0], estimator="dr-grpo") == pytest.approx([0.5, -0.5])
    assert rlvr.advantages([0, 0, 0], [1.0, 0.0, 0.0], estimator="rloo") == pytest.approx([1.0, -0.5, -0.5])
    pop = rlvr.advantages([0, 0], [1.0, 0.0], unbiased_std=False, eps=0.0)
    assert pop == pytest.approx([1.0, -1.0])
    # batch scope: std over all 4 rewards (unbiased): mean 0.5 -> std sqrt(1/3)
    b = rlvr.advantages([0, 0, 1, 1], [1.0, 0.0, 1.0, 0.0], std_scope="batch", eps=0.0)
    assert b == pytest.approx([0.5 / math.sqrt(1 / 3), -0.5 / math.sqrt(1 / 3)] * 2)
    assert (rlvr.advantages([0, 0, 0], [0.3, 0.3, 0.3]) == 0.0).all()


def test_diagnostics_by_hand():
    d = rlvr.diagnostics(TOKENS, ADV, GROUPS)
    assert d["positive_share"]["token-mean"] == pytest.approx(0.8)  # L+/(L+ + L-)
    assert d["positive_share"]["balanced"] == pytest.approx(0.5)
    assert d["positive_share"]["seq-mean-token-mean"] == pytest.approx(0.5)
    assert d["prefactor"] == pytest.approx(math.sqrt(3) / 4)
    assert d["pos_neg_gap"] == pytest.approx(30.0)
    assert d["mixed_groups"] == 1
    lens = np.array(TOKENS, dtype=float)
    assert d["length_cv"] == pytest.approx(lens.std() / lens.mean())
    assert "sign-length coupling" in d["verdict"]
    assert d["groups"][0]["group"] == 0 and d["groups"][0]["positives"] == 1
    quiet = rlvr.diagnostics([5, 5], [0.0, 0.0], [1, 1])
    assert quiet["positive_share"]["balanced"] is None
    assert "no group has both" in quiet["verdict"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: rlvr.weights("balanced", [1, 2], [1.0], [0, 0]), "advantages has 1"),
        (lambda: rlvr.weights("balanced", [1, 2], [1.0, 0.0], [0]), "groups has 1"),
        (lambda: rlvr.weights("balanced", [1, -2], [1.0, 0.0], [0, 0]), "tokens at index 1 is negative"),
        (lambda: rlvr.weights("balanced", [1.5, 2], [1.0, 0.0], [0, 0]), "tokens at index 0 is not an integer"),
        (lambda: rlvr.weights("balanced", [1, 2], [1.0, float("nan")], [0, 0]), "advantages at index 1 is not finite"),
        (lambda: rlvr.weights("token-sum", [1], [1.0], [0]), "balanced-mass"),
        (lambda: rlvr.weights("seq-mean-token-sum-norm", [1], [1.0], [0], max_len=0), "max_len"),
        (lambda: rlvr.weights("balanced", [[1, 2]], [1.0, 0.0], [0, 0]), "tokens must be one-dimensional"),
        (lambda: rlvr.weights("balanced", [1, 2], ["a", "b"], [0, 0]), "advantages must hold numbers"),
        (lambda: rlvr.advantages([0, 0], [1.0, float("inf")]), "rewards at index 1 is not finite"),
        (lambda: rlvr.advantages([0, 0], [1.0, 0.0], estimator="ppo"), "advantage estimator"),
        (lambda: rlvr.advantages([0, 0], [1.0, 0.0], std_scope="global"), "std scope"),
        (lambda: rlvr.advantages([0, 0], [1.0, 0.0], eps=-1.0), "eps"),
        (lambda: rlvr.diagnostics([1, 2], [1.0, 0.0], [0]), "groups has 1"),
        (lambda: rlvr.verify(["1"], "1"), "gold must be a string"),
        (lambda: rlvr.verify("1", None), "response must be a string"),
    ],
)
def test_bad_input_is_a_value_error_naming_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_verify_and_reward_functions():
    v = rlvr.verify("\\frac{1}{2}", "so the answer is \\boxed{0.5}")
    assert v.correct and v.extracted == "0.5" and v.reward == 1.0 and isinstance(v.reason, str)
    correct, extracted, reason = rlvr.verify("3", "Answer: 4")
    assert (correct, extracted) == (False, "4")
    assert rlvr.verify(12, "#### 12").correct
    # multiple choice with the options: the letter or the right option's text, nothing else
    opts = ["12 km", "15 km", "18 km"]
    assert rlvr.verify("B", "so the answer is (B)", opts).correct
    assert rlvr.verify("B", "The distance is 15 km.", opts).correct
    assert not rlvr.verify("B", "The answer is (C).", opts).correct
    assert rlvr.verify("15 km", "The answer is (B).", opts).correct
    with pytest.raises(ValueError, match="choices"):
        rlvr.verify("B", "(B)", "ABC")
    # with the question: an answer restating the question's own expression is not worked out
    q = "Expand $(x+1)^2$."
    assert rlvr.verify("x^2+2x+1", "\\boxed{(x+1)^2}").correct
    v = rlvr.verify("x^2+2x+1", "\\boxed{(x+1)^2}", question=q)
    assert not v.correct and "restated" in v.reason
    assert rlvr.verify("x^2+2x+1", "\\boxed{x^2 + 2x + 1}", question=q).correct
    with pytest.raises(ValueError, match="question"):
        rlvr.verify("1", "1", question=3)
    assert rlvr.math_reward(["\\boxed{2}", "\\boxed{3}"], answer=["2", "2"]) == [1.0, 0.0]
    conv = [[{"role": "assistant", "content": "The answer is \\boxed{7}."}]]
    assert rlvr.math_reward(conv, solution=["7"]) == [1.0]
    # TRL's prompts are the questions: a restated expression scores 0
    done = ["\\boxed{(x+1)^2}", "\\boxed{x^2+2x+1}"]
    assert rlvr.math_reward(done, answer=["x^2+2x+1"] * 2) == [1.0, 1.0]
    asked = ["Expand $(x+1)^2$."] * 2
    assert rlvr.math_reward(done, answer=["x^2+2x+1"] * 2, prompts=asked) == [0.0, 1.0]
    chat = [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Expand $(x+1)^2$."}]] * 2
    assert rlvr.math_reward(done, answer=["x^2+2x+1"] * 2, prompts=chat) == [0.0, 1.0]
    # verl: the question at extra_info["question"], as verl's preprocessing writes it
    info = {"question": "Expand $(x+1)^2$.", "split": "train"}
    assert rlvr.compute_score("math", done[0], "x^2+2x+1", info)["score"] == 0.0
    assert rlvr.compute_score("math", done[1], "x^2+2x+1", info)["score"] == 1.0
    assert rlvr.compute_score("math", done[0], "x^2+2x+1", {"split": "train"})["score"] == 1.0
    with pytest.raises(ValueError, match="gold answer"):
        rlvr.math_reward(["1"], prompt=["q"])
    s = rlvr.compute_score("math500", "\\boxed{x^2}", "x^2")
    assert s == {"score": 1.0, "acc": True, "pred": "x^2"}
