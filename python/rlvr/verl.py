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
    custom_reward_function.path=<site-packages>/rlvr/verl.py  # optional: rlvr's math checker
    custom_reward_function.name=compute_score

What the estimator does. It computes verl's own GRPO advantage ``A_i``
(``compute_grpo_outcome_advantage``: group mean, ``/(std + epsilon)`` unless
``algorithm.norm_adv_by_std_in_grpo=false``) over the whole training batch and rlvr's weight
``w_i`` over the whole batch's groups from their loss-token counts ``|o_i|``
(``response_mask``), ``A_i`` and group ids (``uid``): ``k``, ``G`` and the token counts of a
group are the whole group's. It then cuts the batch into the ``S`` optimizer steps verl's
actor will make of it (below) and returns ``c_i * A_i`` on every token, with

    c_i = S * w_i * N_s,    N_s = sum_{j in s} |o_j|  (the loss tokens of i's optimizer step s).

verl's ``token-mean`` aggregation with its global-batch normalization divides every
micro-batch's token sum by the mini-batch's token count ``N_s`` (``batch_num_tokens``,
summed over data-parallel ranks) and multiplies by ``dp_size`` (undoing the ranks' gradient
average), so the policy loss of optimizer step ``s`` is

    sum_{i in s} (c_i / N_s) sum_t l_{i,t} = S sum_{i in s} w_i sum_t l_{i,t},

whatever ``ppo_micro_batch_size_per_gpu`` or dynamic batch size: every response carries its
whole group's Balanced Aggregation weight in whichever step holds it, and the ``S`` steps of
an epoch sum to ``S`` times Balanced Aggregation of the whole batch (their mean is it). The
factor ``S`` keeps a step's scale that of one Balanced Aggregation loss (its weights' token
mass is 1 on average over the steps, exactly 1 when the steps hold whole groups); where every
step holds whole groups it is Balanced Aggregation over the step's own responses, the
``step`` rule below.

The optimizer steps. verl 0.9's actor (``engine_workers.train_mini_batch``) receives the
batch in the order the estimator sees it (``trainer.balance_batch`` reorders it before the
advantage is computed), gives data-parallel rank ``r`` the ``r``-th contiguous chunk of
``B / dp`` rows, and iterates each chunk in mini-batches of
``ppo_mini_batch_size * rollout.n / dp`` rows (``verl.utils.tensordict_utils.make_iterator``,
seeded with ``data_loader_seed + r``, shuffled when ``actor.shuffle``) for ``ppo_epochs``
epochs; optimizer step ``j`` is the union over ranks of their ``j``-th mini-batch. The
estimator replays exactly that, with verl's own iterator, from verl's config, which it reads
from the root of the ``algorithm`` node verl passes it:

- ``actor_rollout_ref.actor.ppo_mini_batch_size``, ``actor_rollout_ref.rollout.n``,
  ``.ppo_epochs``, ``.shuffle``, ``.data_loader_seed``, ``.loss_agg_mode``;
- the data-parallel size: ``trainer.n_gpus_per_node * trainer.nnodes`` divided by the
  sequence-parallel size (``fsdp``/``fsdp2``: ``ulysses_sequence_parallel_size``;
  ``megatron``: tensor x pipeline x context parallel sizes). Other strategies, or a
  trainer whose actor does not span every GPU, set it: ``+algorithm.rlvr_dp_size=N``.

Groups split across steps (``algorithm.rlvr_weights``). A step holds whole groups only when
``B / dp`` and ``ppo_mini_batch_size * n / dp`` are multiples of ``rollout.n`` and the batch
keeps a prompt's ``n`` responses together; verl 0.9's default trainer balances the batch by
sequence length across ranks whatever ``trainer.balance_batch`` says (the key is read by the
deprecated trainer only), so with more than one GPU groups are split across steps as a rule.

- ``group`` (default): the weights above, over whole groups. A fragment of a group in a step
  carries exactly its share of the group's weight.
