"""rlvr.skyrl with SkyRL's own code (skyrl 0.3 from PyPI, no Ray cluster): the registered
estimator through SkyRL's ``compute_advantages_and_returns``, SkyRL's prompt-aligned mini-batch
boundaries, its ``prompt_mean`` advantage scaling per mini-batch and its policy losses with their
plain token sum, data-parallel ranks summed as SkyRL sums them, give at every optimizer step the
loss and gradient of rlvr's formula sum_{i in step} w_i sum_t l_{i,t} with w Balanced
Aggregation's weights over the step's responses (whole groups).

SkyRL 0.3.0 does not import on Python 3.11 as packaged: ``skyrl.backends/__init__`` loads
``skyrl.tinker.types``, whose pydantic models use ``typing.TypedDict`` (pydantic refuses it
before Python 3.12). The trainer's loss code does not need that module: on 3.11 the test loads
``skyrl.backends`` as a bare package (its ``__init__`` skipped), as the other modules import it."""

import os
import sys
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")
skyrl = pytest.importorskip("skyrl")
if sys.version_info < (3, 12) and "skyrl.backends" not in sys.modules:
    _backends = types.ModuleType("skyrl.backends")
    _backends.__path__ = [os.path.join(os.path.dirname(skyrl.__file__), "backends")]
    sys.modules["skyrl.backends"] = _backends

from skyrl.backends.skyrl_train.utils import ppo_utils  # noqa: E402
from skyrl.train.config import AlgorithmConfig  # noqa: E402
from skyrl.train.dataset.preprocess import (  # noqa: E402
    compute_prompt_boundaries,
    compute_prompt_mini_batch_boundaries,
)

import rlvr  # noqa: E402
import rlvr.skyrl  # noqa: E402


def random_batch(seed, prompts=16, n=4, length=12, sizes=None):
    """Groups of n responses (or the given sizes: then rows per prompt vary as in SkyRL's step-wise
    training), contiguous uids as SkyRL keeps them; binary or graded rewards; log-probs whose
    ratios reach the clip."""
    g = torch.Generator().manual_seed(seed)
    sizes = sizes or [n] * prompts
    bs = sum(sizes)
    lens = torch.randint(0, length + 1, (bs,), generator=g)
    lens[0] = length
    scores = torch.randint(0, 2, (bs,), generator=g).double()
    if seed % 2:
        scores = scores + 0.25 * torch.rand(bs, generator=g, dtype=torch.float64)
    uid = [f"prompt-{p}" for p, k in enumerate(sizes) for _ in range(k)]
    mask = (torch.arange(length).unsqueeze(0) < lens.unsqueeze(1)).double()
    rewards = torch.zeros(bs, length, dtype=torch.float64)
    rewards[torch.arange(bs), (lens - 1).clamp(min=0)] = scores * (lens > 0)
    old = -torch.rand(bs, length, generator=g, dtype=torch.float64) * 2
    logp0 = old + 0.4 * (torch.rand(bs, length, generator=g, dtype=torch.float64) - 0.5)
    return dict(mask=mask, rewards=rewards, scores=scores * (lens > 0), uid=uid, old=old, logp0=logp0, lens=lens,
                prompts=len(sizes), n=n, stepwise=len(set(sizes)) > 1)


