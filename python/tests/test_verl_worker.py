"""rlvr's verl plugin through verl 0.9.1's own training worker, on the CPU, in 1 and 2 real
processes (one gloo process group, torchrun's environment; data-parallel 1 and 2).

verl_worker_check.py (run as those processes) builds verl's actor as verl's trainer does
(``ActorRolloutRefWorker(role="actor").init_model()`` from verl's Hydra ``ppo_trainer`` config:
FSDP2 engine, AdamW, ``ppo_loss``) on the committed tiny random Llama
(crates/rlvr-model/tests/fixtures/llama-tiny), takes one GRPO batch (16 prompts x 4 responses)
through verl's length balancing, verl's ``compute_advantage`` with the registered
``rlvr_balanced`` estimator (default whole-group weights) and the trainer's ``_update_actor``
preparation, and calls the worker's ``update_actor``: ``TrainingWorker.train_mini_batch`` cuts
it into 16 optimizer steps of 4 rows with verl's own iterator (shuffled in the one-process run;
in the two-process run verl's length balancing deals groups' rows over both ranks and every
step takes 2 rows of each rank; either way groups are split across steps), and
``FSDPEngine.forward_backward_batch`` -> ``ppo_loss`` -> ``compute_policy_loss_vanilla`` ->
``agg_loss`` compute the loss of every micro-batch, FSDP2 reduces the gradients over the ranks,
and an optimizer step pre-hook records the full gradient the optimizer is about to apply. The
learning rate is 0, so all steps are taken at the same parameters. Everything runs in float64
(verl's ``model_dtype`` and FSDP2 mixed-precision keys; how: verl_worker_check.py).

Here each step's gradient is compared with a float64 reference computed from scratch, without
verl: the same checkpoint in float64, the per-token log-probs of every response, verl's
dual-clip surrogate ``l_{i,t}`` against the same old log-probs, ``A`` from ``rlvr.advantages``
and ``w`` from ``rlvr.weights("balanced", ...)`` over the whole batch, and the step's loss
``S sum_{i in s} w_i sum_t l_{i,t}`` over the rows verl's ``ppo_loss`` really received in that
step (on every rank). Relative error ``|g_verl - g_ref| / |g_ref|`` (L2 over all parameters)
below TOL at every step; the S steps' gradients sum to S times the whole batch's BA gradient
(below TOL too); groups are split across steps (and, with 2 processes, across the ranks);
the same worker fed verl's plain GRPO advantage (token-mean) is off the reference by more than
NEGATIVE at every step (the check can fail). How verl is made to run on the CPU (a CPU
platform through verl's platform plugin API, import stubs, FSDP2): verl_worker_check.py.
"""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("verl")
pytest.importorskip("transformers")
pytest.importorskip("hydra")

import rlvr  # noqa: E402
import verl_worker_check as check  # noqa: E402

#: the relative L2 error allowed between verl's gradient and the float64 reference, both float64
#: (measured 2026-12-07 on a 2-core AMD EPYC VM, `scripts/test-python.sh -k verl_worker -s`: at
#: most 3.3e-15 in 1 process, 5.3e-15 in 2 over the 16 steps; the must-show's bar is 1e-6. In
#: float32, at 4 steps of 8 prompts, this check measured 8e-7 to 1.4e-6; with float64 weights
#: but transformers' float32 RMSNorm/RoPE/softmax left in, 2.8e-7: float32 rounding, see
#: verl_worker_check.llama_in_weights_dtype)
TOL = 1e-12
#: plain GRPO's token-mean must be off the reference by more than this at every step
NEGATIVE = 1e-2
SEED = 0

