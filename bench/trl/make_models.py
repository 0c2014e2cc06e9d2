#!/usr/bin/env python
"""Write the benchmark's random Qwen2 checkpoints, bit for bit the same on every run.

    python make_models.py [--out DIR] [--models NAME ...]
        # default: DIR bench/out/models (where compare_trl.sh looks), models bench-tiny bench-small

For each model, DIR/<name>/ gets config.json, generation_config.json, model.safetensors (f32,
tied embeddings), tokenizer.json, tokenizer_config.json and bench_info.json (parameter counts);
each loads with AutoTokenizer / AutoModelForCausalLM and with `rlvr bench grpo --model`.

    bench-tiny    vocabulary 512,     hidden 256, 4 layers,  4 heads / 2 KV heads, MLP 704   (3.1M parameters)
    bench-small   vocabulary 4096,    hidden 512, 8 layers,  8 heads / 4 KV heads, MLP 1408  (25.7M)
    qwen2.5-0.5b  vocabulary 151,936, hidden 896, 24 layers, 14 heads / 2 KV heads, MLP 4864 (494.0M;
                  about 2 GB on disk), rope theta 1e6, context 32,768: Qwen2.5-0.5B's shape, the
                  one `rlvr bench grpo --shape qwen2.5-0.5b` builds. Only made when named in --models.

The weights are a seeded random initialisation: the benchmark times the work, which does not
depend on what the weights are. The tokenizer is a byte-level BPE trained on seeded generated
text (arithmetic, a few English sentences, pseudo-words), with Qwen2's pipeline (NFC, Qwen2's
split pattern, byte-level), so single digits are split and every prompt "Compute ABCD+EFGH=" is
12 tokens. "<|endoftext|>" is id 0: end-of-sequence and padding. bench-tiny's and bench-small's
tokenizers have exactly the model's vocabulary. qwen2.5-0.5b's is bench-small's 4,096-token one
(the training text holds too few distinct strings for 151,936 tokens): the model still samples
from all 151,936 logits, the cost of every step is the full model's, and the tokenizer leaves
ids of 4,096 and above out when it decodes (the benchmark's rewards do not read the text). The
real Qwen2.5-0.5B's tokenizer, 151,665 tokens, is smaller than its vocabulary too.

DIR/prompts.json lists the benchmark's 64 prompts (workload.py) with their token ids under each
tokenizer made (entries of models made by earlier runs into DIR are kept).
"""
import argparse
import json
import os
import random

import torch
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import (AutoModelForCausalLM, AutoTokenizer, GenerationConfig, PreTrainedTokenizerFast,
                          Qwen2Config, Qwen2ForCausalLM)

import workload

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20240601  # seeds the tokenizer's training text and the weights
EOS = "<|endoftext|>"

SHAPES = {
    "bench-tiny": dict(vocab_size=512, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                       num_key_value_heads=2, intermediate_size=704),
    "bench-small": dict(vocab_size=4096, hidden_size=512, num_hidden_layers=8, num_attention_heads=8,
                        num_key_value_heads=4, intermediate_size=1408),
    # Qwen2.5-0.5B (rlvr's QwenConfig::qwen25_05b_shaped(24)); qkv bias and tied embeddings as
    # every Qwen2 here
    "qwen2.5-0.5b": dict(vocab_size=151936, hidden_size=896, num_hidden_layers=24, num_attention_heads=14,
                         num_key_value_heads=2, intermediate_size=4864),
}
DEFAULT_MODELS = ["bench-tiny", "bench-small"]
# config.json settings that differ from qwen2_config's defaults (context 1024, rope theta 10,000)
CONFIG = {"qwen2.5-0.5b": dict(max_position_embeddings=32768, rope_theta=1_000_000.0)}
# the tokenizer's vocabulary where it is not the model's (see the module's docstring)
TOKENIZER_VOCAB = {"qwen2.5-0.5b": 4096}

# Qwen2's pre-tokenizer split: contractions, letter runs, one digit at a time, punctuation, spaces.
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")