def skyrl_steps(b, estimator, mini_prompts, dp=1, loss="regular", reduction="prompt_mean"):
    """SkyRL's path: the estimator from its registry, then per mini-batch (whole prompts) its
    advantage scaling and its policy loss, the ranks' token sums added (SkyRL's
    grad_sum_correction_factor = dp_size undoes the gradient average). Returns the advantage and,
    per optimizer step, (rows, loss, gradient)."""
    cfg = AlgorithmConfig(advantage_estimator=estimator, loss_reduction=reduction, policy_loss_type=loss)
    adv, _ = ppo_utils.compute_advantages_and_returns(
        token_level_rewards=b["rewards"], response_mask=b["mask"], index=np.array(b["uid"], dtype=object),
        adv_estimator=estimator, config=cfg, grpo_norm_by_std=True)
    fn = ppo_utils.PolicyLossRegistry.get(loss)
    out = []
    for start, end in compute_prompt_mini_batch_boundaries(b["uid"], mini_prompts, b["prompts"], b["stepwise"], b["n"]):
        rows = torch.arange(start, end)
        bounds = [(s - start, e - start) for s, e in compute_prompt_boundaries(b["uid"]) if start <= s < end]
        scaled = ppo_utils.apply_loss_reduction_to_advantages_minibatch(
            advantages=adv[rows], loss_mask=b["mask"][rows], loss_reduction=reduction, micro_batch_size=2,
            max_seq_len=b["mask"].shape[1], prompt_boundaries=bounds)
        logp = b["logp0"].clone().requires_grad_(True)
        total = 0.0
        for rank in np.array_split(np.arange(len(rows)), dp):
            r = rows[rank]
            lv, _ = fn(logp[r], b["old"][r], scaled[rank], cfg, b["mask"][r])
            total = total + lv
        total.backward()
        out.append((rows.numpy(), total.item(), logp.grad.clone()))
    return adv, out


def reference(b, rule, rows, clip=0.2):
    """rlvr's formula for one step: A from rlvr.advantages over the batch, w from rlvr.weights over
    the step's rows, the clipped token loss with SkyRL's ratio."""
    groups = np.unique(np.array(b["uid"]), return_inverse=True)[1]
    a = rlvr.advantages(groups, b["scores"].numpy(), estimator="grpo", std_scope="group")
    w = np.zeros(len(a))
    w[rows] = rlvr.weights(rule, b["lens"].numpy()[rows], a[rows], groups[rows])
    A = torch.as_tensor(a).unsqueeze(1)
    logp = b["logp0"].clone().requires_grad_(True)
    # SkyRL's ratio: exp of the clamped log-ratio, taken in float32 (safe_exp_delta)
    r = torch.clamp((logp - b["old"]).float(), -20.0, 20.0).exp().double()
    lt = -torch.min(r * A, torch.clamp(r, 1 - clip, 1 + clip) * A)
    loss = (torch.as_tensor(w).unsqueeze(1) * lt * b["mask"]).sum()
    loss.backward()
    return loss.item(), logp.grad.clone()


def rel(g, ref):
    return ((g - ref).norm() / ref.norm()).item()


@pytest.mark.parametrize("mini, dp, sizes", [(16, 1, None), (4, 1, None), (4, 2, None), (1, 4, None),
                                             (3, 2, [4, 2, 6, 4, 3, 4, 5, 4, 1])])
