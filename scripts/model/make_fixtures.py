#!/usr/bin/env python
"""Make the tiny random Hugging Face checkpoints that rlvr-model's parity tests read.

Writes, deterministically (fixed seeds), under crates/rlvr-model/tests/fixtures/:
  qwen2-tiny/  Qwen2ForCausalLM, bf16 weights, tied embeddings, q/k/v biases, ChatML chat template,
               generation_config.json
  qwen3-tiny/  Qwen3ForCausalLM, f32 weights, untied lm_head, q/k norms, head_dim 16 != hidden/heads,
               sharded (model-0000x-of-0000y.safetensors + model.safetensors.index.json)
  llama-tiny/  LlamaForCausalLM, bf16, untied
  llama3-tiny/ LlamaForCausalLM with Llama 3's rope scaling (rope_type "llama3": one rotary frequency
               kept, one smoothed, two divided by the factor), f32, untied, a 72-token sequence
each with config.json, tokenizer.json, tokenizer_config.json and reference.json: for a few fixed
token sequences, transformers' float32 log-prob of every next token and the entropy of every
next-token distribution, plus tokenizer encodings and (qwen2) the rendered chat template.

Weights are drawn larger than a real init (std 0.3) and norms/biases are perturbed, so the
log-probs are far from uniform and every tensor matters.

Usage:  ~/venv-trl/bin/python scripts/model/make_fixtures.py [--out crates/rlvr-model/tests/fixtures] [--only NAME]
Needs torch, transformers, tokenizers, safetensors (not in CI: the outputs are committed).

Check mode (a checkpoint SAVED BY rlvr loads in transformers and gives the same log-probs):
    ~/venv-trl/bin/python scripts/model/make_fixtures.py --check-saved DIR
reads DIR/rlvr_logprobs.json (written next to the checkpoint by `cargo run -p rlvr-model
--example export_check -- DIR`) and compares.
"""
import argparse
import json
import os
import random

import torch
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import (AutoModelForCausalLM, AutoTokenizer, GenerationConfig, LlamaConfig, LlamaForCausalLM,
                          PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM)

SEED = 1234
VOCAB = 272
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
          "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
TEXTS = ["Compute 12+34=46", "The answer is 7.", "Add: 7 9 5 = 21\n", "héllo wörld"]


def corpus(seed):
    rng = random.Random(seed)
    lines = []
    for _ in range(2000):
        a, b = rng.randint(0, 99), rng.randint(0, 99)
        lines.append(f"Compute {a}+{b}={a + b}")
        lines.append(f"Add: {a % 10} {b % 10} = {a % 10 + b % 10}")
    lines += ["The answer is the final number. Let us think step by step."] * 50
    return lines


def build_tokenizer(chat_template):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, min_frequency=1, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus(SEED), trainer=trainer)
    assert tok.get_vocab_size() == VOCAB, tok.get_vocab_size()
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                 model_max_length=128, clean_up_tokenization_spaces=False)
    if chat_template:
        hf.chat_template = CHATML
    return hf


def perturb(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            elif name.endswith(".bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.3 * torch.randn(p.shape, generator=g))


def sequences(seed, lengths=(7, 12, 20)):
    rng = random.Random(seed)
    return [[rng.randrange(VOCAB) for _ in range(n)] for n in lengths]


def reference_logprobs(model, seqs):
    out = []
    with torch.no_grad():
        for ids in seqs:
            logits = model(torch.tensor([ids])).logits[0].float()
            logp = torch.log_softmax(logits, dim=-1)
            lp = logp[:-1].gather(1, torch.tensor(ids[1:]).unsqueeze(1)).squeeze(1)
            ent = -(logp.exp() * logp).sum(-1)[:-1]
            out.append({"ids": ids, "logprobs": lp.tolist(), "entropy": ent.tolist()})
    return out


def make(out_dir, name, model_cls, config, dtype, chat_template, shard=None, gen_config=None,
         lengths=(7, 12, 20)):
    path = os.path.join(out_dir, name)
    os.makedirs(path, exist_ok=True)
    for f in os.listdir(path):
        os.remove(os.path.join(path, f))
    tok = build_tokenizer(chat_template)
    tok.save_pretrained(path)
    torch.manual_seed(SEED)
    model = model_cls(config).eval()
    perturb(model, SEED)
    model = model.to(dtype)
    if gen_config:
        model.generation_config = gen_config
    kwargs = {"max_shard_size": shard} if shard else {}
    model.save_pretrained(path, **kwargs)
    # reference from the saved files, in float32
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(path)
    ref = {
        "transformers_version": __import__("transformers").__version__,
        "sequences": reference_logprobs(model, sequences(SEED + len(name), lengths)),
        "encodings": [{"text": t, "ids": tok(t, add_special_tokens=False)["input_ids"]} for t in TEXTS],
    }
    if chat_template:
        msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "1+1?"}]
        ref["chat"] = {"messages": msgs,
                       "with_generation_prompt": tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True),
                       "without_generation_prompt": tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=False)}
    with open(os.path.join(path, "reference.json"), "w") as f:
        json.dump(ref, f)
    size = sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    print(f"{path}: {sorted(os.listdir(path))}, {size} bytes")


