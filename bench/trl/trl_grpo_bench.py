#!/usr/bin/env python
"""Time Hugging Face TRL's GRPOTrainer on the CPU, step by step and phase by phase.

    python trl_grpo_bench.py --model bench/out/models/bench-tiny [--max-steps 6] [--mode trl|components|all]
                             [--prompts 8] [--generations 8] [--new-tokens 128]

The work (workload.py) is the one `rlvr bench grpo` runs with the same options: --prompts P
(default 8) x --generations G (default 8) completions of exactly --new-tokens N (default 128) new
tokens per step, temperature 1 (top-p 1, no top-k), seeded random 0/1 rewards (never all equal
within a step), token-mean loss (TRL's loss_type "dapo"), beta 0 (no reference model), one
optimizer step per generation round (P*G sequences, 64 by default, per device batch, one
generation batch, one iteration, no accumulation: exactly on-policy), AdamW at lr 1e-6 with
TRL's and Trainer's other defaults (gradient clipping at 1.0, linear schedule, no warm-up),
f32 on the CPU, gradient checkpointing off unless --gradient-checkpointing (TRL's own default
is on).

Modes:
  trl         GRPOTrainer.train() for --max-steps steps. A TrainerCallback times each step; the
              phases are TRL's own profiling contexts (transformers.generate, _prepare_inputs,
              compute_loss, ...), plus the backward pass, the gradient clipping (clip_grad_norm) and
              optimizer.step, timed here. The first
              step is a warm-up: it is kept in the JSON but left out of the summaries.
  components  the parts alone: model.generate for the same P*G x N tokens (KV cache, sampling),
              one forward+backward over P*G x (12 + N) tokens with the log-softmax of the
              completion positions, and one fused AdamW step; --warmup untimed and --reps timed
              repetitions each.
  all         both (the default).

Writes one JSON file (--out; default bench/out/results/<model>_<mode>.json, with _PxGxN before
.json when the work is not the default; its "work" records P, G and N) and prints a line
"TRL GRPO <model> (PxGxN): median step ..." that bench/compare_trl.sh looks for.
"""
import argparse
import json
import os
import platform
import random
import resource
import statistics
import sys
import time

import torch

from workload import LEARNING_RATE, Work, add_work_arguments, make_prompts, work_from_args

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATE = "transformers.generate"  # TRL's name for the generation phase


# --------------------------------------------------------------------------------- what was measured
def summarize(xs):
    if not xs:
        return None
    return {"n": len(xs), "min": min(xs), "median": statistics.median(xs), "max": max(xs),
            "mean": statistics.fmean(xs)}


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def versions():
    import accelerate
    import numpy
    import tokenizers
    import transformers
    import trl
    return {
        "python": sys.version.split()[0], "torch": torch.__version__, "transformers": transformers.__version__,
        "trl": trl.__version__, "accelerate": accelerate.__version__, "tokenizers": tokenizers.__version__,
        "numpy": numpy.__version__, "platform": platform.platform(), "cpu": cpu_name(),
        "os_cpu_count": os.cpu_count(), "torch_num_threads": torch.get_num_threads(),
        "torch_num_interop_threads": torch.get_num_interop_threads(),
        "mkldnn": torch.backends.mkldnn.is_available(), "mkl": torch.backends.mkl.is_available(),
        "cuda_available": torch.cuda.is_available(),
    }


def rusage_between(before, after, wall):
    """This process's CPU time between two getrusage snapshots (system time: page faults and the like)."""
    return {"wall_s": wall, "user_s": after.ru_utime - before.ru_utime, "sys_s": after.ru_stime - before.ru_stime,
            "minor_page_faults": after.ru_minflt - before.ru_minflt, "max_rss_mb": after.ru_maxrss / 1024}