def test_every_optimizer_step_is_balanced_aggregation_over_its_prompts(mini, dp, sizes):
    """Whole prompts a step, 1-16 prompts a step, 1-4 ranks, groups of unequal sizes (dynamic
    sampling, step-wise rows); both estimators."""
    b = random_batch(mini + 10 * dp + (7 if sizes else 0), sizes=sizes)
    for estimator, rule in rlvr.skyrl.ESTIMATORS.items():
        _, steps = skyrl_steps(b, estimator, mini, dp)
        assert len(steps) == -(-b["prompts"] // mini)
        for rows, lv, gv in steps:
            lr, gr = reference(b, rule, rows)
            assert lv == pytest.approx(lr, rel=1e-6, abs=1e-12), (estimator, lv, lr)
            if gr.norm() > 0:
                assert rel(gv, gr) < 1e-6, (estimator, rel(gv, gr))


def test_skyrl_s_own_reductions_are_other_losses_and_the_check_can_fail():
    b = random_batch(5)
    for reduction in ("token_mean", "sequence_mean", "prompt_mean"):
        _, steps = skyrl_steps(b, "grpo", 4, reduction=reduction)
        assert max(rel(gv, reference(b, "balanced", rows)[1]) for rows, _, gv in steps) > 1e-3, reduction


def _weighted_loss_error(loss, b, c, A):
    """How far SkyRL's policy loss `loss` with advantages c_i A_i is from sum_i c_i times response
    i's own loss (the loss at A = 0 taken off both sides): the relative gradient error."""
    cfg = AlgorithmConfig(policy_loss_type=loss)
    fn = ppo_utils.PolicyLossRegistry.get(loss)
    rollout = b["old"] + 0.05

    def grad(rows, adv):
        logp = b["logp0"].clone().requires_grad_(True)
        l1, _ = fn(logp[rows], b["old"][rows], adv[rows], cfg, b["mask"][rows], rollout_logprobs=rollout[rows])
        l0, _ = fn(logp[rows], b["old"][rows], 0 * adv[rows], cfg, b["mask"][rows], rollout_logprobs=rollout[rows])
        (l1 - l0).backward()
        return logp.grad

    full = grad(torch.arange(len(c)), c.unsqueeze(1) * A)
    ref = sum(c[i] * grad(torch.tensor([i]), A) for i in range(len(c)))
    return rel(full, ref) if ref.norm() > 0 else float("nan")


def test_every_policy_loss_is_exact_or_refused():
    """Every loss of SkyRL's registry carries the factors exactly (up to the float32 rounding of
    SkyRL's ratio) and is in EXACT_POLICY_LOSSES, or is off (or reads no advantage) and refused by
    name."""
    b = random_batch(3)
    g = torch.Generator().manual_seed(1)
    c = torch.rand(len(b["lens"]), generator=g, dtype=torch.float64) * 3 + 0.1
    A = torch.randn(len(b["lens"]), generator=g, dtype=torch.float64).unsqueeze(1) * b["mask"]
    registry = set(ppo_utils.PolicyLossRegistry.list_available())
    assert rlvr.skyrl.EXACT_POLICY_LOSSES <= registry
    errors = {loss: _weighted_loss_error(loss, b, c, A) for loss in sorted(registry)}
    print("\n" + ", ".join(f"{k} {v:.1e}" for k, v in errors.items()))
    est = ppo_utils.AdvantageEstimatorRegistry.get("rlvr_balanced")
    for loss, err in errors.items():
        cfg = AlgorithmConfig(loss_reduction="prompt_mean", policy_loss_type=loss)
        if loss in rlvr.skyrl.EXACT_POLICY_LOSSES:
            assert err < 1e-6, (loss, err)
            est(token_level_rewards=b["rewards"], response_mask=b["mask"], index=np.array(b["uid"]), config=cfg)
        else:
            assert not err < 1e-3, (loss, err)  # off, or nan: no advantage read
            with pytest.raises(ValueError, match=f"policy_loss_type='{loss}'"):
                est(token_level_rewards=b["rewards"], response_mask=b["mask"], index=np.array(b["uid"]), config=cfg)


@pytest.mark.parametrize("cfg, key", [
    (dict(loss_reduction="token_mean"), "loss_reduction"),
    (dict(loss_reduction="sequence_mean"), "loss_reduction"),
    (dict(loss_reduction="prompt_mean", advantage_batch_normalize=True), "advantage_batch_normalize"),
])
def test_settings_that_break_the_factor_are_refused_by_key(cfg, key):
    b = random_batch(0)
    est = ppo_utils.AdvantageEstimatorRegistry.get("rlvr_balanced")
    with pytest.raises(ValueError, match=key):
        est(token_level_rewards=b["rewards"], response_mask=b["mask"], index=np.array(b["uid"]),
            config=AlgorithmConfig(**cfg))
    with pytest.raises(ValueError, match="AlgorithmConfig"):
        est(token_level_rewards=b["rewards"], response_mask=b["mask"], index=np.array(b["uid"]), config=None)


def test_registration_is_idempotent_and_diagnostics_are_kept():
    rlvr.skyrl.register()
    assert {"rlvr_balanced", "rlvr_balanced_mass"} <= set(ppo_utils.AdvantageEstimatorRegistry.list_available())
    b = random_batch(2)
    skyrl_steps(b, "rlvr_balanced", 4)
    d = rlvr.skyrl.last_diagnostics
    assert d is not None and d["sequences"] == len(b["lens"])
