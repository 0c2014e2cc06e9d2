"""Run by test_verl_worker.py as N processes with torchrun's environment (RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT; N = 1 or 2, one gloo process group on the CPU):
verl 0.9.1's own actor worker on a tiny random Llama, with rlvr's plugin.

    verl_worker_check.py OUT_PT SHUFFLE SEED

Every process builds verl's actor exactly as verl's trainer does (``ActorRolloutRefWorker(role=
"actor").init_model()`` from verl's Hydra-composed ``ppo_trainer`` config: the FSDP2 engine,
AdamW, ``ppo_loss``), then plays the trainer's part for one batch (built the same on every
process, seeded): the v1 trainer's length balancing over the data-parallel ranks
(``_balance_batch``: ``get_seqlen_balanced_partitions``), verl's ``compute_advantage`` (the
registered ``rlvr_balanced`` estimator, then plain ``grpo`` as the negative control), the legacy
trainer's ``_update_actor`` preparation (``left_right_2_no_padding``, the mini-batch keys; the
v1 trainer hands the worker the same rows through its TransferQueue, with the response fields
nested), the dispatcher's contiguous chunk per rank (``BatchData.chunk``, then a pickle round
trip as Ray's object store makes: the chunk is a locked TensorDict, the worker's copy is not),
and calls the worker's ``update_actor`` -> ``TrainingWorker.train_mini_batch`` ->
``FSDPEngine.train_batch`` -> ``forward_backward_batch`` -> ``ppo_loss`` ->
``compute_policy_loss_vanilla`` -> ``agg_loss``, then FSDP2's reduce-scatter, verl's gradient
clipping and the optimizer step. The learning rate is 0, so every optimizer step sees the same
parameters (AdamW with lr 0 leaves them exactly as they are) and the steps' gradients can be
compared with one reference; ``optim.clip_grad`` is set out of reach (clipping would rescale a
whole step's gradient, outside the loss; verl multiplies by a clip coefficient of exactly 1).

Recorded (process 0 writes them): at each optimizer step, the full gradient the optimizer is
about to apply (an optimizer step pre-hook; FSDP2's sharded gradients gathered with
``full_tensor()``, i.e. after the data-parallel reduce), the rows (ids of the original batch)
that verl's ``ppo_loss`` received in that step's micro-batches on every rank, the cut rlvr's
estimator replayed (``rlvr.verl.last_steps``), and how often verl's functions on the path were
called (wrappers that count and pass through; the one around ``ppo_loss`` also notes the
micro-batch's row ids, an extra ``rlvr_row`` key that verl's loss does not read).

What this process changes in verl to run on a CPU (nothing on the loss's path):
- a CPU platform registered with verl's platform plugin API (``verl.plugin.platform.set_platform``:
  device ``cpu``, collective backend ``gloo``; verl 0.9.1 ships CUDA, NPU and ROCm platforms
  only), and ``VERL_ENGINE_DEVICE=cuda`` (verl's own override) so that verl's engine registry
  hands out the FSDP engine it registers for ``cuda``/``npu``;
- ``uvicorn``, ``fastapi``, ``peft``, ``torchdata`` and ``cachetools`` stubbed when they are not
  installed (verl is installed with ``--no-deps``; the rollout server, LoRA, the dataloader and
  the rollout router import them at module level, from ``engine_workers`` and ``ray_trainer``;
  none of them runs here, and a stub raises if called);
- ``verl.models.transformers.monkey_patch.is_trl_available`` answers False: the TRL 1.16 that
  the TRL tests need has no ``AutoModelForCausalLMWithValueHead``, which verl's patch for value
  heads imports whenever TRL is installed (the actor has no value head);
- strategy ``fsdp2`` (verl's other FSDP strategy): FSDP1 refuses ``sync_module_states=True``
  with parameters on the CPU ("requires them to be on GPU"), which verl's FSDP1 engine always
  sets; ``use_remove_padding=false`` and ``attn_implementation=eager`` (no flash-attention on
  a CPU).

Precision: float64 end to end, so that the comparison is at float64 rounding (1e-15), not
float32's (1e-6). verl's own keys set it: ``fsdp_config.model_dtype=fp64`` (the weights) and
``fsdp_config.mixed_precision`` ``fp64`` (FSDP2's param and reduce dtypes); the batch
the trainer hands over holds float64 rewards (so verl's ``compute_advantage`` and rlvr's
estimator produce float64 advantages) and float64 old log-probs. Two things outside verl's
loss path make that possible:
- verl's dtype table, ``verl.utils.torch_dtypes.PrecisionType.to_dtype`` (what the engine reads
  ``model_dtype`` and ``mixed_precision`` through), maps fp16, fp32 and bf16 only, though
  ``PrecisionType`` names ``FULL = "64"``; this process adds ``fp64`` to it. FSDP2's engine then
  enters ``torch.autocast(cpu, float64)``, which torch disables with a warning (CPU autocast
  knows bf16/fp16 only): a no-op, as verl's own fp32 branch is;
- transformers' Llama computes RMSNorm, RoPE and the attention softmax in float32 whatever the
  weights' dtype; ``llama_in_weights_dtype`` (on both sides, verl's processes and the test's
  reference) computes them in float64 for float64 weights.
"""

