"""rlvr.verl with the real verl (its config, loss, advantage and batch-cutting code; no Ray
cluster): verl's own advantage-estimator dispatch, given rlvr's registration and verl's
Hydra-composed ppo_trainer config, then verl's actor update replayed as verl 0.9 runs it (the
v1 trainer's balance_batch partition, contiguous data-parallel chunks, verl's make_iterator
per rank, micro-batches, the per-mini-batch global token normalization, DDP's average) give, at
every optimizer step s of an epoch of S, the loss and gradient of rlvr's formula
S sum_{i in s} w_i sum_t l_{i,t} with w Balanced Aggregation's weights over the whole batch's
groups (algorithm.rlvr_weights=group, the default), or sum_{i in s} w^s_i sum_t l_{i,t} with
w^s over the step's own responses (rlvr_weights=step)."""

import itertools
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("verl")

from hydra import compose, initialize_config_dir  # noqa: E402
from tensordict import TensorDict  # noqa: E402
import verl  # noqa: E402
from verl.trainer.config import AlgoConfig  # noqa: E402
from verl.trainer.ppo import core_algos  # noqa: E402
from verl.utils.seqlen_balancing import (  # noqa: E402
    calculate_workload,
    get_seqlen_balanced_partitions,
    rearrange_micro_batches,
)
from verl.utils.tensordict_utils import make_iterator  # noqa: E402
from verl.workers.config import ActorConfig  # noqa: E402

import rlvr  # noqa: E402
import rlvr.verl  # noqa: E402

PROMPT_LEN = 7


def random_batch(seed, groups=16, n=4, length=12, dtype=torch.float64, pad=0):
    g = torch.Generator().manual_seed(seed)
    bs = groups * n
    lens = torch.randint(0, length + 1, (bs,), generator=g)
    lens[0] = length  # at least one full-length response
    scores = torch.randint(0, 2, (bs,), generator=g).to(dtype)
    scores[-n:] = 1.0  # one all-correct group (zero advantages)
    if seed % 2:
        scores = scores + 0.25 * torch.rand(bs, generator=g, dtype=dtype)  # non-binary rewards
    uid = [f"prompt-{i // n}" for i in range(bs)]
    if pad:  # verl's synthetic padding rows: one response token, no reward, a uid of their own
        lens = torch.cat([lens, torch.ones(pad, dtype=lens.dtype)])
        scores = torch.cat([scores, torch.zeros(pad, dtype=dtype)])
        uid += ["pad" + "0123456789abcdef" * 2] * pad
        bs += pad
    mask = (torch.arange(length).unsqueeze(0) < lens.unsqueeze(1)).to(dtype)
    rewards = torch.zeros(bs, length, dtype=dtype)
    last = (lens - 1).clamp(min=0)
    rewards[torch.arange(bs), last] = scores * (lens > 0)
    old = -torch.rand(bs, length, generator=g, dtype=dtype) * 2
    logp0 = old + 0.4 * (torch.rand(bs, length, generator=g, dtype=dtype) - 0.5)  # ratios 0.8..1.2: clipping active
    return dict(mask=mask, rewards=rewards, scores=scores * (lens > 0), uid=np.array(uid, dtype=object), old=old,
                logp0=logp0, lens=lens, n=n)


_CONFIG_DIR = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")


