"""rlvr.trl with the real TRL on the CPU: a tiny random Qwen2 checkpoint, a few GRPO steps per
case; at every optimizer step the gradient TRL accumulated equals (relative 1e-12, float64) the
gradient of sum_i w_i sum_t l_{i,t} computed from scratch (trl_check.py), over the rows that
optimizer step consumed, with w from rlvr.weights over each row's whole generation batch times
K = steps_per_generation / gradient_accumulation_steps (rlvr_weights="group", the default), or
over the step's own rows (rlvr_weights="step"): one process here (every split TRL offers), two
real processes under `accelerate launch` in test_trl_two_processes.

The checks run in float64: the checkpoint loaded in float64 (GRPOConfig's model_init_kwargs,
no bf16), TRL's fused LM head, which computes in float32 whatever the weights' dtype, replaced by
the same computation in float64 (trl_check.in_weights_dtype; test_the_float64_head_is_trl_s_head
checks it against TRL's), and rlvr.trl folding its weights and TRL's dapo normalizer in the
model's float64. test_trl_s_own_float32_head runs TRL's head as it is, in float32 (1e-6)."""

import contextlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")
transformers = pytest.importorskip("transformers")
datasets = pytest.importorskip("datasets")

import rlvr.trl  # noqa: E402
from trl_check import PROMPTS, CheckGradient, Recorder, in_weights_dtype, long_is_right, tiny_checkpoint  # noqa: E402

#: The checks' dtype and tolerance (relative error of every step's gradient; measured 1e-16).
DTYPE, TOL = torch.float64, 1e-12
#: TRL's own fused LM head in a float32 model (float32 log-softmax and gradient accumulators).
FLOAT32_TOL = 1e-6

#: (TRL settings, optimizer steps to run). G = 4 completions a prompt throughout.
CASES = {
    # per-device batch = generation batch, one micro-step per optimizer step
    "one-micro-batch": (dict(per_device_train_batch_size=8, gradient_accumulation_steps=1), 2),
    # 2 gradient-accumulation steps over one generation batch (TRL's default steps_per_generation)
    "grad-accum-2": (dict(per_device_train_batch_size=4, gradient_accumulation_steps=2), 2),
    # one generation feeds 2 optimizer steps (shuffled, groups split between them)
    "spg-2": (dict(per_device_train_batch_size=4, gradient_accumulation_steps=1, steps_per_generation=2), 2),
    # 2 optimizer steps of 2 micro-steps each per generation
    "spg-4-accum-2": (dict(per_device_train_batch_size=2, gradient_accumulation_steps=2, steps_per_generation=4), 2),
    # the generation batch used twice: the second pass off-policy, clipping active
    "iterations-2": (
        dict(per_device_train_batch_size=4, gradient_accumulation_steps=2, steps_per_generation=2, num_iterations=2),
        2,
    ),
    # one micro-batch consumed twice inside one optimizer step (its rows count twice)
    "spg-1-accum-2-iterations-2": (
        dict(per_device_train_batch_size=8, gradient_accumulation_steps=2, steps_per_generation=1, num_iterations=2),
        1,
    ),
    # 3 micro-batches, 2 passes, 2 micro-steps a step: steps {0,1} {2,0} {1,2}, a micro-batch
    # weighted differently in each step it is in (under "step")
    "spg-3-accum-2-iterations-2": (
        dict(per_device_train_batch_size=4, gradient_accumulation_steps=2, steps_per_generation=3, num_iterations=2),
        3,
    ),
}

#: Splits only rlvr_weights="group" takes: an optimizer step spanning two generation batches.
SPANNING = {
    "spg-1-accum-2": (dict(per_device_train_batch_size=4, gradient_accumulation_steps=2, steps_per_generation=1), 2),
}


def grpo_args(tmp_path, rule, max_steps, dtype=DTYPE, **split):
    return trl.GRPOConfig(
        output_dir=str(tmp_path),
        loss_type=rule,
        num_generations=4,
        max_completion_length=10,
        max_steps=max_steps,
        learning_rate=0.05,
        max_grad_norm=0.0,
        beta=0.0,
        temperature=1.0,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        model_init_kwargs={"dtype": dtype},
        seed=0,
        **split,
    )


