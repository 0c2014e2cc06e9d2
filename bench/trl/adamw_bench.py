#!/usr/bin/env python3
"""torch's side of `rlvr bench optimizer`: one optimizer step as TRL's Trainer runs it
(`clip_grad_norm_` at 1.0, then AdamW's step), timed on the parameters of a random Qwen2 model
of the same shape as rlvr's bench shapes, f32 on the CPU.

    PY=~/.cache/rlvr-bench/venv-trl/bin/python
    $PY bench/trl/adamw_bench.py --shape qwen2.5-0.5b --steps 5
    target/release/rlvr bench optimizer --shape qwen2.5-0.5b --steps 5   # rlvr's side

`--impl fused` (default) is `torch.optim.AdamW(fused=True)`, TRL's `adamw_torch_fused`;
`foreach` and `for-loop` are torch's other two implementations. Prints one line with the
median seconds over `--steps` timed steps after one untimed warm-up step.
"""
import argparse
import statistics
import time

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

SHAPES = {
    "bench-tiny": dict(vocab_size=512, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                       num_key_value_heads=2, intermediate_size=704),
    "bench-small": dict(vocab_size=4096, hidden_size=512, num_hidden_layers=8, num_attention_heads=8,
                        num_key_value_heads=4, intermediate_size=1408),
    "qwen2.5-0.5b": dict(vocab_size=151936, hidden_size=896, num_hidden_layers=24, num_attention_heads=14,
                         num_key_value_heads=2, intermediate_size=4864),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", choices=SHAPES, default="bench-small")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--impl", choices=["fused", "foreach", "for-loop"], default="fused")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cfg = Qwen2Config(**SHAPES[args.shape], tie_word_embeddings=True, dtype="float32")
    model = Qwen2ForCausalLM(cfg).to(torch.float32)
    params = [p for p in model.parameters() if p.requires_grad]
    for p in params:
        p.grad = torch.randn_like(p) * 1e-3
    kw = {"fused": True} if args.impl == "fused" else {"foreach": args.impl == "foreach"}
    opt = torch.optim.AdamW(params, lr=1e-6, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, **kw)
    times = []
    for i in range(args.steps + 1):
        t0 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if i > 0:
            times.append(time.perf_counter() - t0)
    n = sum(p.numel() for p in params)
    print(f"torch {torch.__version__} AdamW ({args.impl}) + clip_grad_norm_, {args.shape} ({n} parameters, f32), "
          f"{torch.get_num_threads()} threads: median {statistics.median(times):.3f} s over {len(times)} steps",
          flush=True)


if __name__ == "__main__":
    main()
