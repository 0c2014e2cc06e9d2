"""The committed optimizer fixture is what the installed torch computes (torch_adamw_fixture.py).

The Rust test `crates/rlvr-train/tests/torch_adamw.rs` holds rlvr's AdamW to these weights; this
test keeps the file honest: remade here with the torch of the test environment, every tensor
agrees with the committed one (the gradients bit for bit, torch's weights within 1e-7: a newer
torch may round its fused kernel's last bit differently).
"""

from pathlib import Path

import torch
from safetensors.torch import load_file

import torch_adamw_fixture

FIXTURE = (
    Path(__file__).resolve().parents[2]
    / "crates/rlvr-train/tests/fixtures/torch_adamw/steps.safetensors"
)


def test_the_committed_fixture_is_what_torch_computes():
    committed = load_file(str(FIXTURE))
    made, _ = torch_adamw_fixture.make()
    assert sorted(committed) == sorted(made)
    for name, want in made.items():
        got = committed[name]
        assert got.dtype == want.dtype and got.shape == want.shape, name
        if "/param/" in name:
            assert torch.allclose(got, want, rtol=0, atol=1e-7), name
        else:
            assert torch.equal(got, want), name


def test_the_fixture_moves_the_weights_and_clips_some_steps_only():
    """The replay would prove little if clipping never (or always) acted or the weights sat
    still: some steps' gradient norms are below max_norm, some above, and the weights move."""
    t = load_file(str(FIXTURE))
    names = list(torch_adamw_fixture.SHAPES)
    norms = [
        torch.sqrt(sum((t[f"step{s}/grad/{n}"].double() ** 2).sum() for n in names)).item()
        for s in range(torch_adamw_fixture.STEPS)
    ]
    max_norm = torch_adamw_fixture.HYPER["max_grad_norm"]
    assert any(x < max_norm for x in norms) and any(x > max_norm for x in norms)
    last = torch_adamw_fixture.STEPS - 1
    moved = max(
        (t[f"step{last}/param/{n}"] - t[f"init/{n}"]).abs().max().item() for n in names
    )
    assert moved > 1e-3