HERE = Path(__file__).resolve().parent


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _launch(nproc, shuffle, out, logs):
    """nproc processes of verl_worker_check.py with torchrun's environment (RANK, WORLD_SIZE,
    MASTER_ADDR, MASTER_PORT: one real gloo process group, env:// rendezvous), without
    torchrun's agent process; each process's output in logs/rank<r>.log."""
    port = str(_free_port())
    logs.mkdir()
    procs = []
    for rank in range(nproc):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(nproc),
                   LOCAL_WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1", MASTER_PORT=port, OMP_NUM_THREADS="1",
                   TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        cmd = [sys.executable, str(HERE / "verl_worker_check.py"), str(out), "1" if shuffle else "0", str(SEED)]
        with open(logs / f"rank{rank}.log", "w") as log:
            procs.append(subprocess.Popen(cmd, cwd=HERE, env=env, stdout=log, stderr=subprocess.STDOUT))
    return procs


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Both runs, launched together: 1 process (verl's shuffled iterator splits the groups) and
    2 processes (verl's length balancing over the ranks splits them)."""
    tmp = tmp_path_factory.mktemp("verl_worker")
    t0 = time.time()
    cases = {1: True, 2: False}
    launched = {n: _launch(n, shuffle, tmp / f"out{n}.pt", tmp / f"logs{n}") for n, shuffle in cases.items()}
    results = {}
    try:
        for n, procs in launched.items():
            for rank, proc in enumerate(procs):
                try:
                    proc.wait(timeout=max(1, 300 - (time.time() - t0)))
                except subprocess.TimeoutExpired:
                    pass
                if proc.returncode != 0:
                    log = (tmp / f"logs{n}" / f"rank{rank}.log").read_text()
                    pytest.fail(f"verl's worker in {n} process(es) failed or hung (rank {rank}, exit "
                                f"{proc.returncode}):\n{log[-6000:]}")
            results[n] = torch.load(tmp / f"out{n}.pt", weights_only=False)
            results[n]["wall_s"] = time.time() - t0
    finally:  # nothing left running (a failed or hung rank, the other run)
        for procs in launched.values():
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    return results


class Reference:
    """The float64 reference over one batch (module docstring), without verl."""

    def __init__(self, batch):
        self.model = check.load_model(torch.float64)
        self.names = [n for n, _ in self.model.named_parameters()]
        self.params = [p for _, p in self.model.named_parameters()]
        lens = batch["resp_len"].numpy()
        uid = np.array(batch["uid"])
        groups = np.unique(uid, return_inverse=True)[1]
        scores = batch["scores"].double().numpy()
        a = rlvr.advantages(groups, scores, estimator="grpo", std_scope="group")
        self.w = torch.as_tensor(rlvr.weights("balanced", lens, a, groups))
        self.groups = groups
        lo, hi, c = check.CLIP_LOW, check.CLIP_HIGH, check.CLIP_C
        # the gradient of sum_t l_{i,t} for every response i (one forward and backward each): a
        # step's reference gradient is then S sum_{i in s} w_i of these (the loss is linear in them)
        self.row_grads, clipped, tokens = [], 0, 0
        with check.llama_in_weights_dtype():
            for i in range(len(lens)):
                one = {"ids": batch["ids"][i : i + 1], "prompt_len": batch["prompt_len"][i : i + 1]}
                logp = check.response_log_probs(self.model, one)[0]
                mask = (torch.arange(check.MAX_RESPONSE) < int(lens[i])).double()
                ratio = torch.exp(logp - batch["old_log_probs"][i].double())
                A = float(a[i])
                loss = torch.maximum(-A * ratio, -A * torch.clamp(ratio, 1 - lo, 1 + hi))
                if A < 0:
                    loss = torch.minimum(loss, torch.full_like(loss, -A * c))
                grads = torch.autograd.grad((loss * mask).sum(), self.params)
                self.row_grads.append(torch.cat([g.flatten() for g in grads]))
                clipped += int((((ratio < 1 - lo) | (ratio > 1 + hi)) & (mask > 0)).sum())
                tokens += int(lens[i])
        self.row_grads = torch.stack(self.row_grads)
        # sanity: the clip is active on some tokens, not all
        assert 0 < clipped < tokens, clipped

    def grad(self, rows, scale):
        """Gradient of scale * sum_{i in rows} w_i sum_t l_{i,t}, flattened in parameter order."""
        rows = torch.as_tensor(rows)
        return scale * (self.w[rows].unsqueeze(1) * self.row_grads[rows]).sum(dim=0)

    def flat(self, grads):
        assert sorted(grads) == sorted(self.names), (sorted(grads), sorted(self.names))
        return torch.cat([grads[n].double().flatten() for n in self.names])


def rel(g, ref):
    return ((g - ref).norm() / ref.norm()).item()


@pytest.mark.parametrize("nproc", [1, 2])
def test_verl_worker_gradients_are_balanced_aggregation_at_every_step(runs, nproc):
    r = runs[nproc]
    assert r["world"] == nproc
    assert (r["engine"], r["module"]) == ("FSDPEngineWithLMHead", "FSDPLlamaForCausalLM")
    ref = Reference(r["batch"])
    S = check.STEPS
    bs = check.PROMPTS * check.N
    ba, grpo = r["rlvr_balanced"], r["grpo"]

    # verl's own path really ran: one train_mini_batch, S optimizer steps, every micro-batch's
    # loss through ppo_loss -> compute_policy_loss_vanilla -> agg_loss
    micro = S * nproc * (bs // S // nproc // check.MICRO)  # micro-batches of an epoch, all ranks
    for run in (ba, grpo):
        calls = run["calls"]
        assert calls["TrainingWorker.train_mini_batch"] == 1, calls
        for name in ("FSDPEngine.train_batch", "FSDPEngine.forward_backward_batch", "FSDPEngine.optimizer_step"):
            assert calls[name] == S, calls
        for name in ("ppo_loss", "compute_policy_loss_vanilla", "agg_loss"):
            assert calls[name] * nproc == micro, calls  # counted on process 0
        assert len(run["steps"]) == S
        assert {g.dtype for s in run["steps"] for g in s["grads"].values()} == {torch.float64}
        # every row in exactly one step
        assert sorted(i for s in run["steps"] for i in s["rows"]) == list(range(bs))

    # the cut rlvr's estimator replayed is the one verl's worker made
    assert [sorted(s) for s in ba["replayed_steps"]] == [s["rows"] for s in ba["steps"]]
    # groups really are split across the steps
    fragments = sum(1 for s in ba["steps"] for c in np.unique(ref.groups[s["rows"]], return_counts=True)[1]
                    if c != check.N)
    assert fragments > 0
    step_of = {i: j for j, s in enumerate(ba["steps"]) for i in s["rows"]}
    rank_of = {i: rank for rank, per_step in enumerate(ba["rows_per_rank"]) for rows in per_step for i in rows}
    members = [np.flatnonzero(ref.groups == g) for g in range(check.PROMPTS)]
    over_steps = sum(1 for m in members if len({step_of[i] for i in m}) > 1)
    over_ranks = sum(1 for m in members if len({rank_of[i] for i in m}) > 1)
    assert over_steps > 0
    if nproc > 1:
        assert over_ranks > 0

    errors, off = [], []
    for s_ba, s_grpo in zip(ba["steps"], grpo["steps"]):
        assert s_ba["rows"] == s_grpo["rows"]
        g_ref = ref.grad(s_ba["rows"], S)
        errors.append(rel(ref.flat(s_ba["grads"]), g_ref))
        off.append(rel(ref.flat(s_grpo["grads"]), g_ref))
    # the S steps sum to S x Balanced Aggregation of the whole batch
    total = sum(ref.flat(s["grads"]) for s in ba["steps"])
    sum_error = rel(total, S * ref.grad(list(range(bs)), 1.0))
    print(f"\nverl worker, {nproc} process(es), {S} optimizer steps, {fragments} group fragments "
          f"({over_steps} of {check.PROMPTS} groups split across steps, {over_ranks} across ranks): "
          f"BA gradient vs float64 reference max rel. error {max(errors):.1e} (steps: "
          f"{', '.join(f'{e:.1e}' for e in errors)}); steps' sum vs S x whole-batch BA {sum_error:.1e}; "
          f"plain GRPO token-mean off by {min(off):.2f}-{max(off):.2f}; "
          f"launch + init {r['init_s']:.0f} s, both updates {ba['update_s'] + grpo['update_s']:.1f} s, "
          f"wall {r['wall_s']:.0f} s")
    assert max(errors) < TOL, errors
    assert sum_error < TOL, sum_error
    assert min(off) > NEGATIVE, off