- ``step``: Balanced Aggregation over each step's own responses: ``c_i = w^s_i N_s``, with
  ``w^s`` from ``rlvr.weights`` over the step's rows, so ``G`` and ``|S|`` are counted in the
  step's fragment of a group (a lone response of a group in a step carries a whole group's
  share), while ``A_i`` stays the whole group's. Equal to ``group`` when every step holds
  whole groups; at the paper's shape it moves a large part of every step's token-weighted
  mass away from ``group``'s (docs/integrations.md has the measured figures).
- ``batch``: the approximate mode for a cut that cannot be read: ``c_i = w_i N`` with ``N``
  the batch's loss tokens, so step ``s``'s loss is ``(N / N_s) sum_{i in s} w_i sum_t
  l_{i,t}`` (``group`` with ``N / N_s`` for ``S``; equal with one optimizer step).

verl's synthetic padding rows (uid ``pad<hex>``, added when the batch is not a multiple of the
mini-batch size) have advantage 0 and are not counted as a group; their tokens are in ``N_s``
as verl counts them.

Refused (``ValueError`` naming the key, at start-up: the plugin adds :func:`check_config` to
verl's ``validate_config``, which ``main_ppo`` runs before Ray starts or a model loads; and again
at the first batch, before any update): a ``loss_agg_mode`` other than ``token-mean``; a
``policy_loss.loss_mode`` outside :data:`EXACT_LOSS_MODES` (:data:`REFUSED_LOSS_MODES` says
why for each of verl's others); ``shuffle=true`` with ``ppo_epochs > 1``
(every epoch cuts the batch differently, so ``N_s`` differs per epoch, and one advantage per
row cannot carry a different factor per epoch); a config from which the cut cannot be read
(the estimator called without verl's config, a data-parallel size that does not divide the
batch). ``+algorithm.rlvr_weights=batch`` (above) runs without the cut and says so on stdout
at its first batch.

Why the clipped surrogate stays exact. verl's token loss is
``l = max(-A r, -A clip(r, 1-e_low, 1+e_high))``, with the dual clip ``min(l, -A c)`` for
``A < 0``. For ``c_i > 0`` every branch is ``c_i`` times the branch for ``A_i``:
``max(-cAr, -cA clip(r)) = c max(-Ar, -A clip(r))``, ``min(c x, c y) = c min(x, y)``, and the
choice ``A < 0`` is the same for ``c A``. Which side of the clip is active depends only on the
sign of the advantage, which ``c_i`` keeps, so ``l_{i,t}(c_i A_i) = c_i l_{i,t}(A_i)``
exactly, with the same clip fractions. The same holds for every loss mode linear in ``A`` per
token and aggregated by verl's token-mean: :data:`EXACT_LOSS_MODES` (``vanilla``, ``gspo``,
``cispo``, ``gpg``, ``dro``, ``dppo_tv``, ``dppo_kl``, ``bypass_mode``; ``dro``'s quadratic
term does not read the advantage and keeps verl's token mean, like the KL loss below).
``c_i = 0`` only for responses with no loss tokens (nothing to weight).

KL and entropy. ``use_kl_loss`` and ``entropy_coeff`` terms do not read the advantage: they
keep verl's ``token-mean`` over the mini-batch (Balanced Aggregation reweights the
policy-gradient term only). With ``use_kl_in_reward`` the KL enters the reward before the
advantage, as in verl. Logged advantages (``critic/advantages/*``) are ``c_i A_i``.

Not covered: verl's fully asynchronous trainer (``verl.experimental.fully_async_policy``),
which cuts batches its own way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import torch
from verl.trainer.ppo import core_algos

import rlvr
from rlvr import compute_score  # noqa: F401  (verl's custom_reward_function.name=compute_score)

__all__ = [
    "ESTIMATORS",
    "EXACT_LOSS_MODES",
    "REFUSED_LOSS_MODES",
    "StepCut",
    "WEIGHTS_MODES",
    "balanced_advantage",
    "check_config",
    "check_loss",
    "compute_score",
    "last_diagnostics",
    "last_steps",
    "optimizer_steps",
    "step_cut",
]

#: Registered estimator name -> rlvr rule.
ESTIMATORS = {"rlvr_balanced": "balanced", "rlvr_balanced_mass": "balanced-mass"}

#: The diagnostics of the last batch an estimator saw (``rlvr.diagnostics``), for logging.
last_diagnostics: Optional[dict] = None

#: The optimizer steps of the last batch (row indices in the estimator's order), or None in the
#: approximate mode (``algorithm.rlvr_weights=batch``).
last_steps: Optional[list] = None

#: ``algorithm.rlvr_weights`` values (module docstring): whole-group weights (default), the
#: step's fragments of groups, the approximate whole-batch mode.
WEIGHTS_MODES = ("group", "step", "batch")

#: verl's synthetic padding rows (``verl.trainer.ppo.padding_utils``): uid ``pad`` + 32 hex digits.
_PAD_UID = re.compile(r"^pad[0-9a-f]{32}$")

_warned_batch_mode = False


@dataclass(frozen=True)
class StepCut:
    """How verl's actor cuts one training batch into optimizer steps (module docstring)."""

    #: rows (responses) of one optimizer step over all ranks: ``ppo_mini_batch_size * rollout.n``
    rows_per_step: int
    #: data-parallel ranks of the actor
    dp_size: int
    ppo_epochs: int = 1
    shuffle: bool = False
    seed: int = 42


def _root(config: Any) -> Any:
    """The root of an OmegaConf node (verl passes ``config.algorithm`` of its full config)."""
    try:
        from omegaconf import DictConfig
    except ImportError:  # pragma: no cover - verl depends on omegaconf
        return None
    if not isinstance(config, DictConfig):
        return None
    return config._get_root()


def _get(root: Any, key: str, default: Any = None) -> Any:
    from omegaconf import OmegaConf

    v = OmegaConf.select(root, key, default=default)
    return default if v is None else v


def _positive_int(root: Any, key: str, default: Any = None) -> int:
    v = _get(root, key, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"rlvr.verl: {key} must be a positive integer to cut the batch into optimizer steps, got {v!r}")
    return v


def weights_mode(config: Any) -> str:
    """``algorithm.rlvr_weights`` (:data:`WEIGHTS_MODES`, module docstring): ``group``
    (default), ``step`` or ``batch``."""
    v = config.get("rlvr_weights", "group") if hasattr(config, "get") else "group"
    v = "group" if v is None else v
    if v not in WEIGHTS_MODES:
        raise ValueError(f"rlvr.verl: algorithm.rlvr_weights must be one of {WEIGHTS_MODES}, got {v!r}")
    return v


#: verl 0.9's policy-loss modes (``actor_rollout_ref.actor.policy_loss.loss_mode``) under which the
#: balanced estimators are exact: each mode's loss of a step with advantages ``c_i A_i`` equals
#: ``sum_i (c_i / N_s) sum_t l_{i,t}(A_i)`` plus its terms that do not read the advantage
#: (python/tests/test_verl.py, ``test_every_policy_loss_mode_is_exact_or_refused``, checks every
#: mode of verl's registry).
EXACT_LOSS_MODES = frozenset({"vanilla", "gspo", "cispo", "gpg", "dro", "dppo_tv", "dppo_kl", "bypass_mode"})

#: The modes refused, and why (the same test shows each one's loss off the formula).
REFUSED_LOSS_MODES = {
    "sapo": "it aggregates by a mean over sequences whatever loss_agg_mode says, so c_i would be divided by "
    "the response's own length",
    "geo_mean": "its ratio is a geometric mean over each sequence and its loss a mean over sequences, not "
    "verl's token-mean",
    "clip_cov": "it picks the tokens it clips by the covariance of advantage and log-probability, which "
    "scaling the advantage changes",
    "kl_cov": "it picks the tokens it penalizes by the covariance of advantage and log-probability, which "
    "scaling the advantage changes",
}


def check_loss(root: Any) -> None:
    """Refuses (``ValueError`` naming the key) a loss the balanced estimators cannot make exact:
    a ``loss_agg_mode`` other than ``token-mean`` and a policy-loss mode not in
    :data:`EXACT_LOSS_MODES` (the refused ones with their reason, a mode registered by someone
    else as not shown exact)."""
    actor = "actor_rollout_ref.actor"
    agg = _get(root, f"{actor}.loss_agg_mode", "token-mean")
    if agg != "token-mean":
        raise ValueError(
            f"rlvr.verl: {actor}.loss_agg_mode must be token-mean for the balanced estimators "
            f"(its normalization by the step's tokens is what c_i = S w_i N_s undoes), got {agg!r}"
        )
    mode = _get(root, f"{actor}.policy_loss.loss_mode", "vanilla")
    if mode in EXACT_LOSS_MODES:
        return
    why = REFUSED_LOSS_MODES.get(
        mode, "rlvr has not shown the balanced weights exact under it (a mode registered outside verl 0.9)"
    )
    raise ValueError(
        f"rlvr.verl: {actor}.policy_loss.loss_mode={mode!r} cannot carry the balanced estimators' weights: "
        f"{why}. Exact modes: {', '.join(sorted(EXACT_LOSS_MODES))}"
    )


def check_config(config: Any) -> None:
    """The start-up check of a whole verl config (``verl.trainer.main_ppo``'s): when
    ``algorithm.adv_estimator`` is one of :data:`ESTIMATORS`, everything the estimator would
    refuse at the first batch is refused now, naming the key: the weights mode, the loss
    (:func:`check_loss`) and the optimizer steps' cut (:func:`step_cut`). Installed into verl's
    ``validate_config``, which ``main_ppo`` runs before Ray starts or a model loads."""
    if _get(config, "algorithm.adv_estimator") not in ESTIMATORS:
        return
    algorithm = config.algorithm
    if weights_mode(algorithm) == "batch":
        check_loss(config)
    else:
        step_cut(algorithm)


def _install_start_up_check() -> None:
    """Wraps ``verl.utils.config.validate_config`` (and ``main_ppo``'s name for it, when that module
    is already loaded) so that :func:`check_config` runs after verl's own checks."""
    import sys

    from verl.utils import config as verl_config

    original = verl_config.validate_config
    if getattr(original, "_rlvr", False):
        return

    def validate_config(config: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(config, *args, **kwargs)
        check_config(config)
        return out

    validate_config._rlvr = True  # type: ignore[attr-defined]
    validate_config.__doc__ = original.__doc__
    verl_config.validate_config = validate_config
    main = sys.modules.get("verl.trainer.main_ppo")
    if main is not None and getattr(main, "validate_config", None) is original:
        main.validate_config = validate_config


def step_cut(config: Any) -> StepCut:
    """The cut verl's actor makes, read from the root of verl's config (``config`` is the
    ``algorithm`` node verl passes the estimator). Raises ``ValueError`` naming the key when a
    setting makes the loss inexact or the cut unknowable."""
    root = _root(config)
    if root is None or _get(root, "actor_rollout_ref") is None:
        raise ValueError(
            "rlvr.verl: the balanced estimators need verl's full config (the `algorithm` node of "
            "verl.trainer.main_ppo's config) to know how the actor cuts the batch into optimizer "
            f"steps; got {type(config).__name__}. Set +algorithm.rlvr_weights=batch to weight over "
            "the whole batch instead (exact only with one optimizer step per batch)"
        )
    actor = "actor_rollout_ref.actor"
    check_loss(root)
    prompts = _positive_int(root, f"{actor}.ppo_mini_batch_size")
    n = _positive_int(root, "actor_rollout_ref.rollout.n", 1)
    epochs = _positive_int(root, f"{actor}.ppo_epochs", 1)
    shuffle = bool(_get(root, f"{actor}.shuffle", False))
    seed = int(_get(root, f"{actor}.data_loader_seed", 42))
    if shuffle and epochs > 1:
        raise ValueError(
            f"rlvr.verl: {actor}.shuffle=true with {actor}.ppo_epochs={epochs} cuts every epoch's "
            "optimizer steps differently, and one advantage per response cannot carry a different "
            f"weight per epoch: set {actor}.shuffle=false (or ppo_epochs=1), or "
            "+algorithm.rlvr_weights=batch for the approximate mode"
        )
    dp = config.get("rlvr_dp_size", None)
    if dp is not None:
        dp = _positive_int(root, "algorithm.rlvr_dp_size")
    else:
        world = _positive_int(root, "trainer.n_gpus_per_node", 1) * _positive_int(root, "trainer.nnodes", 1)
        strategy = _get(root, f"{actor}.strategy", "fsdp")
        if strategy in ("fsdp", "fsdp2"):
            sp = _positive_int(root, f"{actor}.ulysses_sequence_parallel_size", 1)
            if sp == 1:
                sp = _positive_int(root, f"{actor}.fsdp_config.ulysses_sequence_parallel_size", 1)
        elif strategy == "megatron":
            sp = 1
            for k in ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size"):
                sp *= _positive_int(root, f"{actor}.megatron.{k}", 1)
        else:
            raise ValueError(
                f"rlvr.verl: the data-parallel size of {actor}.strategy={strategy!r} is not read from "
                "the config: set +algorithm.rlvr_dp_size=N (the actor's data-parallel ranks)"
            )
        if world % sp:
            raise ValueError(
                f"rlvr.verl: {world} GPUs (trainer.n_gpus_per_node x trainer.nnodes) are not a multiple "
                f"of the actor's model-parallel size {sp}; set +algorithm.rlvr_dp_size=N"
            )
        dp = world // sp
    rows = prompts * n
    if rows % dp:
        raise ValueError(
            f"rlvr.verl: {actor}.ppo_mini_batch_size x rollout.n = {rows} rows is not a multiple of "
            f"the data-parallel size {dp} (verl refuses it too)"
        )
    return StepCut(rows_per_step=rows, dp_size=dp, ppo_epochs=epochs, shuffle=shuffle, seed=seed)


def optimizer_steps(cut: StepCut, batch_rows: int) -> list:
    """The rows (indices in the estimator's order) of every optimizer step of one epoch, as
    verl's actor forms them: rank ``r`` gets the contiguous chunk
    ``[r B/dp, (r+1) B/dp)`` and iterates it with verl's own ``make_iterator``; step ``j`` is
    the union of the ranks' ``j``-th mini-batches. Every row is in exactly one step. Raises
    ``ValueError`` when the batch does not divide as verl requires, or when epochs differ."""
    from tensordict import TensorDict
    from verl.utils.tensordict_utils import make_iterator

    dp, rows = cut.dp_size, cut.rows_per_step
    if batch_rows % dp:
        raise ValueError(f"rlvr.verl: a batch of {batch_rows} rows does not divide over {dp} data-parallel ranks")
    local, local_step = batch_rows // dp, rows // dp
    if local % local_step:
        raise ValueError(
            f"rlvr.verl: a batch of {batch_rows} rows is not a whole number of optimizer steps of "
            f"{rows} rows (actor_rollout_ref.actor.ppo_mini_batch_size x rollout.n)"
        )
    per_rank = []
    for r in range(dp):
        td = TensorDict({"row": torch.arange(local)}, batch_size=[local])
        it = make_iterator(td, mini_batch_size=local_step, epochs=cut.ppo_epochs, seed=cut.seed + r,
                           dataloader_kwargs={"shuffle": cut.shuffle})
        per_rank.append([r * local + mb["row"].numpy() for mb in it])
    n_steps = local // local_step
    epochs = [
        [np.concatenate([per_rank[r][e * n_steps + j] for r in range(dp)]) for j in range(n_steps)]
        for e in range(cut.ppo_epochs)
    ]
    first = [frozenset(s.tolist()) for s in epochs[0]]
    for e in epochs[1:]:
        if [frozenset(s.tolist()) for s in e] != first:
            raise ValueError(
                "rlvr.verl: verl's epochs cut the batch into different optimizer steps "
                "(actor_rollout_ref.actor.shuffle); one advantage per response cannot carry a weight per epoch"
            )
    seen = np.sort(np.concatenate(epochs[0]))
    if not np.array_equal(seen, np.arange(batch_rows)):  # pragma: no cover - verl's iterator covers each row once
        raise ValueError("rlvr.verl: the replayed optimizer steps do not cover the batch once")
    return epochs[0]


def _weights(rule: str, tokens: np.ndarray, a: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """``w_i`` over the given rows, verl's padding rows excluded (weight 0)."""
    real = np.array([not (isinstance(g, str) and _PAD_UID.match(g)) for g in groups], dtype=bool)
    w = np.zeros(len(tokens), dtype=np.float64)
    if real.any():
        w[real] = rlvr.weights(rule, tokens[real], a[real], groups[real])
    return w


def _factors(mode: str, rule: str, tokens: np.ndarray, a: np.ndarray, groups: np.ndarray, steps) -> np.ndarray:
    """The factors ``c_i`` of every row under ``mode`` (module docstring); ``steps`` the rows of
    each optimizer step of an epoch (None in the ``batch`` mode). ``N_s`` counts all of a step's
    loss tokens, padding rows' included, as verl does."""
    if steps is None:
        return _weights(rule, tokens, a, groups) * max(int(tokens.sum()), 1)
    c = np.zeros(len(tokens), dtype=np.float64)
    if mode == "group":
        w = _weights(rule, tokens, a, groups)
        for s in steps:
            c[s] = len(steps) * w[s] * max(int(tokens[s].sum()), 1)
    else:
        for s in steps:
            c[s] = _weights(rule, tokens[s], a[s], groups[s]) * max(int(tokens[s].sum()), 1)
    return c


def balanced_advantage(
    rule: str,
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: Any,
    epsilon: float = 1e-6,
    norm_adv_by_std_in_grpo: bool = True,
    config: Any = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """verl's GRPO advantage times ``c_i = w_i N_s`` (module docstring); returns
    ``(advantages, returns)`` of shape ``(bs, response_length)`` as verl's estimators do."""
    global last_diagnostics, last_steps, _warned_batch_mode
    mode = weights_mode(config) if config is not None else "group"
    if config is not None:
        norm_adv_by_std_in_grpo = bool(config.get("norm_adv_by_std_in_grpo", norm_adv_by_std_in_grpo))
    steps = None
    if mode != "batch":
        steps = optimizer_steps(step_cut(config), int(response_mask.shape[0]))
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
    if steps is None and not _warned_batch_mode:
        print(
            "rlvr.verl: algorithm.rlvr_weights=batch: weights over the whole batch without the "
            "optimizer steps' cut (approximate: step s's loss is scaled by N/N_s instead of the "
            "number of steps; exact with one optimizer step per batch)",
            flush=True,
        )
        _warned_batch_mode = True
    c = _factors(mode, rule, tokens, a, groups, steps)
    last_steps = steps
    last_diagnostics = rlvr.diagnostics(tokens, a, groups)
    ct = torch.as_tensor(c, dtype=per_seq.dtype, device=per_seq.device)
    scaled = (per_seq * ct).unsqueeze(-1) * response_mask
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
_install_start_up_check()
