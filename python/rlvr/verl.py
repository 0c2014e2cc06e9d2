"""Balanced Aggregation for verl, through verl's advantage-estimator registry.

Importing this module registers two advantage estimators in
``verl.trainer.ppo.core_algos.ADV_ESTIMATOR_REGISTRY`` (it is also a ``verl.plugins`` entry
point, so ``import verl`` loads it when rlvr is installed; ``VERL_USE_EXTERNAL_MODULES=rlvr.verl``
does the same explicitly):

- ``rlvr_balanced``: Balanced Aggregation (``w_i = (1/B) (|S|/G) / N_S``);
- ``rlvr_balanced_mass``: its advantage-mass variant (docs/architecture.md section 2).

Config (hydra overrides of ``verl.trainer.main_ppo``; see examples/verl_balanced.sh)::

    algorithm.adv_estimator=rlvr_balanced
    actor_rollout_ref.actor.loss_agg_mode=token-mean          # verl's default; required
    actor_rollout_ref.actor.ppo_mini_batch_size=${data.train_batch_size}   # exact BA (below)
    custom_reward_function.path=<site-packages>/rlvr/verl.py  # optional: rlvr's math checker
    custom_reward_function.name=compute_score

What the estimator does. It computes verl's own GRPO advantage ``A_i``
(``compute_grpo_outcome_advantage``: group mean, ``/(std + epsilon)`` unless
``algorithm.norm_adv_by_std_in_grpo=false``), then rlvr's weight ``w_i`` over the whole
training batch from the loss-token counts ``|o_i|`` (``response_mask``), ``A_i`` and the group
ids (``uid``), and returns ``c_i * A_i`` on every token, with

    c_i = w_i * N,    N = sum_i |o_i|  (the batch's loss tokens).

verl's ``token-mean`` aggregation with its global-batch normalization divides every
micro-batch's token sum by ``N`` (``batch_num_tokens``, summed over data-parallel ranks) and
multiplies by ``dp_size`` (undoing the ranks' gradient average), so the policy loss of one
optimizer step is ``sum_i (c_i / N) sum_t l_{i,t} = sum_i w_i sum_t l_{i,t}``: exactly
Balanced Aggregation, whatever ``ppo_micro_batch_size_per_gpu``, dynamic batch size or the
number of ranks.

Why the clipped surrogate stays exact. verl's token loss is
``l = max(-A r, -A clip(r, 1-e_low, 1+e_high))``, with the dual clip ``min(l, -A c)`` for
``A < 0``. For ``c_i > 0`` every branch is ``c_i`` times the branch for ``A_i``:
``max(-cAr, -cA clip(r)) = c max(-Ar, -A clip(r))``, ``min(c x, c y) = c min(x, y)``, and the
choice ``A < 0`` is the same for ``c A``. Which side of the clip is active depends only on the
sign of the advantage, which ``c_i`` keeps, so ``l_{i,t}(c_i A_i) = c_i l_{i,t}(A_i)``
exactly, with the same clip fractions. The same holds for every loss mode linear in ``A`` per
token (``vanilla``, ``gspo``, ``cispo``, ``gpg``, ``sapo``...). ``c_i = 0`` only for responses
with no loss tokens (nothing to weight).

KL and entropy. ``use_kl_loss`` and ``entropy_coeff`` terms do not read the advantage: they
keep verl's ``token-mean`` over the mini-batch (Balanced Aggregation reweights the
policy-gradient term only). With ``use_kl_in_reward`` the KL enters the reward before the
advantage, as in verl. Logged advantages (``critic/advantages/*``) are ``c_i A_i``.

Mini-batches. The weights are computed over the batch the estimator sees (the training
batch). With ``ppo_mini_batch_size < train_batch_size`` each optimizer step takes a slice,
normalized by the slice's own token count ``N_mb``: its loss is
``(N/N_mb) sum_{i in slice} w_i sum_t l_{i,t}``, BA's weights rescaled to a token-mean-sized
step; exactly BA only with one mini-batch per batch.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch
from verl.trainer.ppo import core_algos

import rlvr
from rlvr import compute_score  # noqa: F401  (verl's custom_reward_function.name=compute_score)

__all__ = ["ESTIMATORS", "balanced_advantage", "compute_score", "last_diagnostics"]

#: Registered estimator name -> rlvr rule.
ESTIMATORS = {"rlvr_balanced": "balanced", "rlvr_balanced_mass": "balanced-mass"}

#: The diagnostics of the last batch an estimator saw (``rlvr.diagnostics``), for logging.
last_diagnostics: Optional[dict] = None


def balanced_advantage(
    rule: str,
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: Any,
    epsilon: float = 1e-6,
    norm_adv_by_std_in_grpo: bool = True,
    config: Any = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """verl's GRPO advantage times ``c_i = w_i N`` (module docstring); returns
    ``(advantages, returns)`` of shape ``(bs, response_length)`` as verl's estimators do."""
    global last_diagnostics
    if config is not None:
        norm_adv_by_std_in_grpo = bool(config.get("norm_adv_by_std_in_grpo", norm_adv_by_std_in_grpo))
    # verl's GRPO advantage per response, before it is masked: an empty response keeps its
    # sign class (it counts in |S| of its group, with no tokens), as in rlvr.
    per_token, _ = core_algos.compute_grpo_outcome_advantage(
        token_level_rewards=token_level_rewards,
        response_mask=torch.ones_like(response_mask),
        index=index,
        epsilon=epsilon,
        norm_adv_by_std_in_grpo=norm_adv_by_std_in_grpo,
    )
    per_seq = per_token[:, 0]
    tokens = response_mask.sum(dim=-1).long().cpu().numpy()
    a = per_seq.detach().double().cpu().numpy()
    groups = np.asarray(index)
    w = rlvr.weights(rule, tokens, a, groups)
    c = torch.as_tensor(w * max(int(tokens.sum()), 1), dtype=per_seq.dtype, device=per_seq.device)
    last_diagnostics = rlvr.diagnostics(tokens, a, groups)
    scaled = (per_seq * c).unsqueeze(-1) * response_mask
    return scaled, scaled


def _make(rule: str):
    def estimator(
        token_level_rewards: torch.Tensor,
        response_mask: torch.Tensor,
        index: Any = None,
        epsilon: float = 1e-6,
        norm_adv_by_std_in_grpo: bool = True,
        config: Any = None,
        **kwargs: Any,
    ):
        if index is None:
            raise ValueError("rlvr: the balanced estimators need the group ids (verl's non_tensor_batch['uid'])")
        return balanced_advantage(
            rule, token_level_rewards, response_mask, index, epsilon, norm_adv_by_std_in_grpo, config
        )

    estimator.__name__ = f"compute_rlvr_{rule.replace('-', '_')}_advantage"
    estimator.__doc__ = f"rlvr `{rule}` aggregation folded into verl's GRPO advantage (see rlvr.verl)."
    return estimator


def register() -> None:
    """Registers the estimators (idempotent: verl refuses a second, different function under
    one name, which happens when this file is also loaded by path as a reward module)."""
    for name, rule in ESTIMATORS.items():
        if name not in core_algos.ADV_ESTIMATOR_REGISTRY:
            core_algos.register_adv_est(name)(_make(rule))


register()