def check_steps(steps, split, processes=1, weights="group", tol=TOL):
    """The properties every case must show, `split` the case's TRL settings, `tol` the bound on
    each step's relative gradient error (asserts)."""
    accum = split.get("gradient_accumulation_steps", 1)
    rows = split["per_device_train_batch_size"] * accum * processes
    for s in steps:
        assert s["norm"] > 0, steps
        assert s["rel"] < tol, steps
        assert s["micro_steps"] == accum * processes, steps
        assert s["rows"] == rows, steps
        if weights == "step":
            # balanced is a mean over the step's sequences: sum_i w_i |o_i| = 1
            assert s["mass"] == pytest.approx(1.0, abs=1e-9), steps
    if weights == "group":
        # the cases run whole passes over their generation batches: K steps a pass, each pass's
        # K w sums to K over the tokens, so the steps' mean mass is 1
        assert sum(s["mass"] for s in steps) / len(steps) == pytest.approx(1.0, abs=1e-9), steps
    # the check can fail: token-mean weights give a different gradient on these batches
    assert max(s["rel_token_mean"] for s in steps) > 1e-2, steps


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return tiny_checkpoint(tmp_path_factory.mktemp("tiny-qwen2"))


def run_checked(checkpoint, tmp_path, rule, split, max_steps, weights, check_weights=None, dtype=DTYPE):
    """Trains `max_steps` steps with rlvr_weights=`weights`, each step's gradient checked against
    the reference of `check_weights` (default: the same mode); returns (trainer, steps). Float64:
    inside in_weights_dtype; float32: TRL and transformers as they are."""
    args = grpo_args(tmp_path, rule, max_steps, dtype=dtype, **split)
    data = datasets.Dataset.from_dict({"prompt": PROMPTS})
    check = CheckGradient(rule, weights=check_weights or weights)
    with in_weights_dtype() if dtype == torch.float64 else contextlib.nullcontext():
        tr = Recorder(model=checkpoint, reward_funcs=long_is_right, args=args, train_dataset=data,
                      callbacks=[check], rlvr_weights=weights)
        assert tr.model.dtype == dtype, tr.model.dtype
        check.trainer = tr
        tr.train()
    return tr, check.steps


# every split case under `balanced` with whole-group weights, the spanning split too; the
# fragment rule on the cases whose steps split groups; `balanced-mass` shares the code path
@pytest.mark.parametrize(
    "case, rule, weights",
    [(case, "balanced", "group") for case in [*CASES, *SPANNING]]
    + [(case, "balanced", "step") for case in ("grad-accum-2", "spg-2", "spg-3-accum-2-iterations-2")]
    + [("spg-4-accum-2", "balanced-mass", "group")],
)
def test_gradient_equals_rlvr_weights_per_optimizer_step(checkpoint, tmp_path, case, rule, weights):
    split, max_steps = {**CASES, **SPANNING}[case]
    tr, steps = run_checked(checkpoint, tmp_path, rule, split, max_steps, weights)
    args = tr.args
    print(f"\n{case} {rule} {weights}: " + "; ".join(
        f"rel err {s['rel']:.1e} (token-mean weights: {s['rel_token_mean']:.2f}, {s['split_groups']} split groups)"
        for s in steps))
    assert len(steps) == max_steps, steps
    check_steps(steps, split, weights=weights)
    if args.steps_per_generation > args.gradient_accumulation_steps:
        # more than one optimizer step per generation: TRL's shuffle splits groups between steps
        assert any(s["split_groups"] for s in steps), steps
    logged = [h for h in tr.state.log_history if "rlvr/positive_share/balanced" in h]
    assert logged, tr.state.log_history
    for h in logged:
        # binary rewards, std-normalized advantages: over the generation batch, balanced puts
        # exactly half the mass on positives
        assert h["rlvr/positive_share/balanced"] == pytest.approx(0.5, abs=1e-6)
        assert 0.0 <= h["rlvr/positive_share/token-mean"] <= 1.0
        assert math.isfinite(h["rlvr/length_cv"])
    assert isinstance(tr.rlvr_verdict, str) and tr.rlvr_verdict


