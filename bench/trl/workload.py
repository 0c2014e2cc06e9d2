"""The work of one benchmark GRPO step, shared by every script of this harness.

`rlvr bench grpo` (crates/rlvr-cli/src/bench.rs) runs work of the same shape, so that the two
trainers are timed on the same amount of work (its prompts come from Rust's RNG, not Python's:
other digits, the same token count):

* 64 plain-text prompts "Compute ABCD+EFGH=" with 4-digit operands drawn from a seeded RNG,
  12 tokens each with either benchmark tokenizer (make_models.py);
* per optimizer step, 8 prompts x 8 completions = 64 sequences, each exactly 128 new tokens
  (end-of-sequence does not stop a completion), sampled at temperature 1;
* one optimizer step per generation round, AdamW at lr 1e-6 (gradient clipping at 1.0).
"""
import random

N_PROMPTS = 64  # the prompt pool; GRPO draws PROMPTS_PER_STEP of them per step
PROMPT_SEED = 1234
NUM_GENERATIONS = 8  # completions per prompt (G)
PROMPTS_PER_STEP = 8
BATCH = PROMPTS_PER_STEP * NUM_GENERATIONS  # sequences per optimizer step
NEW_TOKENS = 128  # every completion has exactly this many tokens
PROMPT_TOKENS = 12  # "Compute ABCD+EFGH=" with the benchmark tokenizers
LEARNING_RATE = 1e-6


def make_prompts(seed: int = PROMPT_SEED, n: int = N_PROMPTS) -> list[str]:
    """The benchmark's prompt pool, "Compute ABCD+EFGH=", the same on every machine."""
    rng = random.Random(seed)
    return [f"Compute {rng.randint(1000, 9999)}+{rng.randint(1000, 9999)}=" for _ in range(n)]
