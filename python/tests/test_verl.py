"""rlvr.verl with the real verl (its config, loss, advantage and batch-cutting code; no Ray
cluster): verl's own advantage-estimator dispatch, given rlvr's registration and verl's
Hydra-composed ppo_trainer config, then verl's actor update replayed as verl 0.9 runs it (the
v1 trainer's balance_batch partition, contiguous data-parallel chunks, verl's make_iterator
per rank, micro-batches, the per-mini-batch global token normalization, DDP's average) give, at
every optimizer step, the loss and gradient of rlvr's formula sum_{i in step} w_i sum_t l_{i,t}
with w over exactly that step's responses."""

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


def reference(b, rule, rows, clip_low=0.2, clip_high=0.28, clip_c=3.0):
    """rlvr's formula for one optimizer step, written out: A from rlvr.advantages over the whole
    batch, w from rlvr.weights over the step's rows (verl's padding rows excluded), verl's
    dual-clip token loss."""
    uid = b["uid"]
    real = np.array([not u.startswith("pad") for u in uid])
    groups = np.unique(uid.astype(str), return_inverse=True)[1]
    a = np.zeros(len(uid))
    a[real] = rlvr.advantages(groups[real], b["scores"].numpy()[real], estimator="grpo", std_scope="group")
    w = np.zeros(len(uid))
    step_real = rows[real[rows]]
    w[step_real] = rlvr.weights(rule, b["lens"].numpy()[step_real], a[step_real], groups[step_real])
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


def assert_every_step_exact(b, cfg, tol=1e-9, estimators=rlvr.verl.ESTIMATORS):
    worst = 0.0
    for estimator, rule in estimators.items():
        _, _, steps = verl_steps(b, cfg, estimator)
        expected = cfg.actor_rollout_ref.actor.ppo_epochs * len(b["lens"]) // (
            cfg.actor_rollout_ref.actor.ppo_mini_batch_size * b["n"])
        assert len(steps) == expected
        for rows, lv, gv in steps:
            lr, gr, _ = reference(b, rule, rows)
            assert lv == pytest.approx(lr, rel=tol, abs=1e-15), (estimator, lv, lr)
            if gr.norm() > 0:
                worst = max(worst, rel(gv, gr))
                assert rel(gv, gr) < tol, estimator
    return worst


@pytest.mark.parametrize("steps, micro, dp, balance",
                         list(itertools.product([1, 4, 16], [1, 3], [1, 2, 4], [False, True])))
def test_every_optimizer_step_is_balanced_aggregation_over_its_responses(steps, micro, dp, balance):
    b = random_batch(steps + 10 * dp + micro + (100 if balance else 0))
    assert_every_step_exact(b, verl_config(b, steps=steps, dp=dp, micro=micro, balance=balance))


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
    when dp = 1: the per-step weights are rlvr.weights over those groups alone."""
    b = random_batch(3)
    cfg = verl_config(b, steps=4, dp=1, micro=4)
    adv, _, steps = verl_steps(b, cfg, "rlvr_balanced")
    for j, (rows, _, _) in enumerate(steps):
        assert np.array_equal(rows, np.arange(16 * j, 16 * (j + 1)))
    # the step's weights sum to 1 over its responses' tokens x sign classes: c_i = w_i N_s
    assert rlvr.verl.last_steps is not None and len(rlvr.verl.last_steps) == 4


def test_verl_padding_rows_are_not_a_group():
    b = random_batch(4, pad=4)  # 68 rows: verl pads to a multiple of the mini-batch
    assert_every_step_exact(b, verl_config(b, steps=1, dp=2, micro=5))


def test_the_old_whole_batch_weights_are_off_per_step_and_the_check_can_fail():
    """The approximate mode (weights over the whole batch) is off BA's per-step weights when the
    batch makes several optimizer steps, and verl's plain GRPO is a different loss: the exactness
    check above fails for both."""
    b = random_batch(8)
    cfg = verl_config(b, steps=4, dp=2, micro=3, extra=["+algorithm.rlvr_weights=batch"])
    _, _, steps = verl_steps(b, cfg, "rlvr_balanced")
    off = max(rel(gv, reference(b, "balanced", rows)[1]) for rows, _, gv in steps)
    assert off > 1e-3, off
    _, _, steps = verl_steps(b, verl_config(b, steps=4, dp=2, micro=3), "grpo")
    assert max(rel(gv, reference(b, "balanced", rows)[1]) for rows, _, gv in steps) > 1e-3
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
        lr, gr, _ = reference(b64, "balanced", rows)
        assert lv == pytest.approx(lr, rel=1e-5)
        assert rel(gv.double(), gr) < 1e-5


def test_advantage_keeps_its_sign_and_scales_by_w_times_the_step_s_tokens():
    b = random_batch(2)
    cfg = verl_config(b, steps=4, dp=2, micro=3)
    adv, order, steps = verl_steps(b, cfg, "rlvr_balanced")
    idx = torch.as_tensor(order)
    plain, _ = core_algos.compute_grpo_outcome_advantage(b["rewards"][idx], b["mask"][idx], b["uid"][order])
    pos = {int(o): k for k, o in enumerate(order)}
    for rows, _, _ in steps:
        _, _, w = reference(b, "balanced", rows)
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
