"""Balanced Aggregation for TRL: ``GRPOTrainer`` with ``loss_type="balanced"`` and
``loss_type="balanced-mass"``, and rlvr's bias diagnostics logged as TRL metrics.

Usage (the rest is TRL's own API)::

    from trl import GRPOConfig
    import rlvr.trl

    args = GRPOConfig(loss_type="balanced", ...)
    trainer = rlvr.trl.GRPOTrainer(model=..., reward_funcs=rlvr.math_reward, args=args, train_dataset=...)
    trainer.train()

What it computes. TRL generates one *generation batch* (``per_device_train_batch_size x
steps_per_generation`` completions per process, gathered over all processes, advantages
normalized over the gathered batch), then cuts it into micro-batches for
``gradient_accumulation_steps`` backward passes per optimizer step. This subclass computes
rlvr's weight ``w_i`` (``rlvr.weights(rule, ...)``: ``balanced`` is
``(1/B) (|S|/G) / N_S``) ONCE per generation batch over ALL its completions (every process,
every accumulation step), from the completions' loss-token counts, TRL's advantages and the
prompt groups (``num_generations`` consecutive completions of the gathered batch, as TRL
itself assumes). A micro-batch on one process then contributes

    loss_micro = P * (steps_per_generation / gradient_accumulation_steps) * sum_{i in micro} w_i * sum_t l_{i,t}

(P processes; DDP averages over processes, so the factor P makes it a sum), exactly TRL's
``dapo`` normalization with ``1/N`` replaced by ``w_i``: when ``steps_per_generation ==
gradient_accumulation_steps`` (TRL's default) one optimizer step's gradient is
``sum_i w_i * grad(sum_t l_{i,t})`` over the whole generation batch, however it is split
across processes and accumulation steps.

How. ``w_i`` enters as a positive factor on the advantage: TRL's ``dapo`` loss is
``sum_t l_{i,t} / N`` with ``l_{i,t} = -min(r A_i, clip(r) A_i)``; replacing ``A_i`` by
``c_i A_i`` with ``c_i = w_i N > 0`` multiplies ``l_{i,t}`` by exactly ``c_i``, because
``min(r c A, clip(r) c A) = c min(r A, clip(r) A)`` for ``c > 0``: which side of the clip is
active depends only on the sign of ``A_i``, which ``c_i`` keeps (the same holds for TRL's
off-policy mask, its clip-ratio metrics and the vLLM importance weights, which read the
sign or multiply). ``c_i`` is the ratio of the rule's weight to token-mean's weight
(``sum_i c_i |o_i| = N`` for ``balanced``).

KL and entropy (``beta > 0``, ``entropy_coef > 0``): the KL penalty ``beta * KL_{i,t}`` is
NOT scaled by ``c_i``; it keeps TRL's ``dapo`` aggregation (token mean over the generation
batch), and TRL's entropy bonus is a token mean under every ``loss_type`` anyway. Balanced
Aggregation reweights the policy-gradient term only. With ``beta = 0`` (TRL's default) the
loss is exactly ``sum_i w_i sum_t l_{i,t}``.

Metrics (every generation batch, logged with TRL's own): ``rlvr/positive_share/<rule>``
for every rule (share of the gradient mass on positive-advantage completions; 0.5 =
signs balanced), ``rlvr/longest_quartile_share/<rule>``, ``rlvr/length_cv``,
``rlvr/pos_neg_gap`` (mean within-group ``L+ - L-``), ``rlvr/prefactor``, and
``rlvr/weight_ratio_max`` (largest ``c_i``). The last verdict sentence is
``trainer.rlvr_verdict``; the last diagnostics dict is ``trainer.rlvr_diagnostics``.
Diagnostics are logged under every ``loss_type``, so a plain ``dapo`` run shows its
exposure too.
"""

from __future__ import annotations

from typing import Any

import torch
import trl

import rlvr

__all__ = ["GRPOTrainer", "BALANCED_LOSS_TYPES"]

#: The loss types this subclass adds, and the rlvr rule each one uses.
BALANCED_LOSS_TYPES = {"balanced": "balanced", "balanced-mass": "balanced-mass", "balanced_mass": "balanced-mass"}


class GRPOTrainer(trl.GRPOTrainer):
    """``trl.GRPOTrainer`` plus ``loss_type="balanced"`` / ``"balanced-mass"`` (see the
    module docstring for the exact loss) and rlvr's diagnostics as metrics. Every other
    ``loss_type`` behaves exactly as in TRL."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.rlvr_rule = BALANCED_LOSS_TYPES.get(self.loss_type)
        self.rlvr_verdict: str | None = None
        self.rlvr_diagnostics: dict | None = None

    # ----- one generation batch: weights and diagnostics --------------------------------

    def _generate_and_score_completions(self, inputs):
        output = super()._generate_and_score_completions(inputs)
        mode = "train" if self.model.training else "eval"
        G = self.num_generations if mode == "train" else self.num_generations_eval

        loss_mask = output["completion_mask"]
        if output.get("tool_mask") is not None:
            loss_mask = loss_mask * output["tool_mask"]
        local_tokens = loss_mask.sum(dim=1)
        local_adv = output["advantages"]
        if local_adv.dim() != 1:
            raise ValueError("rlvr.trl: per-token advantages (shape (B, T)) are not supported by the balanced loss types")
        # The whole generation batch, in TRL's gathered order (process 0's completions first):
        # group of completion j is j // num_generations, as in TRL's own reward normalization.
        tokens = self.accelerator.gather(local_tokens).long().cpu().numpy()
        adv = self.accelerator.gather(local_adv.float()).double().cpu().numpy()
        groups = torch.arange(len(tokens)).div(G, rounding_mode="floor").numpy()
        n_local = len(local_adv)
        first = self.accelerator.process_index * n_local
        local = slice(first, first + n_local)
        device = local_adv.device

        d = rlvr.diagnostics(tokens, adv, groups, max_len=self.max_completion_length)
        self.rlvr_diagnostics, self.rlvr_verdict = d, d["verdict"]
        m = self._metrics[mode]
        for key in ("positive_share", "longest_quartile_share"):
            for rule, v in d[key].items():
                if v is not None:
                    m[f"rlvr/{key}/{rule}"].append(v)
        for key in ("length_cv", "pos_neg_gap", "prefactor"):
            if d[key] is not None:
                m[f"rlvr/{key}"].append(d[key])

        output["rlvr_group"] = torch.as_tensor(groups[local], device=device)
        if self.rlvr_rule is not None:
            w = rlvr.weights(self.rlvr_rule, tokens, adv, groups, max_len=self.max_completion_length)
            # c_i = w_i * N: the factor that turns TRL's dapo normalizer 1/N into w_i.
            total = max(int(tokens.sum()), 1)
            ratio = w * total
            m["rlvr/weight_ratio_max"].append(float(ratio.max()) if len(ratio) else 0.0)
            output["rlvr_weight"] = torch.as_tensor(w[local], dtype=torch.float64, device=device)
            output["rlvr_weight_ratio"] = torch.as_tensor(ratio[local], dtype=local_adv.dtype, device=device)
        return output

    # ----- one micro-batch: TRL's dapo loss with c_i folded into the advantage ----------

    def _compute_loss(self, model, inputs):
        if self.rlvr_rule is None:
            return super()._compute_loss(model, inputs)
        folded = dict(inputs)
        folded["advantages"] = inputs["advantages"] * inputs["rlvr_weight_ratio"]
        self.loss_type = "dapo"
        try:
            return super()._compute_loss(model, folded)
        finally:
            self.loss_type = self.args.loss_type
