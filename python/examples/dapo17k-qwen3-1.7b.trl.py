"""TRL form of configs/dapo17k-qwen3-1.7b.toml, written by `rlvr export trl` (TRL 1.x).

    python this.py                                  # one process
    accelerate launch --num_processes 8 this.py     # eight

The data: the parquet files `rlvr export data` writes (verl's layout; DATA, default data/verl).
Batch shape as rlvr's: 512 prompts x 16 responses a generation batch, 32 prompts an
optimizer step (16 optimizer steps a batch), 8 sequences a forward pass. TRL counts
optimizer steps: max_steps, save_steps and eval_steps are rlvr's GRPO steps x 16. With
rlvr.trl every completion carries its whole group's weight (docs/integrations.md).

 Not carried, set in this config (no equivalent in the engine):
   algorithm.use_dynamic_bsz = true: TRL cuts micro-batches by count (per_device_train_batch_size)
   algorithm.ppo_max_token_len_per_gpu = 65536: TRL cuts micro-batches by count
   algorithm.filter_groups = true: TRL has no dynamic sampling
   algorithm.max_num_gen_batches = 10: TRL has no dynamic sampling
   algorithm.overlong_buffer_len = 1024: TRL has no overlong punishment (a reward function could add one)
   rollout.generation_batch_size = 4: memory only (TRL generates the generation batch at once)
   model.device_memory_gib = 139.0: TRL sizes memory itself
   data.max_prompt_length = 1024: TRL 1.x has no prompt-length limit (filter the data file)
   reward.kind = "auto": TRL does not route: every problem gets rlvr.math_reward
   optim.lr_warmup_steps = 160: carried as warmup_steps = 160, but transformers' warmup gives the first optimizer step lr 0 where rlvr's gives it lr/160: TRL's ramp runs one optimizer step behind
   eval.top_p = 0.7: TRL evaluates every row with the training sampling settings
   eval.batch_size = 4: memory only (TRL's per_device_eval_batch_size)
   logging.print_freq = 1: logging_steps = 1
 Not carried, at rlvr's default: reward.code_mode, reward.code_max_tests, reward.allow_unsandboxed, reward.num_workers, algorithm.overlong_penalty_factor, model.optimizer_offload, model.use_remove_padding, logging.progress, logging.progress_interval_s
"""

import os

from datasets import load_dataset
from trl import GRPOConfig

import rlvr
import rlvr.trl

MODEL = "Qwen/Qwen3-1.7B-Base"
DATA = os.environ.get("DATA", "data/verl")
TRAIN = "dapo_math_17k"
EVAL = ["aime24","math500","amc23"]
CHAT = False  # data.apply_chat_template
NUM_GENERATIONS = 16
PROMPTS_PER_BATCH, PROMPTS_PER_STEP, SEQUENCES_PER_PASS = 512, 32, 8



def load(name):
    """A file of `rlvr export data`: prompt (chat messages, or their user text when CHAT is
    False), answer (reward_model.ground_truth) and, when the file has multiple-choice rows,
    choices (extra_info.choices: the options, None on other rows); rlvr.math_reward reads both."""
    ds = load_dataset("parquet", data_files=f"{DATA}/{name}.parquet")["train"]
    has_choices = "choices" in ds.features["extra_info"]

    def row(x):
        prompt = x["prompt"] if CHAT else x["prompt"][-1]["content"]
        out = {"prompt": prompt, "answer": x["reward_model"]["ground_truth"]}
        if has_choices:
            out["choices"] = x["extra_info"]["choices"]
        return out

    return ds.map(row, remove_columns=[c for c in ds.column_names if c not in ("prompt",)])


def config(world_size=None, **overrides):
    """The GRPOConfig; batch sizes per process for `world_size` processes (default: WORLD_SIZE);
    `overrides`: GRPOConfig arguments that replace the exported ones."""
    world = world_size or int(os.environ.get("WORLD_SIZE", "1"))
    G = NUM_GENERATIONS
    per_step = PROMPTS_PER_STEP * G  # sequences an optimizer step, over all processes
    per_device = min(SEQUENCES_PER_PASS, per_step // world)
    if per_step % (world * per_device):
        raise SystemExit(f"{per_step} sequences a step do not split over {world} processes x {per_device}")
    accum = per_step // (world * per_device)
    steps_per_generation = accum * (PROMPTS_PER_BATCH // PROMPTS_PER_STEP)
    args = dict(
        per_device_train_batch_size=per_device,
        gradient_accumulation_steps=accum,
        steps_per_generation=steps_per_generation,
        loss_type="balanced",
        scale_rewards="group",
        epsilon=0.2,
        epsilon_high=0.28,
        beta=0.0,
        num_iterations=1,
        mask_truncated_completions=False,
        num_generations=16,
        temperature=1.0,
        top_p=1.0,
        max_completion_length=8192,
        bf16=True,
        gradient_checkpointing=True,
        use_cpu=False,
        use_vllm=True,
        vllm_mode="colocate",
        learning_rate=1e-6,
        weight_decay=0.1,
        adam_beta1=0.9,
        adam_beta2=0.999,
        adam_epsilon=1e-8,
        max_grad_norm=1.0,
        warmup_steps=160,
        lr_scheduler_type="constant_with_warmup",
        max_steps=3200,
        seed=0,
        output_dir="runs/dapo17k-qwen3-1.7b",
        save_strategy="steps",
        save_steps=160,
        save_total_limit=2,
        logging_steps=1,
        log_completions=True,
        report_to="none",
        eval_strategy="steps",
        eval_steps=160,
        num_generations_eval=16,
        per_device_eval_batch_size=16,
        eval_on_start=True,
    )
    args.update(overrides)
    return GRPOConfig(**args)


def main():
    args = config()
    train = load(TRAIN)
    evals = {name: load(name) for name in EVAL} or None
    trainer = rlvr.trl.GRPOTrainer(
        model=MODEL, reward_funcs=rlvr.math_reward, args=args, train_dataset=train, eval_dataset=evals
    )
    trainer.train()
    print(trainer.rlvr_verdict)


if __name__ == "__main__":
    main()
