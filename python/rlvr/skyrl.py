"""Balanced Aggregation for SkyRL (``skyrl`` 0.3, its ``skyrl.train`` trainer), through SkyRL's
advantage-estimator registry and its ``prompt_mean`` loss reduction.

Importing this module registers two advantage estimators in SkyRL's
``AdvantageEstimatorRegistry`` (import it in your entrypoint before the trainer starts Ray, as
SkyRL's custom estimators are registered; the registry is synced to Ray's workers from there):

- ``rlvr_balanced``: Balanced Aggregation (``w_i = (1/B) (|S|/G) / N_S``);
- ``rlvr_balanced_mass``: its advantage-mass variant (docs/architecture.md section 2).

Config (SkyRL's ``SkyRLTrainConfig``)::

    trainer.algorithm.advantage_estimator=rlvr_balanced
    trainer.algorithm.loss_reduction=prompt_mean              # required
    trainer.algorithm.advantage_batch_normalize=false         # SkyRL's default; required

What the estimator does. It computes SkyRL's own GRPO advantage ``A_i``
(``compute_grpo_outcome_advantage``: group mean, ``/(std + epsilon)`` unless
``trainer.algorithm.grpo_norm_by_std=false``) and returns ``c_i * A_i`` on every response token,
with

    c_i = N_p * w^p_i,

``N_p`` the loss tokens of i's prompt group ``p`` and ``w^p`` rlvr's weights over that group
alone (``rlvr.weights(rule, ...)`` of the group as a batch of one: ``(|S|/G)/N_S`` for
``balanced``). SkyRL scales advantages before the loss, which is then a plain sum over tokens:
``prompt_mean`` divides a mini-batch's advantages of prompt ``p`` by ``P_s N_p`` (``P_s`` the
mini-batch's prompts), so the policy loss of optimizer step ``s`` is

    sum_{p in s} sum_{i in p} (c_i / (P_s N_p)) sum_t l_{i,t} = sum_{i in s} (w^p_i / P_s) sum_t l_{i,t},

and ``w^p_i / P_s`` is exactly Balanced Aggregation's weight over the step's responses: SkyRL's
mini-batches hold whole prompts (``compute_prompt_mini_batch_boundaries``), so every group is
whole in its step, whatever ``policy_mini_batch_size``, micro-batching or data-parallel size
(SkyRL sums the ranks' token sums: ``grad_sum_correction_factor = dp_size``). The groups'
sizes may differ (dynamic sampling, step-wise trajectories with one row a step). The clipped
surrogate stays exact as in ``rlvr.verl``: for ``c > 0``, ``l(c A) = c l(A)`` in every branch
of the losses in :data:`EXACT_POLICY_LOSSES` (they read the advantage's sign or multiply).

Refused (``ValueError`` naming the key, at the first batch): a ``loss_reduction`` other than
``prompt_mean`` (the others divide by step-level counts that the per-group factor does not
undo); a ``policy_loss_type`` outside :data:`EXACT_POLICY_LOSSES` (:data:`REFUSED_POLICY_LOSSES`
says why); ``advantage_batch_normalize=true`` (it re-standardizes ``c_i A_i`` over the batch);
the estimator called without SkyRL's ``AlgorithmConfig`` or without group ids.

KL and entropy terms do not read the advantage: they keep SkyRL's own reduction. The rlvr
diagnostics of the last batch are ``rlvr.skyrl.last_diagnostics``.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch
from skyrl.backends.skyrl_train.utils import ppo_utils

import rlvr

__all__ = [
    "ESTIMATORS",
    "EXACT_POLICY_LOSSES",
    "REFUSED_POLICY_LOSSES",
    "balanced_advantage",
    "factors",
    "last_diagnostics",
    "register",
]

#: Registered estimator name -> rlvr rule.
ESTIMATORS = {"rlvr_balanced": "balanced", "rlvr_balanced_mass": "balanced-mass"}

#: The diagnostics of the last batch an estimator saw (``rlvr.diagnostics``).
last_diagnostics: Optional[dict] = None


def factors(rule: str, tokens: Any, advantages: Any, groups: Any) -> np.ndarray:
    """``c_i = N_p w^p_i`` for every response (module docstring): ``w^p`` is ``rlvr.weights``
    over response i's group alone, ``N_p`` that group's loss tokens."""
    tokens = np.asarray(tokens, dtype=np.int64)
    advantages = np.asarray(advantages, dtype=np.float64)
    groups = np.asarray(groups)
    c = np.zeros(len(tokens), dtype=np.float64)
    for g in dict.fromkeys(groups.tolist()):
        rows = np.flatnonzero(groups == g)
        c[rows] = rlvr.weights(rule, tokens[rows], advantages[rows], np.zeros(len(rows), dtype=np.int64)) * max(
            int(tokens[rows].sum()), 1
        )
    return c


#: SkyRL's policy losses (``trainer.algorithm.policy_loss_type``) under which the estimators are
#: exact: each one's loss with advantages ``c_i A_i`` is ``sum_i c_i`` times response i's own, up
#: to the float32 rounding of SkyRL's ratio (python/tests/test_skyrl.py checks every loss of the
#: registry).
EXACT_POLICY_LOSSES = frozenset(
    {"regular", "dual_clip", "gspo", "sapo", "cispo", "dppo", "rollout_is", "importance_sampling"}
)

#: The policy losses refused, and why.
REFUSED_POLICY_LOSSES = {
    "clip_cov": "it picks the tokens it clips by the covariance of advantage and log-probability, which scaling "
    "the advantage changes",
    "kl_cov": "it picks the tokens it penalizes by the covariance of advantage and log-probability, which scaling "
    "the advantage changes",
    "cross_entropy": "it is a supervised loss that does not read the advantage",
}


def _check(config: Any) -> None:
    if config is None or not hasattr(config, "loss_reduction"):
        raise ValueError(
            "rlvr.skyrl: the balanced estimators need SkyRL's AlgorithmConfig (trainer.algorithm) to check "
            f"its loss reduction; got {type(config).__name__}"
        )
    if config.loss_reduction != "prompt_mean":
        raise ValueError(
            "rlvr.skyrl: trainer.algorithm.loss_reduction must be prompt_mean for the balanced estimators "
            f"(its division by each prompt's tokens is what c_i = N_p w_i undoes), got {config.loss_reduction!r}"
        )
    loss = getattr(config, "policy_loss_type", "regular")
    if loss not in EXACT_POLICY_LOSSES:
        why = REFUSED_POLICY_LOSSES.get(loss, "rlvr has not shown the balanced weights exact under it")
        raise ValueError(
            f"rlvr.skyrl: trainer.algorithm.policy_loss_type={loss!r} cannot carry the balanced estimators' "
            f"weights: {why}. Exact losses: {', '.join(sorted(EXACT_POLICY_LOSSES))}"
        )
    if getattr(config, "advantage_batch_normalize", False):
        raise ValueError(
            "rlvr.skyrl: trainer.algorithm.advantage_batch_normalize=true re-standardizes the weighted "
            "advantages over the batch; set it to false for the balanced estimators"
        )


def balanced_advantage(
    rule: str,
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: Any,
    config: Any = None,
    grpo_norm_by_std: bool = True,
    epsilon: float = 1e-6,
) -> tuple[torch.Tensor, torch.Tensor]:
    """SkyRL's GRPO advantage times ``c_i`` (module docstring); returns ``(advantages, returns)``
    of shape ``(bs, response_length)`` as SkyRL's estimators do."""
    global last_diagnostics
    _check(config)
    if index is None:
        raise ValueError("rlvr.skyrl: the balanced estimators need the group ids (SkyRL's uids as `index`)")
    # SkyRL's GRPO advantage per response, unmasked: an empty response keeps its sign class (it
    # counts in |S| of its group, with no tokens), as in rlvr
    per_token, _ = ppo_utils.compute_grpo_outcome_advantage(
        token_level_rewards=token_level_rewards,
        response_mask=torch.ones_like(response_mask),
        index=index,
        epsilon=epsilon,
        grpo_norm_by_std=grpo_norm_by_std,
    )
    per_seq = per_token[:, 0]
    tokens = response_mask.sum(dim=-1).long().cpu().numpy()
    a = per_seq.detach().double().cpu().numpy()
    groups = np.asarray(index)
    c = factors(rule, tokens, a, groups)
    last_diagnostics = rlvr.diagnostics(tokens, a, groups)
    ct = torch.as_tensor(c, dtype=per_seq.dtype, device=per_seq.device)
    scaled = (per_seq * ct).unsqueeze(-1) * response_mask
    return scaled, scaled


def _make(rule: str):
    def estimator(
        token_level_rewards: torch.Tensor,
        response_mask: torch.Tensor,
        index: Any = None,
        config: Any = None,
        grpo_norm_by_std: bool = True,
        **kwargs: Any,
    ):
        return balanced_advantage(rule, token_level_rewards, response_mask, index, config, grpo_norm_by_std)

    estimator.__name__ = f"compute_rlvr_{rule.replace('-', '_')}_advantage"
    estimator.__doc__ = f"rlvr `{rule}` aggregation folded into SkyRL's GRPO advantage (see rlvr.skyrl)."
    return estimator


def register() -> None:
    """Registers the estimators in SkyRL's registry (idempotent)."""
    available = set(ppo_utils.AdvantageEstimatorRegistry.list_available())
    for name, rule in ESTIMATORS.items():
        if name not in available:
            ppo_utils.AdvantageEstimatorRegistry.register(name, _make(rule))


register()