# ------------------------------------------------------------------------ the tokenizer's training text
# The text, and the order in which it draws from its RNG, fix the tokenizer's merges: change
# either and the checkpoints (and every figure measured on them) change.

ENGLISH = """The quick brown fox jumps over the lazy dog. Compute the sum of two numbers and write the answer.
Question: what is the result? Answer: the result is shown below. Let us think step by step.
First add the ones, then carry the tens. The final answer is a number. Please compute carefully.
Reinforcement learning from verifiable rewards trains a policy with group relative advantages.
Numbers: zero one two three four five six seven eight nine ten hundred thousand. Plus minus equals.
"""
ONSETS = ["", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
          "br", "ch", "cl", "dr", "fl", "gr", "pl", "pr", "sh", "sl", "st", "th", "tr", "qu"]
VOWELS = ["a", "e", "i", "o", "u", "y", "ai", "ea", "ee", "oo", "ou", "io"]
CODAS = ["", "", "", "n", "r", "s", "t", "l", "m", "nd", "ng", "st", "ck", "x"]
PUNCTUATION = [".", ",", "!", "?", ";", ":", " -", "'s"]
PRINTABLE_ASCII = "".join(chr(c) for c in range(32, 127))


def arithmetic_line(rng: random.Random) -> str:
    """One of four ways of writing a sum, difference or product of two numbers below 10,000."""
    a, b = rng.randint(0, 9999), rng.randint(0, 9999)
    op = rng.choice("+-*")
    result = {"+": a + b, "-": a - b, "*": a * b}[op]
    return [f"{a}{op}{b}={result}",
            f"Compute {a}{op}{b}={result}",
            f"Compute {a} {op} {b} = {result}",
            f"Question: what is {a}{op}{b}? Answer: {result}"][rng.randrange(4)]


def pseudo_word(rng: random.Random) -> str:
    """1-3 syllables of onset + vowel + coda, capitalised 15% of the time."""
    syllables = rng.randint(1, 3)
    word = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(syllables))
    return word.capitalize() if rng.random() < 0.15 else word


def training_text(seed: int, n_arithmetic: int = 6000, n_sentences: int = 6000) -> list[str]:
    """Arithmetic lines, the English lines 50 times, pseudo-word sentences over a 20,000-word
    vocabulary (enough distinct ASCII for 4,096 tokens) and every printable byte, shuffled."""
    rng = random.Random(seed)
    lines = [arithmetic_line(rng) for _ in range(n_arithmetic)]
    lines += [line for line in ENGLISH.splitlines() if line.strip()] * 50
    words = [pseudo_word(rng) for _ in range(20000)]
    for _ in range(n_sentences):
        n_words = rng.randint(4, 14)
        lines.append(" ".join(rng.choice(words) for _ in range(n_words)) + rng.choice(PUNCTUATION))
    lines += [PRINTABLE_ASCII] * 5
    rng.shuffle(lines)
    return lines


# ------------------------------------------------------------------------------------ tokenizer, model
def train_tokenizer(vocab_size: int, seed: int, model_max_length: int = 1024) -> PreTrainedTokenizerFast:
    """Byte-level BPE with the pipeline transformers' Qwen2Tokenizer builds, so that AutoTokenizer
    (which resolves model_type qwen2 to Qwen2Tokenizer) and the raw tokenizer.json agree."""
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=1, special_tokens=[EOS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(training_text(seed), trainer=trainer)
    assert tok.get_vocab_size() == vocab_size, (tok.get_vocab_size(), vocab_size)
    assert tok.token_to_id(EOS) == 0
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, pad_token=EOS, model_max_length=model_max_length,
                                   padding_side="left", clean_up_tokenization_spaces=False)


def qwen2_config(shape: dict, max_position_embeddings: int = 1024, rope_theta: float = 10000.0) -> Qwen2Config:
    return Qwen2Config(
        **shape,
        max_position_embeddings=max_position_embeddings,
        tie_word_embeddings=True,
        rope_parameters={"rope_type": "default", "rope_theta": rope_theta},
        hidden_act="silu",
        rms_norm_eps=1e-6,
        initializer_range=0.02,
        use_sliding_window=False,
        attention_dropout=0.0,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=0,
        dtype="float32",
    )