def verl_config(b, steps=1, dp=1, micro=4, epochs=1, shuffle=False, balance=False, extra=()):
    """verl's own ppo_trainer config (Hydra, as `python -m verl.trainer.main_ppo` composes it)."""
    n = b["n"]
    prompts = len(b["lens"]) // n
    assert prompts % steps == 0
    overrides = [
        "algorithm.adv_estimator=rlvr_balanced",
        f"data.train_batch_size={prompts}",
        f"actor_rollout_ref.rollout.n={n}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={prompts // steps}",
        f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={micro}",
        f"actor_rollout_ref.actor.ppo_epochs={epochs}",
        f"actor_rollout_ref.actor.shuffle={str(shuffle).lower()}",
        f"trainer.n_gpus_per_node={dp}",
        "trainer.nnodes=1",
        f"trainer.balance_batch={str(balance).lower()}",
        *extra,
    ]
    with initialize_config_dir(config_dir=_CONFIG_DIR, version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


def actor_config(micro):
    return ActorConfig(strategy="fsdp", rollout_n=4, ppo_micro_batch_size_per_gpu=micro, clip_ratio_low=0.2,
                       clip_ratio_high=0.28, clip_ratio_c=3.0, loss_agg_mode="token-mean")


def balance_order(b, dp):
    """verl's v1 trainer `_balance_batch`: equal-size partitions of the workload over dp ranks,
    concatenated (applied before the advantage is computed)."""
    seqlen = b["lens"] + PROMPT_LEN
    parts = get_seqlen_balanced_partitions(calculate_workload(seqlen), k_partitions=dp, equal_size=True)
    return np.array([j for p in parts for j in p])


def verl_steps(b, cfg, estimator, loss_mode="vanilla"):
    """verl's path, step by step: the registered estimator through verl's registry on the batch in
    the order the trainer gives it, then the actor: rank r takes the r-th contiguous chunk and
    iterates it with verl's make_iterator; one optimizer step = the ranks' j-th mini-batches, with
    batch_num_tokens summed over the ranks; micro-batches' losses summed (gradient accumulation),
    ranks' gradients averaged (DDP/FSDP). Returns the advantage and, per optimizer step, its rows
    (indices into b), loss and gradient."""
    actor = cfg.actor_rollout_ref.actor
    dp = cfg.trainer.n_gpus_per_node * cfg.trainer.nnodes
    bs = len(b["lens"])
    order = balance_order(b, dp) if cfg.trainer.balance_batch else np.arange(bs)
    idx = torch.as_tensor(order)
    adv_fn = core_algos.get_adv_estimator_fn(estimator)
    adv, _ = adv_fn(token_level_rewards=b["rewards"][idx], response_mask=b["mask"][idx], index=b["uid"][order],
                    config=cfg.algorithm)
    acfg = actor_config(actor.ppo_micro_batch_size_per_gpu)
    policy_loss = core_algos.get_policy_loss_fn(loss_mode)
    local = bs // dp
    mini = actor.ppo_mini_batch_size * cfg.actor_rollout_ref.rollout.n // dp
    iters = []
    for r in range(dp):
        td = TensorDict({"row": torch.arange(r * local, (r + 1) * local)}, batch_size=[local])
        iters.append(make_iterator(td, mini_batch_size=mini, epochs=actor.ppo_epochs,
                                   seed=actor.data_loader_seed + r, dataloader_kwargs={"shuffle": actor.shuffle}))
    out = []
    for minis in zip(*iters):
        rows = [m["row"] for m in minis]  # positions in the trainer's order
        n_step = int(sum(b["mask"][idx][rr].sum().item() for rr in rows))
        acfg.global_batch_info.update(dp_size=dp, batch_num_tokens=n_step, global_batch_size=mini * dp,
                                      loss_scale_factor=None)
        logp = b["logp0"].clone().requires_grad_(True)
        total = 0.0
        micro_batches = []
        for rr in rows:
            if actor.use_dynamic_bsz:
                # verl's dynamic batch size: micro-batches by a token budget, workload-balanced
                resp = b["mask"][idx][rr].long()
                attn = torch.cat([torch.ones(len(rr), PROMPT_LEN, dtype=resp.dtype), resp], dim=1)
                td = TensorDict({"input_ids": torch.zeros_like(attn), "attention_mask": attn, "row": rr},
                                batch_size=[len(rr)])
                parts, _ = rearrange_micro_batches(td, max_token_len=actor.ppo_max_token_len_per_gpu)
                micro_batches += [part["row"] for part in parts]
            else:
                micro_batches += list(torch.split(rr, actor.ppo_micro_batch_size_per_gpu))
        if actor.use_dynamic_bsz:
            assert len(micro_batches) > len(rows), "the token budget should cut several micro-batches"
        for mb in micro_batches:
            src = idx[mb]
            loss, _ = policy_loss(old_log_prob=b["old"][src], log_prob=logp[src], advantages=adv[mb],
                                  response_mask=b["mask"][src].bool(), loss_agg_mode="token-mean", config=acfg,
                                  rollout_is_weights=None)
            total = total + loss / dp
        total.backward()
        out.append((np.sort(order[torch.cat(rows).numpy()]), total.item(), logp.grad.clone()))
    return adv, order, out


def reference(b, rule, rows, n_steps=None, clip_low=0.2, clip_high=0.28, clip_c=3.0):
    """rlvr's formula for one optimizer step, written out: A from rlvr.advantages over the whole
    batch; w from rlvr.weights over the whole batch's real rows times the epoch's n_steps
    (whole groups), or, with n_steps=None, over the step's own real rows (fragments); verl's
    padding rows excluded; verl's dual-clip token loss. Rows outside the step weigh 0."""
    uid = b["uid"]
    real = np.array([not u.startswith("pad") for u in uid])
    groups = np.unique(uid.astype(str), return_inverse=True)[1]
    a = np.zeros(len(uid))
    a[real] = rlvr.advantages(groups[real], b["scores"].numpy()[real], estimator="grpo", std_scope="group")
    w = np.zeros(len(uid))
    lens = b["lens"].numpy()
    if n_steps is None:
        step_real = rows[real[rows]]
        w[step_real] = rlvr.weights(rule, lens[step_real], a[step_real], groups[step_real])
    else:
        whole = np.zeros(len(uid))
        whole[real] = n_steps * rlvr.weights(rule, lens[real], a[real], groups[real])
        w[rows] = whole[rows]
    A = torch.as_tensor(a).unsqueeze(1)
    logp = b["logp0"].clone().requires_grad_(True)
    r = torch.exp(logp - b["old"])
    l = torch.maximum(-A * r, -A * torch.clamp(r, 1 - clip_low, 1 + clip_high))
    l = torch.where(A < 0, torch.minimum(l, -A * clip_c), l)
    loss = (torch.as_tensor(w).unsqueeze(1) * l * b["mask"]).sum()
    loss.backward()
    return loss.item(), logp.grad.clone(), w


def rel(g, ref):
    return ((g - ref).norm() / ref.norm()).item()


def steps_per_epoch(b, cfg):
    return len(b["lens"]) // (cfg.actor_rollout_ref.actor.ppo_mini_batch_size * b["n"])


def step_reference(b, cfg, rule, rows):
    """reference() for the weights mode cfg asks for (group: whole groups x S; step: fragments)."""
    whole = rlvr.verl.weights_mode(cfg.algorithm) == "group"
    return reference(b, rule, rows, n_steps=steps_per_epoch(b, cfg) if whole else None)


def assert_every_step_exact(b, cfg, tol=1e-9, estimators=rlvr.verl.ESTIMATORS):
    worst = 0.0
    for estimator, rule in estimators.items():
        _, _, steps = verl_steps(b, cfg, estimator)
        expected = cfg.actor_rollout_ref.actor.ppo_epochs * steps_per_epoch(b, cfg)
        assert len(steps) == expected
        for rows, lv, gv in steps:
            lr, gr, _ = step_reference(b, cfg, rule, rows)
            assert lv == pytest.approx(lr, rel=tol, abs=1e-15), (estimator, lv, lr)
            if gr.norm() > 0:
                worst = max(worst, rel(gv, gr))
                assert rel(gv, gr) < tol, estimator
    return worst


@pytest.mark.parametrize("steps, micro, dp, balance",
                         list(itertools.product([1, 4, 16], [1, 3], [1, 2, 4], [False, True])))
def test_every_optimizer_step_carries_whole_group_weights(steps, micro, dp, balance):
    """The default (rlvr_weights=group): with balance_batch (verl 0.9's default trainer always
    balances) and dp > 1 groups are split across the steps, and each step is still exactly
    S x sum over its responses of their whole group's BA weight."""
    b = random_batch(steps + 10 * dp + micro + (100 if balance else 0))
    assert_every_step_exact(b, verl_config(b, steps=steps, dp=dp, micro=micro, balance=balance))


@pytest.mark.parametrize("steps, dp", [(4, 2), (16, 4)])
def test_the_fragment_rule_is_balanced_aggregation_over_each_step_s_responses(steps, dp):
    b = random_batch(steps + 10 * dp + 500)
    cfg = verl_config(b, steps=steps, dp=dp, micro=3, balance=True, extra=["+algorithm.rlvr_weights=step"])
    assert_every_step_exact(b, cfg)


def test_the_steps_of_an_epoch_sum_to_s_times_whole_batch_balanced_aggregation():
    b = random_batch(41)
    cfg = verl_config(b, steps=4, dp=2, micro=3, balance=True)
    _, _, steps = verl_steps(b, cfg, "rlvr_balanced")
    whole_loss, whole_grad, _ = reference(b, "balanced", np.arange(len(b["lens"])), n_steps=4)
    assert sum(lv for _, lv, _ in steps) == pytest.approx(whole_loss, rel=1e-12)
    assert rel(sum(gv for _, _, gv in steps), whole_grad) < 1e-12
    # groups really were split: some step holds part of a group
    sizes = [np.unique(b["uid"][rows], return_counts=True)[1] for rows, _, _ in steps]
    assert any((c != b["n"]).any() for c in sizes)


def test_fragment_weights_move_mass_at_the_paper_s_shape():
    """The paper's shape (512 prompts x 16 responses, 16 optimizer steps of 32 prompts, 8
    data-parallel ranks, the batch balanced by length as verl 0.9's default trainer does;
    response lengths uniform in 0..8192, binary rewards): the share of each step's
    token-weighted mass c_i |o_i| that the fragment rule (rlvr_weights=step) puts elsewhere than
    the whole-group rule. Figures printed (docs/integrations.md)."""
    g = np.random.default_rng(0)
    prompts, n, dp = 512, 16, 8
    bs = prompts * n
    lens = g.integers(0, 8193, bs)
    scores = g.integers(0, 2, bs).astype(float)
    uid = np.array([f"p{i // n}" for i in range(bs)], dtype=object)
    order = np.array([j for p in get_seqlen_balanced_partitions(calculate_workload(torch.as_tensor(lens + 512)),
                                                                 k_partitions=dp, equal_size=True) for j in p])
    lens, scores, uid = lens[order], scores[order], uid[order]
    groups = np.unique(uid.astype(str), return_inverse=True)[1]
    a = rlvr.advantages(groups, scores, estimator="grpo", std_scope="group")
    cut = rlvr.verl.StepCut(rows_per_step=32 * n, dp_size=dp)
    steps = rlvr.verl.optimizer_steps(cut, bs)
    assert len(steps) == 16
    moved, fragments = [], []
    c_group = rlvr.verl._factors("group", "balanced", lens, a, uid, steps)
    c_step = rlvr.verl._factors("step", "balanced", lens, a, uid, steps)
    for s in steps:
        mg, ms = c_group[s] * lens[s], c_step[s] * lens[s]
        moved.append(0.5 * np.abs(mg / mg.sum() - ms / ms.sum()).sum())
        fragments.append(sum(1 for c in np.unique(uid[s], return_counts=True)[1] if c != n))
    print(f"\npaper's shape: the fragment rule moves {min(moved):.3f}-{max(moved):.3f} of a step's mass "
          f"(mean {np.mean(moved):.3f}); {min(fragments)}-{max(fragments)} group fragments a step")
    assert min(fragments) > 0
    assert min(moved) > 0.05, moved


@pytest.mark.parametrize("steps, dp, balance", list(itertools.product([1, 4], [1, 2], [False, True])))
def test_dynamic_batch_size_micro_batches_are_exact(steps, dp, balance):
    """use_dynamic_bsz: verl's token-budget micro-batches (rearrange_micro_batches) change the
    memory, not the loss of a step."""
    b = random_batch(7 + steps + dp)
    budget = 3 * (PROMPT_LEN + b["mask"].shape[1])
    extra = ("actor_rollout_ref.actor.use_dynamic_bsz=true", f"actor_rollout_ref.actor.ppo_max_token_len_per_gpu={budget}")
    assert_every_step_exact(b, verl_config(b, steps=steps, dp=dp, balance=balance, extra=extra))


@pytest.mark.parametrize("seed", [0, 1])
def test_epochs_and_a_replayed_shuffle_are_exact(seed):
    b = random_batch(seed)
    assert_every_step_exact(b, verl_config(b, steps=4, dp=2, micro=3, epochs=2))
    # shuffle with one epoch: the estimator replays verl's seeded iterator
    assert_every_step_exact(b, verl_config(b, steps=4, dp=2, micro=3, shuffle=True))


def test_whole_groups_per_step_match_the_per_step_weights_of_rlvr_s_own_cut():
    """Without balance_batch and with steps of whole groups, step j holds groups j*P..(j+1)*P-1
    when dp = 1: the whole-group weights are rlvr.weights over those groups alone, the same
    advantages as the fragment rule's."""
    b = random_batch(3)
    cfg = verl_config(b, steps=4, dp=1, micro=4)
    adv, _, steps = verl_steps(b, cfg, "rlvr_balanced")
    for j, (rows, _, _) in enumerate(steps):
        assert np.array_equal(rows, np.arange(16 * j, 16 * (j + 1)))
        _, _, w = reference(b, "balanced", rows)
        _, _, w_whole = reference(b, "balanced", rows, n_steps=4)
        assert np.allclose(w, w_whole, rtol=1e-12, atol=0)
    assert rlvr.verl.last_steps is not None and len(rlvr.verl.last_steps) == 4
    adv_step, _, _ = verl_steps(b, verl_config(b, steps=4, dp=1, micro=4, extra=["+algorithm.rlvr_weights=step"]),
                                "rlvr_balanced")
    assert torch.allclose(adv, adv_step, rtol=1e-12, atol=0)


def test_verl_padding_rows_are_not_a_group():
    b = random_batch(4, pad=4)  # 68 rows: verl pads to a multiple of the mini-batch
    assert_every_step_exact(b, verl_config(b, steps=1, dp=2, micro=5))


def test_the_other_modes_and_plain_grpo_are_off_and_the_check_can_fail():
    """The approximate mode (N/N_s for S), the fragment rule with groups split, and verl's plain
    GRPO are each off the whole-group weights when the batch makes several optimizer steps: the
    exactness check above fails for all three."""
    b = random_batch(8)
    for mode in ("batch", "step"):
        cfg = verl_config(b, steps=4, dp=2, micro=3, balance=True, extra=[f"+algorithm.rlvr_weights={mode}"])
        _, _, steps = verl_steps(b, cfg, "rlvr_balanced")
        off = max(rel(gv, reference(b, "balanced", rows, n_steps=4)[1]) for rows, _, gv in steps)
        assert off > 1e-3, (mode, off)
    _, _, steps = verl_steps(b, verl_config(b, steps=4, dp=2, micro=3), "grpo")
    assert max(rel(gv, reference(b, "balanced", rows, n_steps=4)[1]) for rows, _, gv in steps) > 1e-3
    # with one optimizer step the approximate mode is exact
    assert_every_step_exact(b, verl_config(b, steps=1, dp=2, micro=3, extra=["+algorithm.rlvr_weights=batch"]),
                            estimators={"rlvr_balanced": "balanced"})


def test_approximate_mode_says_so(capsys):
    b = random_batch(9)
    rlvr.verl._warned_batch_mode = False
    verl_steps(b, verl_config(b, steps=4, extra=["+algorithm.rlvr_weights=batch"]), "rlvr_balanced")
    assert "algorithm.rlvr_weights=batch" in capsys.readouterr().out
    assert rlvr.verl.last_steps is None


@pytest.mark.parametrize("extra, key", [
    (["actor_rollout_ref.actor.shuffle=true", "actor_rollout_ref.actor.ppo_epochs=2"], "actor_rollout_ref.actor.shuffle"),
    (["actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-mean"], "actor_rollout_ref.actor.loss_agg_mode"),
    (["actor_rollout_ref.actor.strategy=veomni"], "rlvr_dp_size"),
    (["+algorithm.rlvr_dp_size=3"], "data-parallel size 3"),
    (["+algorithm.rlvr_weights=token"], "algorithm.rlvr_weights"),
    (["+algorithm.rlvr_weights=step", "actor_rollout_ref.actor.shuffle=true", "actor_rollout_ref.actor.ppo_epochs=2"],
     "actor_rollout_ref.actor.shuffle"),
])
def test_settings_that_make_the_cut_inexact_are_refused_by_key(extra, key):
    b = random_batch(0)
    cfg = verl_config(b, steps=4, extra=extra)
    fn = core_algos.get_adv_estimator_fn("rlvr_balanced")
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        fn(token_level_rewards=b["rewards"], response_mask=b["mask"], index=b["uid"], config=cfg.algorithm)


def test_without_verl_s_config_the_cut_is_unknown_and_refused():
    b = random_batch(0)
    fn = core_algos.get_adv_estimator_fn("rlvr_balanced")
    for config in (None, AlgoConfig(adv_estimator="rlvr_balanced")):
        with pytest.raises(ValueError, match="rlvr_weights=batch"):
            fn(token_level_rewards=b["rewards"], response_mask=b["mask"], index=b["uid"], config=config)


def test_explicit_dp_size_overrides_the_gpu_count():
    b = random_batch(6)
    cfg = verl_config(b, steps=4, dp=1, micro=2, extra=["+algorithm.rlvr_dp_size=2"])
    assert rlvr.verl.step_cut(cfg.algorithm).dp_size == 2
    cfg2 = verl_config(b, steps=4, dp=2, micro=2)
    assert rlvr.verl.step_cut(cfg2.algorithm) == rlvr.verl.step_cut(cfg.algorithm)
    sp = verl_config(b, steps=4, dp=4, micro=2, extra=["actor_rollout_ref.actor.fsdp_config.ulysses_sequence_parallel_size=2"])
    assert rlvr.verl.step_cut(sp.algorithm).dp_size == 2


def test_float32_batches_within_1e_5():
    b = random_batch(5, dtype=torch.float32)
    cfg = verl_config(b, steps=4, dp=2, micro=3)
    _, _, steps = verl_steps(b, cfg, "rlvr_balanced")
    b64 = {k: (v.double() if torch.is_tensor(v) and v.is_floating_point() else v) for k, v in b.items()}
    for rows, lv, gv in steps:
        lr, gr, _ = reference(b64, "balanced", rows, n_steps=4)
        assert lv == pytest.approx(lr, rel=1e-5)
        assert rel(gv.double(), gr) < 1e-5


def test_advantage_keeps_its_sign_and_scales_by_s_w_times_the_step_s_tokens():
    b = random_batch(2)
    cfg = verl_config(b, steps=4, dp=2, micro=3)
    adv, order, steps = verl_steps(b, cfg, "rlvr_balanced")
    idx = torch.as_tensor(order)
    plain, _ = core_algos.compute_grpo_outcome_advantage(b["rewards"][idx], b["mask"][idx], b["uid"][order])
    pos = {int(o): k for k, o in enumerate(order)}
    for rows, _, _ in steps:
        _, _, w = reference(b, "balanced", rows, n_steps=4)
        n_step = b["mask"][torch.as_tensor(rows)].sum().item()
        k = torch.as_tensor([pos[int(i)] for i in rows])
        expected = plain[k] * torch.as_tensor(w[rows] * n_step).unsqueeze(1)
        assert torch.allclose(adv[k], expected, rtol=1e-12, atol=0)
    assert (torch.sign(adv) == torch.sign(plain)).all()
    d = rlvr.verl.last_diagnostics
    assert d is not None and d["positive_share"]["balanced"] is not None


def test_registration_is_idempotent_and_needs_uid():
    rlvr.verl.register()  # again: no "already registered" error
    assert core_algos.get_adv_estimator_fn("rlvr_balanced") is core_algos.ADV_ESTIMATOR_REGISTRY["rlvr_balanced"]
    b = random_batch(0)
    with pytest.raises(ValueError, match="uid"):
        core_algos.get_adv_estimator_fn("rlvr_balanced")(token_level_rewards=b["rewards"], response_mask=b["mask"])


def test_compute_score_is_verl_s_reward_signature():
    assert rlvr.verl.compute_score("openai/gsm8k", "... #### 72", "72", extra_info={"index": 0})["score"] == 1.0


def test_import_verl_loads_the_plugin():
    """With the wheel installed, `import verl` registers the estimators (a verl.plugins entry point)."""
    import subprocess
    import sys
    from importlib.metadata import entry_points

    if not any(ep.value == "rlvr.verl" for ep in entry_points(group="verl.plugins")):
        pytest.skip("rlvr is not installed as a package here (no verl.plugins entry point)")
    code = "import verl.trainer.ppo.core_algos as c; print(sorted(k for k in c.ADV_ESTIMATOR_REGISTRY if k.startswith('rlvr')))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "['rlvr_balanced', 'rlvr_balanced_mass']", out


def _policy_loss(mode, rows, logp, b, adv, n_tokens):
    """verl's policy loss `mode` over `rows` with verl's token-mean and the global token count
    `n_tokens`, one rank."""
    from verl.workers.config import PolicyLossConfig

    acfg = ActorConfig(strategy="fsdp", rollout_n=4, ppo_micro_batch_size_per_gpu=4, clip_ratio_low=0.2,
                       clip_ratio_high=0.28, clip_ratio_c=3.0, loss_agg_mode="token-mean",
                       policy_loss=PolicyLossConfig(loss_mode=mode, dro_beta=0.1))
    acfg.global_batch_info.update(dp_size=1, batch_num_tokens=n_tokens, global_batch_size=len(rows),
                                  loss_scale_factor=None)
    loss, _ = core_algos.get_policy_loss_fn(mode)(
        old_log_prob=b["old"][rows], log_prob=logp[rows], advantages=adv[rows],
        response_mask=b["mask"][rows].bool(), loss_agg_mode="token-mean", config=acfg, rollout_is_weights=None)
    return loss


def _weighted_loss_error(mode, b, c, A):
    """How far verl's loss of a step with advantages c_i A_i is from sum_i (c_i / N) T_i, T_i the
    token sum of response i's own loss (its loss alone, token-mean over its |o_i| tokens, times
    |o_i|); the loss at A = 0 (terms that do not read the advantage) taken off both sides. The
    relative error of the gradient in log-probabilities."""
    bs = len(c)
    n = int(b["mask"].sum())

    def grad(rows, adv, n_tokens):
        logp = b["logp0"].clone().requires_grad_(True)
        (_policy_loss(mode, rows, logp, b, adv, n_tokens) - _policy_loss(mode, rows, logp, b, 0 * adv, n_tokens)).backward()
        return logp.grad

    full = grad(torch.arange(bs), c.unsqueeze(1) * A, n)
    ref = torch.zeros_like(full)
    for i in range(bs):
        ni = int(b["mask"][i].sum())
        if ni:
            ref += c[i] / n * ni * grad(torch.tensor([i]), A, ni)
    return rel(full, ref)


def test_every_policy_loss_mode_is_exact_or_refused():
    """Every policy-loss mode in verl's registry either carries the weights exactly (the loss with
    c_i A_i is sum_i (c_i / N) times response i's own token sum, for random positive c) and is
    listed in EXACT_LOSS_MODES, or is off that and refused by name, with its reason, at the start-up
    check."""
    b = random_batch(3)
    g = torch.Generator().manual_seed(1)
    c = torch.rand(len(b["lens"]), generator=g, dtype=torch.float64) * 3 + 0.1
    A = torch.randn(len(b["lens"]), generator=g, dtype=torch.float64).unsqueeze(1) * b["mask"]
    registry = set(core_algos.POLICY_LOSS_REGISTRY)
    assert rlvr.verl.EXACT_LOSS_MODES <= registry and set(rlvr.verl.REFUSED_LOSS_MODES) <= registry
    errors = {mode: _weighted_loss_error(mode, b, c, A) for mode in sorted(registry)}
    print("\n" + ", ".join(f"{m} {e:.1e}" for m, e in errors.items()))
    for mode, err in errors.items():
        cfg = verl_config(b, steps=4, extra=[f"actor_rollout_ref.actor.policy_loss.loss_mode={mode}"])
        if mode in rlvr.verl.EXACT_LOSS_MODES:
            assert err < 1e-12, (mode, err)
            rlvr.verl.check_config(cfg)
        else:
            assert err > 1e-3, (mode, err)  # refused for a reason the check shows
            with pytest.raises(ValueError, match=r"policy_loss\.loss_mode='" + mode + "'"):
                rlvr.verl.check_config(cfg)
    # a mode someone else registers is refused until shown exact
    cfg = verl_config(b, steps=4, extra=["actor_rollout_ref.actor.policy_loss.loss_mode=my_loss"])
    with pytest.raises(ValueError, match="has not shown the balanced weights exact"):
        rlvr.verl.check_config(cfg)


@pytest.mark.parametrize("extra, key", [
    (["actor_rollout_ref.actor.policy_loss.loss_mode=sapo"], "policy_loss.loss_mode"),
    (["actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-mean"], "loss_agg_mode"),
    (["actor_rollout_ref.actor.shuffle=true", "actor_rollout_ref.actor.ppo_epochs=2"], "actor_rollout_ref.actor.shuffle"),
    (["+algorithm.rlvr_weights=batch", "actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-sum"], "loss_agg_mode"),
])
def test_refusals_come_from_verl_s_config_check_at_start_up(extra, key):
    """The plugin's check runs inside verl's own validate_config (the function main_ppo calls before
    Ray starts or a model loads); a config of another estimator is left alone."""
    from verl.utils import config as verl_config_module

    b = random_batch(0)
    cfg = verl_config(b, steps=4, extra=extra)
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        rlvr.verl.check_config(cfg)
    assert getattr(verl_config_module.validate_config, "_rlvr", False)
    other = verl_config(b, steps=4, extra=[*extra, "algorithm.adv_estimator=grpo"])
    rlvr.verl.check_config(other)


def test_main_ppo_refuses_before_ray_starts(tmp_path):
    """`python -m verl.trainer.main_ppo` with the plugin installed and a refused loss mode stops in
    its config check, before Ray, with rlvr's message naming the key."""
    import subprocess
    import sys
    from importlib.metadata import entry_points

    if not any(ep.value == "rlvr.verl" for ep in entry_points(group="verl.plugins")):
        pytest.skip("rlvr is not installed as a package here (no verl.plugins entry point)")
    overrides = [
        "algorithm.adv_estimator=rlvr_balanced", "actor_rollout_ref.actor.policy_loss.loss_mode=sapo",
        "data.train_batch_size=8", "actor_rollout_ref.rollout.n=4", "actor_rollout_ref.actor.ppo_mini_batch_size=4",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2", "trainer.n_gpus_per_node=1",
    ]
    run = subprocess.run([sys.executable, "-m", "verl.trainer.main_ppo", *overrides], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode != 0, out[-3000:]
    assert "policy_loss.loss_mode='sapo'" in out, out[-3000:]
    # Ray never started: no local instance, no task
    for mark in ("Started a local Ray instance", "ray::", "RayTaskError", "TaskRunner"):
        assert mark not in out, (mark, out[-3000:])