#: TRL settings that change the token loss, each checked at every step against trl_check's
#: reference (GSPO's sequence-level ratio, the two-sided clip, the off-policy sequence mask, the
#: high-entropy token mask), on a split with off-policy steps and groups split between steps.
KNOBS = {
    "gspo-sequence-ratio": dict(importance_sampling_level="sequence"),
    "two-sided-clip": dict(delta=1.05),
    "off-policy-mask": dict(off_policy_mask_threshold=0.0),
    "top-entropy-half": dict(top_entropy_quantile=0.5),
}


@pytest.mark.parametrize("knob", list(KNOBS))
def test_the_loss_knobs_keep_the_weights_exact(checkpoint, tmp_path, knob):
    split, max_steps = CASES["spg-3-accum-2-iterations-2"]
    split = {**split, **KNOBS[knob]}
    tr, steps = run_checked(checkpoint, tmp_path, "balanced", split, max_steps, "group")
    print(f"\n{knob}: " + "; ".join(f"rel err {s['rel']:.1e}" for s in steps))
    check_steps(steps, split)


def test_trl_s_own_float32_head(checkpoint, tmp_path):
    """TRL and transformers as they are, in a float32 model: TRL's fused LM head keeps its
    log-softmax and its gradient accumulators in float32, so the step's gradient and the
    reference are float32 roundings apart (measured 1e-7), within 1e-6."""
    split, max_steps = CASES["spg-3-accum-2-iterations-2"]
    _, steps = run_checked(checkpoint, tmp_path, "balanced", split, max_steps, "group", dtype=torch.float32)
    print("\nfloat32, TRL's own head: " + "; ".join(f"rel err {s['rel']:.1e}" for s in steps))
    check_steps(steps, split, tol=FLOAT32_TOL)
    # float32 rounding, what the float64 runs (1e-16) do without
    assert max(s["rel"] for s in steps) > TOL, steps


def test_the_float64_head_is_trl_s_head():
    """trl_check's stand-in for TRL's fused LM head (the float64 runs' only change to TRL)
    computes what TRL's ChunkedLogProbFunction does: log-probabilities, entropies and the
    extras, and the gradients of the first two, equal to float32 rounding (TRL's head computes
    in float32), with a bias, a logit scale, a softcap and a temperature."""
    from trl.kernels import ChunkedLogProbFunction

    from trl_check import _HeadInWeightsDtype

    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(13, 16, dtype=torch.float64, generator=g, requires_grad=True)
    weight = torch.randn(7, 16, dtype=torch.float64, generator=g, requires_grad=True)
    bias = torch.randn(7, dtype=torch.float64, generator=g, requires_grad=True)
    targets = torch.randint(0, 7, (13,), generator=g)
    outputs = ("log_probs", "entropy", "log_sum_sq_probs", "mean_logits", "is_top1")
    up = torch.randn(2, 13, dtype=torch.float64, generator=g)
    for softcap, scale, temperature in ((None, 1.0, 1.0), (3.0, 0.5, 0.7)):
        results = []
        for head in (ChunkedLogProbFunction, _HeadInWeightsDtype):
            out = head.apply(hidden, weight, bias, targets, temperature, 4, softcap, scale, outputs)
            grads = torch.autograd.grad((out[0].double() * up[0]).sum() + (out[1].double() * up[1]).sum(),
                                        (hidden, weight, bias))
            results.append((out, grads))
        (trl_out, trl_grads), (ours, our_grads) = results
        assert ours[0].dtype == torch.float64 and trl_out[0].dtype == torch.float32  # TRL's float32
        for a, b in zip(trl_out[:4], ours[:4]):
            torch.testing.assert_close(a.double(), b, rtol=1e-5, atol=1e-5)
        assert torch.equal(trl_out[4], ours[4])
        for a, b in zip(trl_grads, our_grads):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_the_two_modes_differ_when_steps_split_groups(checkpoint, tmp_path):
    """With 2 optimizer steps a generation TRL's shuffle splits groups between them: the fragment
    rule's gradients miss the whole-group weights and the reverse, so each check can fail."""
    split, max_steps = CASES["spg-2"]
    _, steps = run_checked(checkpoint, tmp_path / "a", "balanced", split, max_steps, "step", check_weights="group")
    assert any(s["split_groups"] for s in steps), steps
    assert max(s["rel"] for s in steps) > 1e-2, steps
    _, steps = run_checked(checkpoint, tmp_path / "b", "balanced", split, max_steps, "group", check_weights="step")
    assert max(s["rel"] for s in steps) > 1e-2, steps