import os
import pickle
import sys
import time
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import numpy as np
import torch

FIXTURE = Path(__file__).resolve().parents[2] / "crates/rlvr-model/tests/fixtures/llama-tiny"

#: the batch: PROMPTS groups of N responses, STEPS optimizer steps of PROMPTS / STEPS prompts
PROMPTS, N, STEPS = 16, 4, 16
MAX_PROMPT, MAX_RESPONSE = 6, 10
MICRO = 2  # ppo_micro_batch_size_per_gpu
CLIP_LOW, CLIP_HIGH, CLIP_C = 0.2, 0.28, 3.0


def load_model(dtype):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(FIXTURE), dtype=dtype, attn_implementation="eager")


@contextmanager
def llama_in_weights_dtype():
    """transformers' Llama computes three things in float32 whatever the weights' dtype: RMSNorm,
    RoPE's cos/sin and the eager attention's softmax (an upcast for bf16 weights, a downcast for
    float64 ones). Their float32 roundings are 1e-7 apart between two float64 runs whose inputs
    differ at 1e-16, and they do: verl runs padded micro-batches, the reference one sequence at
    a time (measured: 1.3e-7 relative between the two layouts' logits, 8.6e-16 with this). Inside,
    the three compute in the wider of float32 and the weights' dtype, the same formulas
    otherwise: float64 end to end for float64 weights, nothing changed for float32 weights. Used
    on both sides (verl's processes, the reference); nothing of verl's is touched."""
    import transformers.models.llama.modeling_llama as llama
    from torch import nn

    def wide(dtype):
        return torch.promote_types(dtype, torch.float32)

    def rms_norm(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(wide(input_dtype))
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)

    def rope(self, x, position_ids):  # the default rope type (the fixture's)
        w = wide(x.dtype)
        freqs = position_ids[..., None].to(w) * self.inv_freq.to(device=x.device, dtype=w)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos() * self.attention_scaling
        sin = emb.sin() * self.attention_scaling
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)

    def eager_attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
        key_states = llama.repeat_kv(key, module.num_key_value_groups)
        value_states = llama.repeat_kv(value, module.num_key_value_groups)
        attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=wide(query.dtype)).to(query.dtype)
        attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)
        attn_output = torch.matmul(attn_weights, value_states)
        return attn_output.transpose(1, 2).contiguous(), attn_weights

    saved = (llama.LlamaRMSNorm.forward, llama.LlamaRotaryEmbedding.forward, llama.eager_attention_forward)
    llama.LlamaRMSNorm.forward, llama.LlamaRotaryEmbedding.forward = rms_norm, rope
    llama.eager_attention_forward = eager_attention
    try:
        yield
    finally:
        llama.LlamaRMSNorm.forward, llama.LlamaRotaryEmbedding.forward, llama.eager_attention_forward = saved