def write_model(name: str, shape: dict, out_dir: str, seed: int) -> dict:
    """Tokenizer, then weights from torch's RNG seeded with `seed`; returns bench_info.json."""
    path = os.path.join(out_dir, name)
    os.makedirs(path, exist_ok=True)
    config = qwen2_config(shape, **CONFIG.get(name, {}))
    tokenizer = train_tokenizer(TOKENIZER_VOCAB.get(name, shape["vocab_size"]), seed,
                                model_max_length=config.max_position_embeddings)
    tokenizer.save_pretrained(path)

    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config).to(torch.float32).eval()
    model.generation_config = GenerationConfig(bos_token_id=0, eos_token_id=0, pad_token_id=0)
    model.save_pretrained(path, safe_serialization=True)

    n_params = sum(p.numel() for p in model.parameters())  # the tied embedding counted once
    n_embedding = model.get_input_embeddings().weight.numel()
    info = {"name": name, "seed": seed, "params_total": n_params, "params_embedding": n_embedding,
            "params_non_embedding": n_params - n_embedding, "tokenizer_vocab": len(tokenizer), **shape}
    with open(os.path.join(path, "bench_info.json"), "w") as f:
        json.dump(info, f, indent=2)
    return info


def check_model(path: str, seed: int, prompts: list[str]) -> list[list[int]]:
    """Both loaders work, AutoTokenizer encodes as the raw tokenizer.json does (on the prompts
    and on fresh text of the training kind), every prompt is PROMPT_TOKENS tokens and the logits
    are finite. Returns the prompts' token ids."""
    tok = AutoTokenizer.from_pretrained(path)
    raw = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    assert tok.eos_token_id == 0 and tok.pad_token_id == 0
    for text in training_text(seed + 1, n_arithmetic=200, n_sentences=200) + prompts:
        ids, raw_ids = tok(text)["input_ids"], raw.encode(text).ids
        assert ids == raw_ids, (text, ids, raw_ids)
    prompt_ids = [tok(p)["input_ids"] for p in prompts]
    assert all(len(ids) == workload.PROMPT_TOKENS for ids in prompt_ids), sorted({len(i) for i in prompt_ids})
    with torch.no_grad():
        logits = model(torch.tensor(prompt_ids[:1])).logits
    assert torch.isfinite(logits).all()
    return prompt_ids


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "..", "out", "models"),
                    help="output directory (default: bench/out/models)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--models", nargs="+", choices=list(SHAPES), default=DEFAULT_MODELS, metavar="NAME",
                    help=f"the models to write, of {', '.join(SHAPES)} (default: {' '.join(DEFAULT_MODELS)}; "
                         f"qwen2.5-0.5b is about 2 GB)")
    args = ap.parse_args()
    out = os.path.normpath(args.out)
    os.makedirs(out, exist_ok=True)

    prompts = workload.make_prompts()
    listing_path = os.path.join(out, "prompts.json")
    listing = {}
    if os.path.exists(listing_path):  # keep the token ids of models made before
        with open(listing_path) as f:
            listing = json.load(f)
        if listing.get("prompts") != prompts:
            listing = {}
    listing.update({
        "prompts": prompts,
        "note": f"{workload.N_PROMPTS} prompts, seed {workload.PROMPT_SEED} (workload.py); TRL's GRPOTrainer "
                f"takes --prompts (default {workload.PROMPTS_PER_STEP}) per step, in an order its RepeatSampler "
                f"draws from its own seed (trl_grpo_bench.py --seed, default 42)"})
    for name in dict.fromkeys(args.models):
        shape = SHAPES[name]
        info = write_model(name, shape, out, args.seed)
        path = os.path.join(out, name)
        listing[name] = check_model(path, args.seed, prompts)
        print(json.dumps(info))
        print(f"  {path}: {info['params_total']:,} parameters; {prompts[0]!r} -> {listing[name][0]}")
    with open(listing_path, "w") as f:
        json.dump(listing, f)
    print(f"  {listing_path}: the {len(prompts)} prompts with their token ids")


if __name__ == "__main__":
    main()