def forward_flops_per_token(cfg, attended: float):
    """About 2 FLOP per weight of the linear layers (the tied LM head included), plus the attention's
    scores and weighted values over `attended` positions on average."""
    h, layers, vocab = cfg.hidden_size, cfg.num_hidden_layers, cfg.vocab_size
    kv = cfg.num_key_value_heads * (h // cfg.num_attention_heads)
    linear = layers * (h * h + 2 * h * kv + h * h + 3 * h * cfg.intermediate_size) + h * vocab
    attention = layers * 2 * 2 * h * attended
    return 2 * linear + attention


# ---------------------------------------------------------------------------------- TRL's GRPOTrainer
class PhaseRecorder:
    """Collects (phase, seconds) for the step in progress from TRL's ProfilingContext, which times
    every phase it profiles and hands the duration to `_log_metrics`."""

    def __init__(self):
        import trl.extras.profiling as profiling
        self.events = []
        self._context = profiling.ProfilingContext
        self._original = self._context._log_metrics
        recorder = self

        def log_metrics(context, duration):
            # "GRPOTrainer.transformers.generate" -> "transformers.generate"
            recorder.events.append((context.name.split(".", 1)[-1], duration))
            return recorder._original(context, duration)

        self._context._log_metrics = log_metrics

    def add(self, name, seconds):
        self.events.append((name, seconds))

    def totals(self):
        out = {}
        for name, seconds in self.events:
            out[name] = out.get(name, 0.0) + seconds
        return out

    def close(self):
        self._context._log_metrics = self._original


def make_step_timer(recorder):
    """A TrainerCallback timing each step (on_step_begin to on_step_end) and optimizer.step."""
    from transformers import TrainerCallback

    class StepTimer(TrainerCallback):
        def __init__(self):
            self.steps = []
            self._begin = self._optimizer_begin = self._last_end = None

        def on_step_begin(self, args, state, control, **kwargs):
            recorder.events.clear()
            self._begin = time.perf_counter()

        def on_pre_optimizer_step(self, args, state, control, **kwargs):
            self._optimizer_begin = time.perf_counter()

        def on_optimizer_step(self, args, state, control, **kwargs):
            recorder.add("optimizer.step", time.perf_counter() - self._optimizer_begin)

        def on_step_end(self, args, state, control, **kwargs):
            end = time.perf_counter()
            phases = recorder.totals()
            self.steps.append({"step": state.global_step, "seconds": end - self._begin, "phases": phases,
                               "end_to_end_seconds": None if self._last_end is None else end - self._last_end})
            self._last_end = end
            print(f"[step {state.global_step}] {end - self._begin:.3f} s  "
                  + " ".join(f"{k}={v:.3f}" for k, v in phases.items()), flush=True)

    return StepTimer()


def random_reward_function(seed, seen_lengths, seen_eos):
    """Seeded random 0/1 rewards, one flipped when all are equal (so every step has a signal);
    records each completion's length and whether it holds end-of-sequence (id 0)."""
    rng = random.Random(seed + 7)

    def random_reward(prompts, completions, completion_ids, **kwargs):
        seen_lengths.extend(len(c) for c in completion_ids)
        seen_eos.extend(int(0 in c) for c in completion_ids)
        rewards = [float(rng.random() < 0.5) for _ in completions]
        if len(set(rewards)) == 1:
            rewards[0] = 1.0 - rewards[0]
        return rewards

    return random_reward


def grpo_config(args, work: Work):
    from trl import GRPOConfig
    return GRPOConfig(
        output_dir=os.path.join(args.workdir, "trl_output", os.path.basename(args.model.rstrip("/"))),
        # --bf16: TRL's bf16=True on the CPU (autocast: bf16 products, f32 master weights)
        use_cpu=True, bf16=args.bf16, fp16=False,
        gradient_checkpointing=args.gradient_checkpointing,
        # one optimizer step per generation round: the whole P*G-sequence batch in one device batch
        # (so generation_batch_size = P*G too: one generation batch per step)
        per_device_train_batch_size=work.batch, gradient_accumulation_steps=1, steps_per_generation=1,
        num_generations=work.generations, num_iterations=1,
        # exactly N tokens per completion: end-of-sequence cannot stop one earlier
        max_completion_length=work.new_tokens, generation_kwargs={"min_new_tokens": work.new_tokens},
        temperature=1.0, top_p=1.0, top_k=0,
        loss_type="dapo", beta=0.0, learning_rate=LEARNING_RATE,
        max_steps=args.max_steps, logging_steps=1, report_to="none", save_strategy="no",
        disable_tqdm=True, seed=args.seed, dataloader_num_workers=0,
    )


def run_trl(args, work: Work, out):
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOTrainer

    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    prompts = make_prompts(n=work.pool)
    dataset = datasets.Dataset.from_list([{"prompt": p} for p in prompts])
    lengths, eos = [], []
    cfg = grpo_config(args, work)
    assert cfg.generation_batch_size == work.batch, (cfg.generation_batch_size, work.batch)

    recorder = PhaseRecorder()
    trainer = GRPOTrainer(model=model, reward_funcs=random_reward_function(args.seed, lengths, eos), args=cfg,
                          train_dataset=dataset, processing_class=tok)
    timer = make_step_timer(recorder)
    trainer.add_callback(timer)
    backward = trainer.accelerator.backward

    def timed_backward(loss, **kwargs):
        begin = time.perf_counter()
        result = backward(loss, **kwargs)
        recorder.add("backward", time.perf_counter() - begin)
        return result

    trainer.accelerator.backward = timed_backward
    # Trainer clips (global norm at max_grad_norm) just before on_pre_optimizer_step: timed
    # here so that the optimizer phase can be clipping + optimizer.step, as rlvr's is
    clip = trainer._clip_grad_norm

    def timed_clip(model):
        begin = time.perf_counter()
        result = clip(model)
        recorder.add("clip_grad_norm", time.perf_counter() - begin)
        return result

    trainer._clip_grad_norm = timed_clip

    usage_before, begin = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    trainer.train()
    train_seconds = time.perf_counter() - begin
    usage = rusage_between(usage_before, resource.getrusage(resource.RUSAGE_SELF), train_seconds)
    recorder.close()

    steps = timer.steps
    timed = steps[1:]  # the first step is the warm-up
    seconds = [s["seconds"] for s in timed]
    median_step = statistics.median(seconds)
    phases = {name: summarize([s["phases"].get(name, 0.0) for s in timed])
              for name in sorted({k for s in timed for k in s["phases"]})}
    tokens_per_step = work.completion_tokens
    out["trl"] = {
        "settings": {
            "n_prompts": work.pool, "prompts_per_step": work.prompts, "num_generations": cfg.num_generations,
            "completions_per_step": work.batch, "max_completion_length": cfg.max_completion_length,
            "min_new_tokens": cfg.generation_kwargs["min_new_tokens"],
            "prompt_token_lengths": sorted({len(tok(p)["input_ids"]) for p in prompts}),
            "example_prompt": prompts[0],
            "per_device_train_batch_size": cfg.per_device_train_batch_size,
            "generation_batch_size": cfg.generation_batch_size, "steps_per_generation": cfg.steps_per_generation,
            "gradient_accumulation_steps": cfg.gradient_accumulation_steps, "num_iterations": cfg.num_iterations,
            "temperature": cfg.temperature, "top_p": cfg.top_p, "top_k": cfg.top_k, "loss_type": cfg.loss_type,
            "beta": cfg.beta, "learning_rate": cfg.learning_rate, "optim": str(cfg.optim),
            "max_grad_norm": cfg.max_grad_norm, "lr_scheduler_type": str(cfg.lr_scheduler_type),
            "gradient_checkpointing": cfg.gradient_checkpointing, "bf16": cfg.bf16, "use_cpu": cfg.use_cpu,
            "max_steps": cfg.max_steps, "seed": cfg.seed, "device": str(cfg.device),
            "attn_implementation": trainer.model.config._attn_implementation,
            "model_dtype": str(next(trainer.model.parameters()).dtype),
        },
        "train_wall_seconds": train_seconds,
        "train_rusage": usage,
        "steps": steps,
        "step_seconds_excl_warmup": summarize(seconds),
        "step_seconds_excl_first_two": summarize([s["seconds"] for s in steps[2:]]),
        "completion_tokens_per_step": tokens_per_step,
        "completion_tokens_per_second_at_median": tokens_per_step / median_step,
        "phases_excl_warmup": phases,
        "generation_seconds_median": phases[GENERATE]["median"] if GENERATE in phases else None,
        "generation_tokens_per_second_at_median":
            tokens_per_step / phases[GENERATE]["median"] if GENERATE in phases else None,
        # the step less the input preparation (which holds the generation)
        "non_generation_seconds": summarize([s["seconds"] - s["phases"].get("_prepare_inputs", 0.0) for s in timed]),
        "completion_length_observed": {"min": min(lengths), "max": max(lengths), "n": len(lengths)},
        "completions_containing_eos": sum(eos),
        "trl_logged_metrics": [h for h in trainer.state.log_history if "completions/mean_length" in h],
    }
    result = out["trl"]
    print(f"\nTRL GRPO {args.model} ({work.tag}): median step {median_step:.3f} s (min {min(seconds):.3f}, max {max(seconds):.3f})"
          f" over {len(seconds)} steps; {result['completion_tokens_per_second_at_median']:.1f} completion tok/s; "
          f"completion lengths {result['completion_length_observed']}", flush=True)


# ------------------------------------------------------------------------------------ the parts alone
def time_generation(args, work: Work, model, tok, out):
    """model.generate on a step's P prompts x G, exactly N new tokens each."""
    prompts = [p for p in make_prompts(n=work.pool)[:work.prompts] for _ in range(work.generations)]
    batch = tok(prompts, return_tensors="pt", padding=True)
    prompt_len = batch["input_ids"].shape[1]
    model.eval()
    seconds, new_lengths = [], []
    for i in range(args.warmup + args.reps):
        torch.manual_seed(args.seed + i)
        begin = time.perf_counter()
        with torch.no_grad():
            sequences = model.generate(**batch, do_sample=True, temperature=1.0, top_p=1.0, top_k=0,
                                       max_new_tokens=work.new_tokens, min_new_tokens=work.new_tokens,
                                       use_cache=True,
                                       pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                                       disable_compile=True)
        elapsed = time.perf_counter() - begin
        new_lengths.append(sequences.shape[1] - prompt_len)
        if i >= args.warmup:
            seconds.append(elapsed)
    s = summarize(seconds)
    flops = work.completion_tokens * forward_flops_per_token(model.config, prompt_len + work.new_tokens / 2)
    out.update(prompt_len=prompt_len, batch=work.batch, new_tokens=work.new_tokens, reps=args.reps,
               warmup=args.warmup)
    out["generate"] = {"seconds": s, "new_tokens_per_second_at_median": work.completion_tokens / s["median"],
                       "generated_lengths": sorted(set(new_lengths)),
                       "approx_gflops_per_s": flops / s["median"] / 1e9}
    print(f"[generate] {s['median']:.3f} s median -> {out['generate']['new_tokens_per_second_at_median']:.1f} tok/s",
          flush=True)
    return sequences


def time_training(args, work: Work, model, sequences, out):
    """Forward+backward over the generated P*G x (prompt + N) tokens, the loss the mean
    log-probability of the completion tokens; then one fused AdamW step (TRL's adamw_torch_fused)."""
    model.train()
    seq_len = sequences.shape[1]
    mask = torch.ones_like(sequences)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, fused=True)
    forward, backward, step = [], [], []
    for i in range(args.warmup + args.reps):
        model.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        logits = model(input_ids=sequences, attention_mask=mask, logits_to_keep=work.new_tokens + 1).logits
        logits = logits[:, :-1].float()
        logps = torch.log_softmax(logits, dim=-1).gather(-1, sequences[:, -work.new_tokens:, None]).squeeze(-1)
        loss = -logps.mean()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        optimizer.step()
        t3 = time.perf_counter()
        if i >= args.warmup:
            forward.append(t1 - t0)
            backward.append(t2 - t1)
            step.append(t3 - t2)
    both = [f + b for f, b in zip(forward, backward)]
    median = statistics.median(both)
    batch = sequences.shape[0]
    flops = 3 * batch * seq_len * forward_flops_per_token(model.config, seq_len / 2)  # backward = 2 x forward
    out["forward_backward"] = {
        "seq_len": seq_len, "tokens": batch * seq_len,
        "forward_seconds": summarize(forward), "backward_seconds": summarize(backward),
        "fwd_bwd_seconds": summarize(both),
        "tokens_per_second_at_median": batch * seq_len / median,
        "completion_tokens_per_second_at_median": work.completion_tokens / median,
        "approx_gflops_per_s": flops / median / 1e9,
    }
    out["adamw_step_seconds"] = summarize(step)
    print(f"[fwd+bwd] {median:.3f} s median over {batch}x{seq_len} -> {batch * seq_len / median:.1f} tok/s; "
          f"AdamW {statistics.median(step):.3f} s", flush=True)


