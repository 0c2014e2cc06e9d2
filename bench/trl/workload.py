"""The work of one benchmark GRPO step, shared by every script of this harness.

`rlvr bench grpo` (crates/rlvr-cli/src/bench.rs) runs work of the same shape, so that the two
trainers are timed on the same amount of work (its prompts come from Rust's RNG, not Python's:
other digits, the same token count):

* a pool of 64 plain-text prompts "Compute ABCD+EFGH=" with 4-digit operands drawn from a
  seeded RNG (more when a step takes more than 64), 12 tokens each with every benchmark
  tokenizer (make_models.py);
* per optimizer step, P prompts x G completions = P*G sequences, each exactly N new tokens
  (end-of-sequence does not stop a completion), sampled at temperature 1. P, G and N are the
  options --prompts, --generations and --new-tokens (`Work`), default 8 x 8 x 128 = 64
  sequences, the same defaults and option names as `rlvr bench grpo`;
* one optimizer step per generation round, AdamW at lr 1e-6 (gradient clipping at 1.0).
"""
import argparse
import random
from dataclasses import dataclass

N_PROMPTS = 64  # the prompt pool (at least); GRPO draws Work.prompts of them per step
PROMPT_SEED = 1234
PROMPTS_PER_STEP = 8  # default --prompts
NUM_GENERATIONS = 8  # default --generations: completions per prompt (G)
NEW_TOKENS = 128  # default --new-tokens: every completion has exactly this many tokens
BATCH = PROMPTS_PER_STEP * NUM_GENERATIONS  # sequences per optimizer step, at the defaults
PROMPT_TOKENS = 12  # "Compute ABCD+EFGH=" with the benchmark tokenizers
LEARNING_RATE = 1e-6


@dataclass(frozen=True)
class Work:
    """The size of one step: `prompts` x `generations` completions of `new_tokens` tokens."""
    prompts: int = PROMPTS_PER_STEP
    generations: int = NUM_GENERATIONS
    new_tokens: int = NEW_TOKENS

    def __post_init__(self):
        if self.prompts < 1:
            raise ValueError(f"--prompts must be at least 1, got {self.prompts}")
        if self.generations < 2:
            raise ValueError(f"--generations must be at least 2 (GRPO compares completions within a group), "
                             f"got {self.generations}")
        if self.new_tokens < 1:
            raise ValueError(f"--new-tokens must be at least 1, got {self.new_tokens}")

    @property
    def batch(self) -> int:
        """Sequences per optimizer step (one device batch)."""
        return self.prompts * self.generations

    @property
    def pool(self) -> int:
        """The prompt pool: N_PROMPTS, or one step's prompts when a step takes more."""
        return max(N_PROMPTS, self.prompts)

    @property
    def completion_tokens(self) -> int:
        """Completion tokens per step."""
        return self.batch * self.new_tokens

    @property
    def tag(self) -> str:
        """"8x8x128": prompts x generations x new tokens, for file names."""
        return f"{self.prompts}x{self.generations}x{self.new_tokens}"

    def as_dict(self) -> dict:
        return {"prompts": self.prompts, "generations": self.generations, "new_tokens": self.new_tokens,
                "completions_per_step": self.batch, "completion_tokens_per_step": self.completion_tokens,
                "prompt_pool": self.pool}


def add_work_arguments(ap: argparse.ArgumentParser) -> None:
    """--prompts, --generations, --new-tokens, with `rlvr bench grpo`'s names and defaults."""
    ap.add_argument("--prompts", type=int, default=PROMPTS_PER_STEP,
                    help=f"prompts per step (default {PROMPTS_PER_STEP})")
    ap.add_argument("--generations", type=int, default=NUM_GENERATIONS,
                    help=f"completions per prompt, at least 2 (default {NUM_GENERATIONS})")
    ap.add_argument("--new-tokens", type=int, default=NEW_TOKENS,
                    help=f"tokens per completion; every completion has exactly this many (default {NEW_TOKENS})")


def work_from_args(ap: argparse.ArgumentParser, args: argparse.Namespace) -> Work:
    try:
        return Work(args.prompts, args.generations, args.new_tokens)
    except ValueError as e:
        ap.error(str(e))


def make_prompts(seed: int = PROMPT_SEED, n: int = N_PROMPTS) -> list[str]:
    """The benchmark's prompt pool, "Compute ABCD+EFGH=", the same on every machine (the first
    64 are the same whatever `n`)."""
    rng = random.Random(seed)
    return [f"Compute {rng.randint(1000, 9999)}+{rng.randint(1000, 9999)}=" for _ in range(n)]