def response_log_probs(model, batch):
    """log pi(token) of every response token, one sequence at a time (no padding), as a
    (rows, MAX_RESPONSE) tensor in the model's dtype, zero past each response."""
    rows = []
    for ids, p in zip(batch["ids"], batch["prompt_len"].tolist()):
        logits = model(input_ids=ids.unsqueeze(0), position_ids=torch.arange(len(ids)).unsqueeze(0)).logits[0]
        lp = torch.log_softmax(logits[p - 1 : len(ids) - 1], dim=-1).gather(-1, ids[p:].unsqueeze(-1)).squeeze(-1)
        rows.append(torch.nn.functional.pad(lp, (0, MAX_RESPONSE - len(lp))))
    return torch.stack(rows)


def build_batch(seed=0):
    """A GRPO batch: PROMPTS prompts (random tokens, lengths 2..MAX_PROMPT) with N responses each
    (lengths 1..MAX_RESPONSE), binary rewards (one group all correct, the rest random), and old
    log-probs = the model's own (float32) + U(-0.3, 0.3), so that the clip is active on some tokens."""
    g = torch.Generator().manual_seed(seed)
    bs = PROMPTS * N
    vocab = 272
    prompt_len = torch.randint(2, MAX_PROMPT + 1, (PROMPTS,), generator=g).repeat_interleave(N)
    prompt_ids = torch.randint(3, vocab, (PROMPTS, MAX_PROMPT), generator=g).repeat_interleave(N, dim=0)
    resp_len = torch.randint(1, MAX_RESPONSE + 1, (bs,), generator=g)
    resp_len[0] = MAX_RESPONSE
    ids = [torch.cat([prompt_ids[i, : prompt_len[i]], torch.randint(3, vocab, (int(resp_len[i]),), generator=g)])
           for i in range(bs)]
    scores = torch.randint(0, 2, (bs,), generator=g).float()
    scores[:N] = 1.0  # one group all correct: zero advantages
    uid = [f"prompt-{i // N}" for i in range(bs)]
    batch = dict(ids=ids, prompt_len=prompt_len, resp_len=resp_len, scores=scores, uid=uid)
    with torch.no_grad():
        logp = response_log_probs(load_model(torch.float32), batch)
    mask = (torch.arange(MAX_RESPONSE).unsqueeze(0) < resp_len.unsqueeze(1)).float()
    batch["old_log_probs"] = (logp + 0.6 * (torch.rand(bs, MAX_RESPONSE, generator=g) - 0.5)) * mask
    return batch


# ----------------------------------------------------------------------------------------------
# the rest runs only in the torchrun processes