def run_components(args, work: Work, out):
    from transformers import AutoModelForCausalLM, AutoTokenizer
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    result = {}
    usage_before, begin = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    sequences = time_generation(args, work, model, tok, result)
    time_training(args, work, model, sequences, result)
    result["rusage_all_components"] = rusage_between(usage_before, resource.getrusage(resource.RUSAGE_SELF),
                                                     time.perf_counter() - begin)
    out["components"] = result


# ------------------------------------------------------------------------------------------------ main
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=os.path.join(HERE, "..", "out", "models", "bench-tiny"),
                    help="checkpoint directory from make_models.py (default: bench/out/models/bench-tiny)")
    ap.add_argument("--max-steps", type=int, default=6, help="GRPO steps in trl mode, the first a warm-up")
    ap.add_argument("--mode", choices=["trl", "components", "all"], default="all")
    add_work_arguments(ap)
    ap.add_argument("--reps", type=int, default=5, help="timed repetitions of each part (components)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed repetitions before them (components)")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's own)")
    ap.add_argument("--gradient-checkpointing", action="store_true")
    ap.add_argument("--bf16", action="store_true",
                    help="TRL's bf16=True (CPU autocast to bf16; --mode trl only)")
    ap.add_argument("--seed", type=int, default=42, help="TRL's seed (prompt order, sampling) and the rewards'")
    ap.add_argument("--workdir", default=os.path.join(HERE, "..", "out"),
                    help="TRL's output_dir goes under it (default: bench/out)")
    ap.add_argument("--tag", default="", help="suffix of the default output name")
    ap.add_argument("--out", default=None,
                    help="JSON results (default: WORKDIR/results/<model>[_gc]_<mode>[_<tag>][_PxGxN].json, "
                         "PxGxN when the work is not the default 8x8x128)")
    args = ap.parse_args()
    if args.bf16 and args.mode != "trl":
        ap.error("--bf16 times TRL's own trainer only: use it with --mode trl")
    work = work_from_args(ap, args)
    args.workdir = os.path.normpath(args.workdir)
    if args.threads:
        torch.set_num_threads(args.threads)

    name = os.path.basename(args.model.rstrip("/"))
    out_path = args.out or os.path.join(
        args.workdir, "results",
        f"{name}{'_gc' if args.gradient_checkpointing else ''}_{args.mode}{'_' + args.tag if args.tag else ''}"
        f"{'_' + work.tag if work != Work() else ''}.json")
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    info_path = os.path.join(args.model, "bench_info.json")
    out = {"model": name,
           "work": work.as_dict(),
           "model_info": json.load(open(info_path)) if os.path.exists(info_path) else None,
           "versions": versions(),
           "command": " ".join([sys.executable] + sys.argv),
           "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
           "env": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "GLIBC_TUNABLES", "LD_PRELOAD")
                   if k in os.environ}}
    print(json.dumps(out["versions"]), flush=True)
    if args.mode in ("trl", "all"):
        run_trl(args, work, out)
    if args.mode in ("components", "all"):
        run_components(args, work, out)
    with open(out_path, "w") as f:
        json.dump(out, f, indent=2, default=str)
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