def check_saved(path):
    with open(os.path.join(path, "rlvr_logprobs.json")) as f:
        rust = json.load(f)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(path)
    worst = 0.0
    for seq in rust["sequences"]:
        ref = reference_logprobs(model, [seq["ids"]])[0]["logprobs"]
        worst = max(worst, max(abs(a - b) for a, b in zip(ref, seq["logprobs"])))
    for enc in rust.get("encodings", []):
        assert tok(enc["text"], add_special_tokens=False)["input_ids"] == enc["ids"], enc
    print(f"{path}: {type(model).__name__} loaded by transformers; max |logprob diff| vs rlvr = {worst:.3g}")
    assert worst < 1e-4, worst


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "..", "crates", "rlvr-model", "tests", "fixtures"))
    ap.add_argument("--check-saved", nargs="*", default=None)
    ap.add_argument("--only", default=None, help="make this fixture alone (the others stay as committed)")
    args = ap.parse_args()
    if args.check_saved is not None:
        for p in args.check_saved:
            check_saved(p)
        return
    common = dict(vocab_size=VOCAB, hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                  intermediate_size=48, max_position_embeddings=128, rms_norm_eps=1e-6, hidden_act="silu",
                  bos_token_id=0, eos_token_id=2, pad_token_id=0)
    fixtures = {
        "qwen2-tiny": lambda: make(args.out, "qwen2-tiny", Qwen2ForCausalLM,
             Qwen2Config(num_hidden_layers=2, tie_word_embeddings=True, use_sliding_window=False,
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, **common),
             torch.bfloat16, chat_template=True,
             gen_config=GenerationConfig(bos_token_id=0, eos_token_id=[2, 0], pad_token_id=0)),
        "qwen3-tiny": lambda: make(args.out, "qwen3-tiny", Qwen3ForCausalLM,
             Qwen3Config(num_hidden_layers=1, head_dim=16, tie_word_embeddings=False,
                         rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}, **common),
             torch.float32, chat_template=False, shard="60KB"),
        "llama-tiny": lambda: make(args.out, "llama-tiny", LlamaForCausalLM,
             LlamaConfig(num_hidden_layers=1, tie_word_embeddings=False,
                         rope_parameters={"rope_type": "default", "rope_theta": 500000.0}, **common),
             torch.bfloat16, chat_template=False),
        # head_dim 8, theta 1e4: wavelengths 6.3, 63, 628, 6283 against original_max_position 64
        # (high-frequency bound 64 / 4 = 16, low-frequency bound 64 / 1): kept, smoothed, scaled,
        # scaled; the 72-token sequence reaches positions past the original context
        "llama3-tiny": lambda: make(args.out, "llama3-tiny", LlamaForCausalLM,
             LlamaConfig(num_hidden_layers=1, tie_word_embeddings=False,
                         rope_parameters={"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0,
                                          "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                          "original_max_position_embeddings": 64}, **common),
             torch.float32, chat_template=False, lengths=(9, 30, 72)),
    }
    for name, build in fixtures.items():
        if args.only in (None, name):
            build()

if __name__ == "__main__":
    main()
