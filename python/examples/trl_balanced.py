"""GRPO with Balanced Aggregation in TRL, rewarded by rlvr's math checker.

    pip install ./python trl
    python python/examples/trl_balanced.py Qwen/Qwen2.5-0.5B-Instruct
    accelerate launch --num_processes 8 python/examples/trl_balanced.py Qwen/Qwen2.5-0.5B-Instruct

Any TRL GRPOConfig option works as usual; `loss_type="balanced"` (or "balanced-mass") is the
only change (every optimizer step is exactly Balanced Aggregation over its own sequences, across
processes and accumulation steps; docs/integrations.md), and the rlvr/* metrics (positive share per rule, length CV, within-group gap,
prefactor) appear next to TRL's own.
"""

import sys

from datasets import load_dataset
from trl import GRPOConfig

import rlvr
import rlvr.trl

model = sys.argv[1] if len(sys.argv) > 1 else "Qwen/Qwen2.5-0.5B-Instruct"
data = load_dataset("openai/gsm8k", "main", split="train")
data = data.map(lambda x: {"prompt": [{"role": "user", "content": x["question"]}],
                           "answer": x["answer"].split("####")[-1].strip()})
args = GRPOConfig(output_dir="runs/trl-balanced", loss_type="balanced", num_generations=8,
                  per_device_train_batch_size=8, gradient_accumulation_steps=4,
                  max_completion_length=512, learning_rate=1e-6, beta=0.0, logging_steps=1)
trainer = rlvr.trl.GRPOTrainer(model=model, reward_funcs=rlvr.math_reward, args=args, train_dataset=data)
trainer.train()
print(trainer.rlvr_verdict)