def _cpu_verl():
    """What verl needs to run on a CPU (module docstring); before any verl worker module loads."""
    import importlib.abc
    import importlib.machinery
    import importlib.util
    import types
    from contextlib import contextmanager

    stubs = ("uvicorn", "fastapi", "peft", "torchdata", "cachetools")
    stubs = tuple(m for m in stubs if importlib.util.find_spec(m) is None)

    class Stub(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)

            def unavailable(*args, **kwargs):
                raise RuntimeError(f"{self.__name__}.{name} is a stub (not installed)")

            value = type(name, (), {"__init__": unavailable})
            setattr(self, name, value)
            return value

    class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname, path, target=None):
            if fullname.split(".")[0] in stubs:
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            return None

        def create_module(self, spec):
            return Stub(spec.name)

        def exec_module(self, module):
            module.__path__ = []

    sys.meta_path.append(StubFinder())

    from verl.plugin.platform import PlatformBase, set_platform

    memory = types.SimpleNamespace(
        is_available=lambda: True, current_device=lambda: "cpu", device_count=lambda: 1,
        get_device_name=lambda *a: "CPU",
        set_device=lambda *a: None, synchronize=lambda *a: None, empty_cache=lambda: None,
        memory_allocated=lambda *a: 0, memory_reserved=lambda *a: 0, max_memory_allocated=lambda *a: 0,
        max_memory_reserved=lambda *a: 0, mem_get_info=lambda *a: (0, 0),
        set_per_process_memory_fraction=lambda *a: None, manual_seed=lambda *a: None,
        manual_seed_all=lambda *a: None,
    )

    class PlatformCPU(PlatformBase):
        device_name = "cpu"
        vendor_name = "cpu"
        device_module = memory

        def is_available(self):
            return True

        def current_device(self):
            return torch.device("cpu")

        def device_count(self):
            return 1

        def set_device(self, device_index):
            pass

        def synchronize(self, device_index=None):
            pass

        def manual_seed(self, seed):
            torch.manual_seed(seed)

        def manual_seed_all(self, seed):
            torch.manual_seed(seed)

        def set_allocator_settings(self, settings):
            pass

        def empty_cache(self):
            pass

        def get_device_capability(self, device_index=0):
            return None, None

        def communication_backend_name(self):
            return "gloo"

        def visible_devices_envvar(self):
            return "CUDA_VISIBLE_DEVICES"

        @contextmanager
        def nvtx_range(self, msg):
            yield

        def profiler_start(self):
            pass

        def profiler_stop(self):
            pass

        def ray_resource_name(self):
            return "CPU"

        def ray_noset_envvars(self):
            return []

        def is_ipc_supported(self):
            return False

        def cudart(self):
            return None

    set_platform(PlatformCPU())
    os.environ["VERL_ENGINE_DEVICE"] = "cuda"

    # float64: verl's dtype table (PrecisionType.to_dtype, read for fsdp_config.model_dtype and
    # mixed_precision) maps fp16, fp32 and bf16 only, though its PrecisionType names FULL = "64"
    from verl.utils.torch_dtypes import PrecisionType

    to_dtype = PrecisionType.to_dtype

    def to_dtype_with_fp64(precision):
        return torch.float64 if precision in ("fp64", "float64", "64", 64, torch.float64) else to_dtype(precision)

    PrecisionType.to_dtype = staticmethod(to_dtype_with_fp64)

    import verl.models.transformers.monkey_patch as monkey_patch

    monkey_patch.is_trl_available = lambda: False
    import verl.workers.engine.fsdp.transformer_impl as fsdp_impl

    assert fsdp_impl.device_name == "cpu", fsdp_impl.device_name


class Calls:
    """Call counts of verl's functions on the path (wrappers that count and pass through)."""

    def __init__(self):
        self.counts = {}
        self.micro_rows = []  # rows ppo_loss received, one entry per micro-batch

    def wrap(self, name, fn, record_rows=False):
        def wrapper(*args, **kwargs):
            self.counts[name] = self.counts.get(name, 0) + 1
            if record_rows:
                self.micro_rows.append(kwargs["data"]["rlvr_row"].tolist())
            return fn(*args, **kwargs)

        wrapper.__wrapped__ = fn
        return wrapper


