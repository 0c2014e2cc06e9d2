"""The optimizer fixture that rlvr's AdamW is tested against: torch's own AdamW, as TRL runs it.

`crates/rlvr-train/tests/torch_adamw.rs` replays these gradients through rlvr's
`AdamW::clip_and_step` and compares its weights, step by step, with the weights torch computed
here. The optimizer is what `transformers.Trainer` (under TRL's `GRPOTrainer`) builds by default:
`torch.nn.utils.clip_grad_norm_(params, max_grad_norm)` then `torch.optim.AdamW(..., fused=True)`
(`TrainingArguments.optim == "adamw_torch_fused"`), weight decay on the matrices only (the
Trainer exempts biases and norm weights; rlvr exempts every parameter of rank below 2).

Regenerate (after a torch upgrade, say) with

    python python/tests/torch_adamw_fixture.py crates/rlvr-train/tests/fixtures/torch_adamw/steps.safetensors

`test_torch_adamw_fixture.py` checks that the committed file is what the installed torch computes.
"""

import json
import sys

import torch

# Shapes: two matrices (decayed) and a bias (not); 547 parameters.
SHAPES = {"layer.weight": (24, 19), "layer.bias": (19,), "head.weight": (3, 24)}
HYPER = {
    "lr": 1e-3,
    "beta1": 0.9,
    "beta2": 0.999,
    "eps": 1e-8,
    "weight_decay": 0.1,
    "max_grad_norm": 1.0,
}
STEPS = 40
# gradient scales per step, cycled: the total norm (about 23 x scale) below and above max_norm
SCALES = (0.01, 0.1, 1.0, 3.0, 0.03)


def lr_at(step: int) -> float:
    """The learning rate of step `step` (0-based): it changes every step, as under a schedule."""
    return HYPER["lr"] * (1 + step % 5) / 3


def make() -> tuple[dict, dict]:
    """`(tensors, metadata)`: `init/<name>`, then for each step `step<k>/grad/<name>` (the raw
    gradient, before clipping), `step<k>/param/<name>` (torch's weight after the step) and
    `step<k>/lr`."""
    gen = torch.Generator().manual_seed(20261206)
    params = {
        n: torch.nn.Parameter(torch.randn(s, generator=gen, dtype=torch.float32) * 0.5)
        for n, s in SHAPES.items()
    }
    decay = [p for n, p in params.items() if p.dim() >= 2]
    no_decay = [p for n, p in params.items() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": HYPER["weight_decay"]},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=HYPER["lr"],
        betas=(HYPER["beta1"], HYPER["beta2"]),
        eps=HYPER["eps"],
        fused=True,
    )
    tensors = {f"init/{n}": p.detach().clone() for n, p in params.items()}
    for step in range(STEPS):
        lr = lr_at(step)
        for group in opt.param_groups:
            group["lr"] = lr
        scale = SCALES[step % len(SCALES)]
        for n, p in params.items():
            g = torch.randn(p.shape, generator=gen, dtype=torch.float32) * scale
            tensors[f"step{step}/grad/{n}"] = g.clone()
            p.grad = g
        torch.nn.utils.clip_grad_norm_(list(params.values()), HYPER["max_grad_norm"])
        opt.step()
        opt.zero_grad(set_to_none=True)
        for n, p in params.items():
            tensors[f"step{step}/param/{n}"] = p.detach().clone()
        tensors[f"step{step}/lr"] = torch.tensor([lr], dtype=torch.float64)
    metadata = {
        "hyper": json.dumps(HYPER),
        "steps": str(STEPS),
        "names": json.dumps(list(SHAPES)),
        "made_by": f"torch {torch.__version__}: clip_grad_norm_ + AdamW(fused=True)",
    }
    return tensors, metadata


if __name__ == "__main__":
    from safetensors.torch import save_file

    tensors, metadata = make()
    save_file(tensors, sys.argv[1], metadata=metadata)
    print(f"wrote {sys.argv[1]}: {len(tensors)} tensors, {metadata['made_by']}")
