"""rlvr.trl with the real TRL on the CPU: a tiny random Qwen2 checkpoint, 2 GRPO steps per
case; at every optimizer step the gradient TRL accumulated equals (relative 1e-5) the gradient
of sum_i w_i sum_t l_{i,t} computed here directly, with w from rlvr.weights over the whole
generation batch."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")
transformers = pytest.importorskip("transformers")
datasets = pytest.importorskip("datasets")

import rlvr  # noqa: E402
import rlvr.trl  # noqa: E402

CHARS = "abcd"


def tiny_checkpoint(path):
    """A 2-layer Qwen2 with random weights and a character tokenizer (vocab 7), so that
    `<eos>` is sampled often and completion lengths vary."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2, **{c: i + 3 for i, c in enumerate(CHARS)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>", unk_token="<unk>"
    )
    torch.manual_seed(0)
    cfg = transformers.Qwen2Config(
        vocab_size=len(vocab),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
        tie_word_embeddings=False,
        eos_token_id=1,
        pad_token_id=0,
        bos_token_id=None,
    )
    model = transformers.Qwen2ForCausalLM(cfg)
    model.generation_config.eos_token_id = 1
    model.generation_config.pad_token_id = 0
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return str(path)


def long_is_right(completions, **kwargs):
    """Binary reward correlated with length: positives are longer than negatives."""
    return [float(len(c) >= 5) for c in completions]


def token_logps(model, inputs):
    ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
    mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
    c = inputs["completion_ids"].size(1)
    logits = model(input_ids=ids, attention_mask=mask).logits[:, -c - 1 : -1, :].float()
    return torch.log_softmax(logits, dim=-1).gather(-1, inputs["completion_ids"].unsqueeze(-1)).squeeze(-1)


class Recorder(rlvr.trl.GRPOTrainer):
    """Keeps the micro-batches of the current optimizer step."""

    def _compute_loss(self, model, inputs):
        self.window.append(inputs)
        return super()._compute_loss(model, inputs)


class CheckGradient(transformers.TrainerCallback):
    def __init__(self, rule):
        self.rule, self.trainer, self.steps = rule, None, []

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        tr = self.trainer
        params = [p for p in model.parameters() if p.requires_grad]
        g_trl = torch.cat([p.grad.flatten().clone() for p in params])
        # the whole generation batch (one process): weights from rlvr directly
        gen = tr._buffered_inputs
        tokens = torch.cat([b["completion_mask"].sum(1) for b in gen]).numpy()
        adv = torch.cat([b["advantages"] for b in gen]).double().numpy()
        groups = torch.cat([b["rlvr_group"] for b in gen]).numpy()
        # the group ids are TRL's prompt groups: same prompt inside a group, G per group
        prompts = torch.cat([b["prompt_ids"] for b in gen])
        for g in np.unique(groups):
            rows = prompts[torch.as_tensor(groups == g)]
            assert len(rows) == tr.num_generations and (rows == rows[0]).all()
        w_all = rlvr.weights(self.rule, tokens, adv, groups)
        w_dapo = np.full(len(tokens), 1.0 / tokens.sum())
        scale = args.steps_per_generation / args.gradient_accumulation_steps
        grads = {}
        for name, w in (("rlvr", w_all), ("dapo", w_dapo)):
            model.zero_grad()
            for mb in tr.window:
                # weights of this micro-batch's responses (rows of gen are unique objects)
                idx = np.concatenate([np.arange(len(b["advantages"])) + sum(len(x["advantages"]) for x in gen[:k])
                                      for k, b in enumerate(gen) if b is mb])
                logp = token_logps(model, mb)
                old = mb.get("old_per_token_logps")
                old = logp.detach() if old is None else old
                r = torch.exp(logp - old)
                a = mb["advantages"].unsqueeze(1)
                l = -torch.min(r * a, torch.clamp(r, 1 - tr.epsilon_low, 1 + tr.epsilon_high) * a)
                wi = torch.as_tensor(w[idx], dtype=torch.float64).unsqueeze(1)
                loss = scale * (wi * (l * mb["completion_mask"]).double()).sum()
                loss.backward()
            grads[name] = torch.cat([p.grad.flatten().clone() for p in params]).double()
        # put TRL's gradient back for the optimizer
        offset = 0
        for p in params:
            n = p.numel()
            p.grad.copy_(g_trl[offset : offset + n].view_as(p))
            offset += n
        ref = grads["rlvr"]
        rel = ((g_trl.double() - ref).norm() / ref.norm()).item()
        rel_dapo = ((grads["dapo"] - ref).norm() / ref.norm()).item()
        self.steps.append(dict(rel=rel, rel_dapo=rel_dapo, norm=ref.norm().item(), n=len(tr.window),
                               mass=float(np.dot(w_all, tokens))))
        tr.window = []