def test_a_step_spanning_two_generations_is_refused_under_the_fragment_rule(checkpoint, tmp_path):
    data = datasets.Dataset.from_dict({"prompt": PROMPTS})
    split, _ = SPANNING["spg-1-accum-2"]
    args = grpo_args(tmp_path, "balanced", 1, **split)
    with pytest.raises(ValueError) as e:
        rlvr.trl.GRPOTrainer(model=checkpoint, reward_funcs=long_is_right, args=args, train_dataset=data,
                             rlvr_weights="step")
    for key in ("steps_per_generation", "num_iterations", "gradient_accumulation_steps", "rlvr_weights='group'"):
        assert key in str(e.value), e.value
    # the default takes it (exactness: test_gradient_equals_rlvr_weights_per_optimizer_step),
    # and "batch" is the former name of "group"
    tr = rlvr.trl.GRPOTrainer(model=checkpoint, reward_funcs=long_is_right, args=args, train_dataset=data,
                              rlvr_weights="batch")
    assert tr.rlvr_weights == "group"
    with pytest.raises(ValueError, match="rlvr_weights must be one of"):
        rlvr.trl.GRPOTrainer(model=checkpoint, reward_funcs=long_is_right, args=args, rlvr_weights="steps")


def test_a_subclass_bypassing_compute_loss_is_refused(checkpoint, tmp_path):
    class Bypass(rlvr.trl.GRPOTrainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            return torch.zeros(())

    data = datasets.Dataset.from_dict({"prompt": PROMPTS})
    args = grpo_args(tmp_path, "balanced", 1, per_device_train_batch_size=8)
    with pytest.raises(ValueError, match="overrides compute_loss"):
        Bypass(model=checkpoint, reward_funcs=long_is_right, args=args, train_dataset=data)


def test_trl_two_processes(checkpoint, tmp_path):
    """Two real processes (`accelerate launch --multi_gpu --num_processes 2`: on a machine
    without a GPU, accelerate's MULTI_CPU with gloo; DDP all-reduces the gradients): every
    optimizer step's gradient, as DDP leaves it on each process, equals BA over the rows both
    processes consumed in that step, in float64 (1e-12; the all-reduce in float64)."""
    launcher = Path(sys.executable).with_name("accelerate")
    if not launcher.exists():
        pytest.skip("accelerate's launcher is not installed next to this python")
    out = tmp_path / "steps.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    worker = Path(__file__).with_name("trl_ddp_worker.py")
    cmd = [str(launcher), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
           "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", "0",
           str(worker), checkpoint, str(tmp_path), str(out)]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        # gloo can abort a process as it leaves (2 runs in 25 on a 2-core VM: rank 1 killed by
        # SIGABRT), after rank 0 wrote the results, which needs every all_gather of both ranks
        # done: only a run that wrote no results has failed, and the results are checked below
        assert out.exists(), run.stdout[-4000:] + run.stderr[-4000:]
        print(f"\nthe launch exited with {run.returncode} after the results were written")
    results = json.loads(out.read_text())
    assert set(results) == set(WORKER_CASES), results
    for case, per_rank in results.items():
        assert len(per_rank) == 2, (case, per_rank)  # both processes checked their gradient
        split, max_steps, weights = WORKER_CASES[case]
        for steps in per_rank:
            assert len(steps) == max_steps, (case, steps)
            check_steps(steps, split, processes=2, weights=weights)
        # each step's error, the larger of the two processes'
        print(f"\n2 processes, {case}: " + "; ".join(
            f"rel err {max(a['rel'], b['rel']):.1e}" for a, b in zip(*per_rank)))


#: The cases trl_ddp_worker.py runs (per process: per-device batch x accumulation steps; the
#: weights mode).
WORKER_CASES = {
    # accumulation 2 over both micro-batches, the generation used twice (the second step off-policy)
    "accum-2-spg-2-iterations-2": (
        dict(per_device_train_batch_size=2, gradient_accumulation_steps=2, steps_per_generation=2, num_iterations=2),
        2,
        "group",
    ),
    # steps that split groups across both processes and steps
    "spg-3-accum-2-iterations-2": (
        dict(per_device_train_batch_size=2, gradient_accumulation_steps=2, steps_per_generation=3, num_iterations=2),
        3,
        "group",
    ),
    "spg-3-accum-2-iterations-2-step": (
        dict(per_device_train_batch_size=2, gradient_accumulation_steps=2, steps_per_generation=3, num_iterations=2),
        3,
        "step",
    ),
}


def test_other_loss_types_are_trl_s_own(checkpoint, tmp_path):
    data = datasets.Dataset.from_dict({"prompt": ["ab", "cd"] * 4})
    args = trl.GRPOConfig(output_dir=str(tmp_path), loss_type="dapo", num_generations=4, max_completion_length=6,
                          max_steps=1, per_device_train_batch_size=8, report_to="none", save_strategy="no",
                          use_cpu=True, bf16=False, seed=0)
    tr = rlvr.trl.GRPOTrainer(model=checkpoint, reward_funcs=long_is_right, args=args, train_dataset=data)
    assert tr.rlvr_rule is None
    tr.train()
    assert any("rlvr/positive_share/token-mean" in h for h in tr.state.log_history)


def test_fragment_weights_move_mass_at_the_paper_s_shape():
    """The paper's shape under TRL's cut, computed without a trainer: 512 prompts x 16
    completions a generation batch over 8 processes (64 whole groups each), each process's share
    shuffled and cut into 16 micro-batches (steps_per_generation=16, one micro-step a step),
    lengths uniform in 0..8192, binary rewards: the share of each step's token-weighted mass
    w_i |o_i| that the fragment rule (rlvr_weights="step") puts elsewhere than the whole-group
    rule. Figures printed (docs/integrations.md)."""
    import numpy as np

    import rlvr

    g = np.random.default_rng(0)
    prompts, n, procs, spg = 512, 16, 8, 16
    bs = prompts * n
    lens = g.integers(0, 8193, bs)
    scores = g.integers(0, 2, bs).astype(float)
    groups = np.arange(bs) // n
    a = rlvr.advantages(groups, scores, estimator="grpo", std_scope="group")
    w_group = spg * rlvr.weights("balanced", lens, a, groups)
    local = bs // procs
    shuffled = [p * local + g.permutation(local) for p in range(procs)]
    moved, fragments = [], []
    for j in range(spg):
        rows = np.concatenate([s[j * (local // spg) : (j + 1) * (local // spg)] for s in shuffled])
        mg = w_group[rows] * lens[rows]
        ms = rlvr.weights("balanced", lens[rows], a[rows], groups[rows]) * lens[rows]
        moved.append(0.5 * np.abs(mg / mg.sum() - ms / ms.sum()).sum())
        fragments.append(sum(1 for c in np.unique(groups[rows], return_counts=True)[1] if c != n))
    print(f"\nTRL at the paper's shape: the fragment rule moves {min(moved):.3f}-{max(moved):.3f} of a step's "
          f"mass (mean {np.mean(moved):.3f}); {min(fragments)}-{max(fragments)} group fragments a step")
    assert min(moved) > 0.05, moved
