"""Balanced Aggregation for TRL: ``GRPOTrainer`` with ``loss_type="balanced"`` and
``loss_type="balanced-mass"``, and rlvr's bias diagnostics logged as TRL metrics.

Usage (the rest is TRL's own API)::

    from trl import GRPOConfig
    import rlvr.trl

    args = GRPOConfig(loss_type="balanced", ...)
    trainer = rlvr.trl.GRPOTrainer(model=..., reward_funcs=rlvr.math_reward, args=args, train_dataset=...)
    trainer.train()

What it computes. TRL generates one *generation batch* (``per_device_train_batch_size x
steps_per_generation`` completions per process, advantages normalized over the batch gathered
from all processes), shuffles each process's share, cuts it into ``steps_per_generation``
micro-batches and feeds them to ``num_iterations x steps_per_generation`` micro-steps, of which
every ``gradient_accumulation_steps`` consecutive ones make one optimizer step. This subclass
computes rlvr's weight ``w_i`` (``rlvr.weights(rule, ...)``: ``balanced`` is
``(1/B) (|S|/G) / N_S``) over the whole generation batch, gathered from every process, from
the completions' loss-token counts, TRL's advantages and their prompt groups
(``num_generations`` consecutive completions of the gathered batch, as TRL itself forms
them): ``k``, ``G`` and the token counts of a group are the whole group's. Every optimizer
step's gradient, summed over processes and accumulation steps, is then

    grad K sum_{i in step} w_i sum_t l_{i,t},    K = steps_per_generation / gradient_accumulation_steps,

exactly, for any ``per_device_train_batch_size``, ``gradient_accumulation_steps``,
``steps_per_generation``, ``num_iterations`` and number of processes (a row a step consumes
twice counts twice). ``K`` is the number of optimizer steps one pass over the generation batch
makes: the steps of a pass sum to ``K`` times Balanced Aggregation of the generation batch
(their mean is it), and a step that holds whole groups is exactly Balanced Aggregation over its
own completions.

Groups split across steps (``rlvr_weights``, a keyword of this class). TRL's shuffle splits a
prompt's completions over the micro-batches of its generation batch, so with more than one
optimizer step per generation a step usually holds part of a group.

- ``"group"`` (default): the weights above; a fragment of a group carries exactly its share of
  the group's weight. (``"batch"``, the former name of this mode, is accepted.)
- ``"step"``: Balanced Aggregation over each optimizer step's own completions (the micro-batches
  its micro-steps consume, on every process): ``G`` and ``|S|`` are counted in the step's
  fragment of a group (a lone completion carries a whole group's share), the advantage staying
  the whole group's; the step's gradient is ``grad sum_{i in step} w^s_i sum_t l_{i,t}``. Equal
  to ``"group"`` when every step holds whole groups.

Refused (``ValueError`` at construction, naming the keys): under ``"step"``, a config where an
optimizer step spans two generation batches (``steps_per_generation x num_iterations`` not a
multiple of ``gradient_accumulation_steps``: the first micro-batch is backpropagated before the
second generation exists, so its weight cannot be known); per-token advantages (shape
``(B, T)``, at the first batch); a subclass that overrides ``compute_loss`` (the balanced loss
lives in ``_compute_loss``).

How. ``w_i`` enters as a positive factor on the advantage: TRL's ``dapo`` loss of a micro-batch
is ``sum_{i,t} l_{i,t} / (N P^-1 a / s)`` (``N`` the generation batch's loss tokens, ``P``
processes, ``a`` accumulation steps, ``s = steps_per_generation``), with
``l_{i,t} = -min(r A_i, clip(r) A_i)``; replacing ``A_i`` by ``c_i A_i`` with ``c_i > 0``
multiplies ``l_{i,t}`` by exactly ``c_i``, because ``min(r c A, clip(r) c A) = c min(r A,
clip(r) A)`` for ``c > 0``: which side of the clip is active depends only on the sign of
``A_i``, which ``c_i`` keeps (the same holds for GSPO's sequence-level ratio,
``importance_sampling_level="sequence"``, TRL's two-sided ``delta`` clip, its off-policy sequence
mask, its high-entropy token mask ``top_entropy_quantile``, its clip-ratio metrics and the vLLM
importance weights, which read the sign, mask or multiply; python/tests/test_trl.py,
``test_the_loss_knobs_keep_the_weights_exact``, checks the first four at every step).
DDP averages over processes and TRL sums the accumulation steps, so the step's gradient is
``(s / (N a)) sum_i c_i grad sum_t l_{i,t}``: with ``c_i = w_i N`` (``"group"``) that is
``K sum_i w_i grad sum_t l_{i,t}``, with ``c_i = w^s_i N a / s`` (``"step"``) it is
``sum_i w^s_i grad sum_t l_{i,t}``. ``c_i A_i`` is formed in the wider of the advantages' dtype
(float32, as TRL's rewards) and the model's, and for a float64 model TRL's normalizer ``N P^-1
a / s`` is taken in float64 too (TRL forms it in float32): nothing rlvr adds rounds a float64
model's loss to float32. (TRL 1.16's fused LM head still computes the log-probabilities in
float32 whatever the model's dtype.)

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

__all__ = ["GRPOTrainer", "BALANCED_LOSS_TYPES", "WEIGHTS_MODES"]

#: The loss types this subclass adds, and the rlvr rule each one uses.
BALANCED_LOSS_TYPES = {"balanced": "balanced", "balanced-mass": "balanced-mass", "balanced_mass": "balanced-mass"}


#: ``rlvr_weights`` values (module docstring): ``"group"`` (default: whole groups of the
#: generation batch), ``"step"`` (each optimizer step's fragments of groups), ``"batch"`` (the
#: former name of ``"group"``).
WEIGHTS_MODES = ("group", "step", "batch")


def _check_cut(args: Any, rlvr_weights: str) -> None:
    """Refuses, under ``rlvr_weights="step"``, a config where an optimizer step spans two
    generation batches (module docstring)."""
    spg, iters = args.steps_per_generation, args.num_iterations
    accum = args.gradient_accumulation_steps
    if spg is None or rlvr_weights != "step":
        return  # GRPOConfig fills steps_per_generation in __post_init__; None only before it
    if (spg * iters) % accum != 0:
        raise ValueError(
            f"rlvr.trl: rlvr_weights='step' (weights over each optimizer step's completions) needs "
            f"steps_per_generation x num_iterations ({spg} x {iters}) to be a multiple of "
            f"gradient_accumulation_steps ({accum}): otherwise an optimizer step spans two "
            "generation batches and its first micro-batch is backpropagated before the second "
            "exists. Change one of the three, or use rlvr_weights='group' (the default: whole "
            "groups of each generation batch, exact for every split)"
        )


class GRPOTrainer(trl.GRPOTrainer):
    """``trl.GRPOTrainer`` plus ``loss_type="balanced"`` / ``"balanced-mass"`` (see the
    module docstring for the exact loss) and rlvr's diagnostics as metrics. Every other
    ``loss_type`` behaves exactly as in TRL.

    ``rlvr_weights="group"`` (default) weights each completion by its whole group in its
    generation batch; ``"step"`` over each optimizer step's own completions (module docstring)."""

    def __init__(self, *a: Any, rlvr_weights: str = "group", **kw: Any) -> None:
        if rlvr_weights not in WEIGHTS_MODES:
            raise ValueError(f"rlvr.trl: rlvr_weights must be one of {WEIGHTS_MODES}, got {rlvr_weights!r}")
        if rlvr_weights == "batch":
            rlvr_weights = "group"
        args = kw.get("args", a[2] if len(a) > 2 else None)
        if args is not None and args.loss_type in BALANCED_LOSS_TYPES:
            # before the model loads: a config the balanced loss cannot make exact fails at once
            _check_cut(args, rlvr_weights)
        super().__init__(*a, **kw)
        self.rlvr_rule = BALANCED_LOSS_TYPES.get(self.loss_type)
        self.rlvr_weights = rlvr_weights
        self.rlvr_verdict: str | None = None
        self.rlvr_diagnostics: dict | None = None
        self._rlvr_gen: tuple | None = None  # (tokens, advantages, groups, N) of the generation batch
        self._rlvr_step: tuple | None = None  # (first micro-step, this process's factors per micro-step)
        if self.rlvr_rule is None:
            return
        _check_cut(self.args, rlvr_weights)
        if type(self).compute_loss is not trl.GRPOTrainer.compute_loss:
            raise ValueError(
                f"rlvr.trl: loss_type={self.loss_type!r} lives in _compute_loss, and "
                f"{type(self).__name__} overrides compute_loss: the balanced loss would be bypassed"
            )

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
        if local_adv.dim() != 1 and self.rlvr_rule is not None:
            raise ValueError(
                f"rlvr.trl: per-token advantages (shape {tuple(local_adv.shape)}) are not supported by "
                f"loss_type={self.loss_type!r}: its weights are per sequence"
            )
        if local_adv.dim() != 1:
            return output
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
        # each row's index in the gathered generation batch: it travels through TRL's shuffle
        output["rlvr_index"] = torch.arange(first, first + n_local, device=device)
        if self.rlvr_rule is not None:
            w = rlvr.weights(self.rlvr_rule, tokens, adv, groups, max_len=self.max_completion_length)
            # w_i * N: the ratio of the rule's weight to token-mean's over the generation batch
            # (the factor that turns TRL's dapo normalizer 1/N into K w_i; rlvr_weights="group")
            total = max(int(tokens.sum()), 1)
            ratio = w * total
            m["rlvr/weight_ratio_max"].append(float(ratio.max()) if len(ratio) else 0.0)
            output["rlvr_weight_ratio"] = torch.as_tensor(ratio[local], dtype=self._rlvr_dtype(local_adv), device=device)
            if mode == "train":
                self._rlvr_gen = (tokens, adv, groups, total)
                self._rlvr_step = None
        return output

    # ----- one micro-step: the weights of its optimizer step ----------------------------

    def _prepare_inputs(self, generation_batch):
        inputs = super()._prepare_inputs(generation_batch)
        if self.rlvr_rule is None or not self.model.training or self.rlvr_weights != "step":
            return inputs
        accum, spg = self.args.gradient_accumulation_steps, self.args.steps_per_generation
        step = self._step  # this micro-step (TRL counts it up after the backward pass)
        first = step - step % accum
        if self._rlvr_step is None or self._rlvr_step[0] != first:
            self._rlvr_step = (first, self._step_factors(first, accum, spg))
        inputs = dict(inputs)  # the buffered micro-batch is reused by later iterations
        inputs["rlvr_weight_ratio"] = self._rlvr_step[1][step - first].to(self._rlvr_dtype(inputs["advantages"]))
        return inputs

    def _step_factors(self, first: int, accum: int, spg: int) -> list:
        """The factors ``c_i = w_i N a / s`` of every micro-step of the optimizer step that
        starts at micro-step ``first``, for this process's rows (see the module docstring)."""
        tokens, adv, groups, total = self._rlvr_gen
        chunks = [self._buffered_inputs[k % spg]["rlvr_index"] for k in range(first, first + accum)]
        sizes = [len(c) for c in chunks]
        local = torch.cat(chunks)
        # every process's rows of this step, process-major (all processes hold equal shares)
        everyone = self.accelerator.gather(local).long().cpu().numpy()
        w = rlvr.weights(
            self.rlvr_rule, tokens[everyone], adv[everyone], groups[everyone], max_len=self.max_completion_length
        )
        c = w * total * self.current_gradient_accumulation_steps / spg
        mine = c[self.accelerator.process_index * len(local) :][: len(local)]
        out, at = [], 0
        for n in sizes:
            out.append(torch.as_tensor(mine[at : at + n], device=local.device))
            at += n
        return out

    # ----- one micro-batch: TRL's dapo loss with c_i folded into the advantage ----------

    def _rlvr_dtype(self, advantages: torch.Tensor) -> torch.dtype:
        """The dtype ``c_i`` is folded in: the wider of the advantages' (float32: TRL's rewards
        are) and the model's, so that a float64 model's loss is float64 throughout (float32 and
        narrower models: the advantages' dtype, as TRL's own loss)."""
        model_dtype = getattr(self.model, "dtype", None)
        if not isinstance(model_dtype, torch.dtype) or not model_dtype.is_floating_point:
            return advantages.dtype
        return torch.promote_types(advantages.dtype, model_dtype)

    def _compute_loss(self, model, inputs):
        if self.rlvr_rule is None:
            return super()._compute_loss(model, inputs)
        folded = dict(inputs)
        ratio = inputs["rlvr_weight_ratio"]
        folded["advantages"] = inputs["advantages"].to(ratio.dtype) * ratio
        n = inputs.get("num_items_in_batch")
        if ratio.dtype == torch.float64 and isinstance(n, torch.Tensor):
            # TRL's dapo normalizer N P^-1 a / s is float32 from an integer count (1e-7 relative
            # in a float64 loss): in float64, the same value
            folded["num_items_in_batch"] = n.to(torch.float64)
        self.loss_type = "dapo"
        try:
            return super()._compute_loss(model, folded)
        finally:
            self.loss_type = self.args.loss_type