CASES = {
    # per-device batch = generation batch, one micro-step per optimizer step
    "one-micro-batch": dict(per_device_train_batch_size=8, gradient_accumulation_steps=1),
    # 2 gradient-accumulation steps over one generation batch
    "grad-accum-2": dict(per_device_train_batch_size=4, gradient_accumulation_steps=2),
    # per-device batch smaller than the generation batch: one generation feeds 2 optimizer steps
    "per-device-smaller": dict(per_device_train_batch_size=4, gradient_accumulation_steps=1, steps_per_generation=2),
}


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return tiny_checkpoint(tmp_path_factory.mktemp("tiny-qwen2"))


# every split case under `balanced`; `balanced-mass` shares its code path, so one case of it
@pytest.mark.parametrize(
    "case, rule", [(case, "balanced") for case in CASES] + [("grad-accum-2", "balanced-mass")]
)
def test_gradient_equals_rlvr_weights(checkpoint, tmp_path, case, rule):
    data = datasets.Dataset.from_dict({"prompt": ["ab", "cd", "abc", "dcb"] * 4})
    args = trl.GRPOConfig(
        output_dir=str(tmp_path),
        loss_type=rule,
        num_generations=4,
        max_completion_length=10,
        max_steps=2,
        learning_rate=0.05,
        max_grad_norm=0.0,
        beta=0.0,
        temperature=1.0,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        seed=0,
        **CASES[case],
    )
    check = CheckGradient(rule)
    tr = Recorder(model=checkpoint, reward_funcs=long_is_right, args=args, train_dataset=data, callbacks=[check])
    tr.window = []
    check.trainer = tr
    tr.train()
    print(f"\n{case} {rule}: " + "; ".join(
        f"rel err {s['rel']:.1e} (token-mean weights: {s['rel_dapo']:.2f})" for s in check.steps))
    assert len(check.steps) == 2, check.steps
    for s in check.steps:
        assert s["norm"] > 0, check.steps
        assert s["rel"] < 1e-5, check.steps
        assert s["n"] == args.gradient_accumulation_steps
    # the check can fail: token-mean weights give a different gradient on these batches
    assert max(s["rel_dapo"] for s in check.steps) > 1e-2, check.steps
    # balanced is a mean over the generation batch: sum_i w_i |o_i| = 1
    for s in check.steps:
        assert s["mass"] == pytest.approx(1.0, abs=1e-9)
    logged = [h for h in tr.state.log_history if "rlvr/positive_share/balanced" in h]
    assert logged, tr.state.log_history
    for h in logged:
        # binary rewards, std-normalized advantages: balanced puts exactly half the mass on positives
        assert h["rlvr/positive_share/balanced"] == pytest.approx(0.5, abs=1e-6)
        assert 0.0 <= h["rlvr/positive_share/token-mean"] <= 1.0
        assert math.isfinite(h["rlvr/length_cv"])
    assert isinstance(tr.rlvr_verdict, str) and tr.rlvr_verdict


def test_other_loss_types_are_trl_s_own(checkpoint, tmp_path):
    data = datasets.Dataset.from_dict({"prompt": ["ab", "cd"] * 4})
    args = trl.GRPOConfig(output_dir=str(tmp_path), loss_type="dapo", num_generations=4, max_completion_length=6,
                          max_steps=1, per_device_train_batch_size=8, report_to="none", save_strategy="no",
                          use_cpu=True, bf16=False, seed=0)
    tr = rlvr.trl.GRPOTrainer(model=checkpoint, reward_funcs=long_is_right, args=args, train_dataset=data)
    assert tr.rlvr_rule is None
    tr.train()
    assert any("rlvr/positive_share/token-mean" in h for h in tr.state.log_history)