def config(world, shuffle):
    import verl
    from hydra import compose, initialize_config_dir

    overrides = [
        "algorithm.adv_estimator=rlvr_balanced",
        f"data.train_batch_size={PROMPTS}",
        f"actor_rollout_ref.rollout.n={N}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={PROMPTS // STEPS}",
        f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={MICRO}",
        f"actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu={MICRO}",
        f"actor_rollout_ref.actor.shuffle={str(shuffle).lower()}",
        f"actor_rollout_ref.actor.clip_ratio_low={CLIP_LOW}",
        f"actor_rollout_ref.actor.clip_ratio_high={CLIP_HIGH}",
        f"actor_rollout_ref.actor.clip_ratio_c={CLIP_C}",
        f"trainer.n_gpus_per_node={world}",
        "trainer.nnodes=1",
        f"actor_rollout_ref.model.path={FIXTURE}",
        # CPU: no flash-attention, no packed sequences; FSDP2 (module docstring)
        "actor_rollout_ref.model.use_remove_padding=false",
        "+actor_rollout_ref.model.override_config.attn_implementation=eager",
        "actor_rollout_ref.actor.strategy=fsdp2",
        # float64 end to end: the weights, FSDP2's compute and reduce (module docstring)
        "actor_rollout_ref.actor.fsdp_config.model_dtype=fp64",
        "+actor_rollout_ref.actor.fsdp_config.mixed_precision="
        "{param_dtype: fp64, reduce_dtype: fp64, buffer_dtype: fp64}",
        "actor_rollout_ref.actor.use_torch_compile=false",
        "actor_rollout_ref.actor.fsdp_config.use_torch_compile=false",
        # every step at the same parameters, no clipping (module docstring)
        "actor_rollout_ref.actor.optim.lr=0.0",
        "actor_rollout_ref.actor.optim.clip_grad=1.0e30",
    ]
    with initialize_config_dir(config_dir=os.path.join(os.path.dirname(verl.__file__), "trainer", "config"),
                               version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


def trainer_batch(batch, cfg, estimator, world):
    """The trainer's part: the padded batch verl's rollout would hand over, balanced over the
    ranks (the v1 trainer's _balance_batch), its advantage (verl's compute_advantage with the
    estimator from verl's registry) and the legacy trainer's _update_actor preparation.
    Returns the TensorDict update_actor receives (all ranks) and the balanced order."""
    from verl import DataProto
    from verl.trainer.ppo.ray_trainer import compute_advantage
    from verl.utils import tensordict_utils as tu
    from verl.utils.model import compute_position_id_with_mask
    from verl.utils.seqlen_balancing import calculate_workload, get_seqlen_balanced_partitions
    from verl.workers.utils.padding import left_right_2_no_padding

    bs = len(batch["ids"])
    prompts = torch.zeros(bs, MAX_PROMPT, dtype=torch.long)
    responses = torch.zeros(bs, MAX_RESPONSE, dtype=torch.long)
    attention = torch.zeros(bs, MAX_PROMPT + MAX_RESPONSE, dtype=torch.long)
    rewards = torch.zeros(bs, MAX_RESPONSE, dtype=torch.float64)  # float64: the advantage too
    for i, ids in enumerate(batch["ids"]):
        p, r = int(batch["prompt_len"][i]), int(batch["resp_len"][i])
        prompts[i, MAX_PROMPT - p :] = ids[:p]  # left-padded prompt
        responses[i, :r] = ids[p:]  # right-padded response
        attention[i, MAX_PROMPT - p : MAX_PROMPT + r] = 1
        rewards[i, r - 1] = batch["scores"][i]
    data = DataProto.from_dict(
        tensors={
            "prompts": prompts,
            "responses": responses,
            "input_ids": torch.cat([prompts, responses], dim=1),
            "attention_mask": attention,
            "position_ids": compute_position_id_with_mask(attention),
            "response_mask": attention[:, MAX_PROMPT:].clone(),
            "old_log_probs": batch["old_log_probs"].double(),
            "token_level_scores": rewards,
            "token_level_rewards": rewards.clone(),
            "rlvr_row": torch.arange(bs),  # the original row id, to see where each row goes
        },
        non_tensors={"uid": np.array(batch["uid"], dtype=object)},
    )
    # the v1 trainer's _balance_batch: equal-size partitions of the workload over the dp ranks
    seqlen = (batch["prompt_len"] + batch["resp_len"]).long()
    parts = get_seqlen_balanced_partitions(calculate_workload(seqlen), k_partitions=world, equal_size=True)
    order = [j for part in parts for j in part]
    data.reorder(torch.tensor(order))
    data = compute_advantage(data, adv_estimator=estimator, num_repeat=N,
                             norm_adv_by_std_in_grpo=cfg.algorithm.norm_adv_by_std_in_grpo, config=cfg.algorithm)
    # the legacy trainer's _update_actor
    data.meta_info["temperature"] = cfg.actor_rollout_ref.rollout.temperature
    keep = ["prompts", "responses", "input_ids", "attention_mask", "position_ids", "response_mask",
            "old_log_probs", "advantages", "rlvr_row"]
    td = data.select(batch_keys=keep, non_tensor_batch_keys=[], meta_info_keys=["temperature"]).to_tensordict()
    td = left_right_2_no_padding(td)
    actor = cfg.actor_rollout_ref.actor
    mini = actor.ppo_mini_batch_size * cfg.actor_rollout_ref.rollout.n
    tu.assign_non_tensor(td, calculate_entropy=False, distillation_use_topk=False, distillation_only=False,
                         global_batch_size=mini, mini_batch_size=mini, epochs=actor.ppo_epochs,
                         seed=actor.data_loader_seed, dataloader_kwargs={"shuffle": actor.shuffle},
                         compute_loss=True)
    return td, order


def main():
    out_pt, shuffle, seed = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
    t0 = time.time()
    _cpu_verl()
    import torch.distributed as dist

    dist.init_process_group("gloo", timeout=timedelta(seconds=240))  # a rank that dies does not hang the rest
    rank, world = dist.get_rank(), dist.get_world_size()

    import verl.trainer.ppo.core_algos as core_algos
    import verl.workers.engine.fsdp.transformer_impl as fsdp_impl
    import verl.workers.engine_workers as engine_workers
    from verl.protocol import BatchData

    import rlvr.verl

    calls = Calls()
    # count (and pass through) verl's functions on the path; ppo_loss also records its rows
    engine_workers.ppo_loss = calls.wrap("ppo_loss", engine_workers.ppo_loss, record_rows=True)
    core_algos.agg_loss = calls.wrap("agg_loss", core_algos.agg_loss)
    core_algos.POLICY_LOSS_REGISTRY["vanilla"] = calls.wrap(
        "compute_policy_loss_vanilla", core_algos.POLICY_LOSS_REGISTRY["vanilla"])
    for cls, name in [(engine_workers.TrainingWorker, "train_mini_batch"), (fsdp_impl.FSDPEngine, "train_batch"),
                      (fsdp_impl.FSDPEngine, "forward_backward_batch"), (fsdp_impl.FSDPEngine, "optimizer_step")]:
        setattr(cls, name, calls.wrap(f"{cls.__name__}.{name}", getattr(cls, name)))

    cfg = config(world, shuffle)
    worker = engine_workers.ActorRolloutRefWorker(cfg.actor_rollout_ref, role="actor")
    worker.init_model()
    engine = worker.actor.engine
    names = {id(p): n for n, p in engine.module.named_parameters()}
    steps = []

    def before_step(optimizer, args, kwargs):
        grads = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                grads[names[id(p)]] = (g.full_tensor() if hasattr(g, "full_tensor") else g).detach().clone()
        steps.append({"grads": grads, "micro_rows": len(calls.micro_rows)})

    engine.optimizer.register_step_pre_hook(before_step)
    t_init = time.time() - t0

    batch = build_batch(seed)  # the same on every process (seeded; the model's own log-probs)
    results = {"world": world, "shuffle": shuffle, "batch": batch, "engine": type(engine).__name__,
               "module": type(engine.module).__name__, "init_s": t_init}
    for estimator in ("rlvr_balanced", "grpo"):
        td, order = trainer_batch(batch, cfg, estimator, world)
        replayed = rlvr.verl.last_steps if estimator == "rlvr_balanced" else None
        # the dispatcher's contiguous chunk, through a pickle round trip as Ray's object store
        # hands it to the worker (BatchData.chunk returns a locked, consolidated TensorDict; the
        # worker's copy is a fresh, unlocked one)
        local = pickle.loads(pickle.dumps(BatchData(td).chunk(chunks=world)[rank]))
        steps.clear()
        calls.micro_rows.clear()
        start = dict(calls.counts)
        t1 = time.time()
        worker.update_actor(local)
        # the rows of each optimizer step on every rank: ppo_loss's micro-batches between two steps
        bounds = [0] + [s["micro_rows"] for s in steps]
        mine = [sorted(r for mb in calls.micro_rows[a:b] for r in mb) for a, b in zip(bounds, bounds[1:])]
        gathered = [None] * world
        dist.all_gather_object(gathered, mine)
        results[estimator] = {
            "order": order,
            "replayed_steps": None if replayed is None else [[order[k] for k in s] for s in replayed],
            "steps": [{"rows": sorted(r for per_rank in gathered for r in per_rank[j]), "grads": s["grads"]}
                      for j, s in enumerate(steps)],
            "rows_per_rank": gathered,
            "calls": {k: v - start.get(k, 0) for k, v in calls.counts.items()},
            "update_s": time.time() - t1,
        }
    results["total_s"] = time.time() - t0
    if rank == 0:
        torch.save(results, out_pt)
    # leave the process group before the interpreter tears down (gloo's threads at exit can abort)
    dist.barrier()
    dist.destroy_process_group()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    with llama_in_weights_dtype():
        main()
