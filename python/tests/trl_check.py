"""Shared by test_trl.py and trl_ddp_worker.py: a tiny random Qwen2 checkpoint, a reward, and a
callback that checks, at every optimizer step, that the gradient TRL accumulated (summed over
accumulation steps, averaged over processes by DDP) equals the gradient of
``sum_i w_i sum_t l_{i,t}`` computed here from scratch over the rows the step's micro-batches
actually held on every process (recorded as ``_compute_loss`` received them), with ``w`` from
``rlvr.weights``: over the whole generation batch each row came from, times ``K =
steps_per_generation / gradient_accumulation_steps`` (``rlvr_weights="group"``), or over the
step's own rows (``"step"``). Generation batches are recorded as TRL returns them, gathered from
every process; groups are found from the prompt text, not from rlvr's bookkeeping.

The tests run in float64 (the checkpoint loaded in float64, ``in_weights_dtype`` around TRL
and the reference): TRL 1.16's fused LM head otherwise computes every log-probability in
float32 whatever the weights' dtype (see ``in_weights_dtype``)."""

from contextlib import contextmanager

import numpy as np
import torch
import transformers

import rlvr
import rlvr.trl

CHARS = "abcd"

#: 16 distinct prompts: within a generation batch, a prompt identifies its group.
PROMPTS = ["ab", "ba", "cd", "dc", "ac", "ca", "bd", "db", "abc", "bca", "cab", "dcb", "bcd", "cdb", "dbc", "acd"]


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


def _wide(dtype):
    """The wider of float32 and `dtype`: float64 for float64 weights, float32 otherwise."""
    return torch.promote_types(dtype, torch.float32)


class _HeadInWeightsDtype:
    """What TRL 1.16's fused LM head (``trl.kernels.ChunkedLogProbFunction``, called by the
    forward ``add_fused_lm_head`` patches in, which ``GRPOTrainer`` always uses for its log-probs
    and entropies) computes, in the wider of float32 and the weights' dtype: the same outputs
    (log-probability of each label under ``softcap(scale z) / temperature``, the entropy, and the
    no-gradient extras), by plain torch ops and autograd instead of TRL's tiles, whose running
    softmax statistics, outputs and gradient accumulators are float32 whatever the inputs'
    dtype ("Always accumulate in fp32")."""

    @staticmethod
    def apply(hidden, weight, bias, targets, temperature, chunk_size, softcap=None, logit_scale=1.0,
              outputs=("log_probs",)):
        w = _wide(hidden.dtype)
        z = hidden.to(w) @ weight.to(w).t()
        if bias is not None:
            z = z + bias.to(w)
        z = z * logit_scale
        if softcap is not None:
            z = softcap * torch.tanh(z / softcap)
        z = z * (1 / temperature)
        log_p = torch.log_softmax(z, dim=-1)
        logprobs = log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        entropy = -(log_p.exp() * log_p).sum(-1) if "entropy" in outputs else None
        with torch.no_grad():
            log_sum_sq = torch.logsumexp(2 * log_p, dim=-1) if "log_sum_sq_probs" in outputs else None
            mean_logits = z.mean(-1) if "mean_logits" in outputs else None
            # argmax returns the first maximum, as TRL's kernel counts a tie with an earlier token
            is_top1 = z.argmax(-1) == targets if "is_top1" in outputs else None
        return logprobs, entropy, log_sum_sq, mean_logits, is_top1


@contextmanager
def in_weights_dtype():
    """Inside, TRL's fused LM head is ``_HeadInWeightsDtype``: every log-probability and
    entropy ``GRPOTrainer`` computes, and their gradient, in float64 for float64 weights (the
    tests' float64 runs; test_trl.py checks it against TRL's head). With TRL's float32 head the
    gradient TRL accumulates and the reference are float32 roundings apart (measured 1e-7
    relative for float64 weights). transformers' Qwen2 keeps RMSNorm and RoPE in float32
    whatever the weights' dtype; left as they are: the reference runs the same model on the same
    micro-batches, so both sides compute them alike (measured: 1e-16 apart with them in; verl's
    check, whose reference runs another layout, computes them in float64). Used around TRL's
    trainer and so around the check (it runs inside ``Trainer.train``); nothing of rlvr's is
    touched, nothing of TRL's but the head."""
    import trl.trainer.utils as trl_utils

    saved = trl_utils._ChunkedLogProbFunction
    trl_utils._ChunkedLogProbFunction = _HeadInWeightsDtype
    try:
        yield
    finally:
        trl_utils._ChunkedLogProbFunction = saved


def long_is_right(completions, **kwargs):
    """Binary reward correlated with length: positives are longer than negatives."""
    return [float(len(c) >= 5) for c in completions]


def token_logps(model, row):
    """Per-token log-probabilities of the completion and the entropies of its distributions."""
    ids = torch.cat([row["prompt_ids"], row["completion_ids"]], dim=1)
    mask = torch.cat([row["prompt_mask"], row["completion_mask"]], dim=1)
    c = row["completion_ids"].size(1)
    logits = model(input_ids=ids, attention_mask=mask).logits[:, -c - 1 : -1, :]
    logits = logits.to(_wide(logits.dtype))
    logp_all = torch.log_softmax(logits, dim=-1)
    entropies = -(logp_all.exp() * logp_all).sum(-1)
    return logp_all.gather(-1, row["completion_ids"].unsqueeze(-1)).squeeze(-1), entropies.detach()


def token_loss(tr, logp, old, a, mask, entropies):
    """The per-token policy loss TRL's `dapo` path computes, written out for the knobs the tests
    set: sequence-level importance ratio (GSPO, `importance_sampling_level="sequence"`), the
    two-sided clip `delta`, the off-policy sequence mask (`off_policy_mask_threshold`, TRL's own
    mask function) and the high-entropy token mask (`top_entropy_quantile`, TRL's own)."""
    log_ratio = logp - old
    if tr.importance_sampling_level == "sequence":
        log_ratio = ((log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).unsqueeze(-1)
    r = torch.exp(log_ratio)
    r2 = torch.clamp(r, 1 - tr.epsilon_low, 1 + tr.epsilon_high)
    if tr.args.delta is not None:
        r = torch.clamp(r, max=tr.args.delta)
    lt = -torch.min(r * a, r2 * a)
    if tr.off_policy_mask_threshold is not None:
        lt = lt * tr.get_off_policy_mask(a, logp, old, mask, tr.off_policy_mask_threshold)
    if tr.top_entropy_quantile < 1.0:
        lt = lt * tr.get_high_entropy_mask(entropies, mask, 1 - tr.top_entropy_quantile)
    return lt


def _row_keys(batch):
    """(prompt ids, completion ids) of every row, padding removed."""
    return [
        (tuple(p[pm.bool()].tolist()), tuple(c[cm.bool()].tolist()))
        for p, pm, c, cm in zip(batch["prompt_ids"], batch["prompt_mask"], batch["completion_ids"], batch["completion_mask"])
    ]


class Recorder(rlvr.trl.GRPOTrainer):
    """Keeps every training generation batch (gathered from all processes: each row's prompt,
    completion and advantage) and the micro-batches of the current optimizer step, as
    ``_compute_loss`` gets them, each tagged with the generation it came from."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.window, self.generations = [], []

    def _generate_and_score_completions(self, inputs):
        out = super()._generate_and_score_completions(inputs)
        if self.model.training:
            rows = [(p, c, float(a)) for (p, c), a in zip(_row_keys(out), out["advantages"].tolist())]
            self.generations = self.generations + [[r for rank in _everyone(rows) for r in rank]]
        return out

    def _compute_loss(self, model, inputs):
        keep = ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask", "advantages", "old_per_token_logps")
        mb = {k: inputs[k].detach().cpu() for k in keep if inputs.get(k) is not None}
        mb["generation"] = len(self.generations) - 1
        self.window.append(mb)
        return super()._compute_loss(model, inputs)


def _everyone(window):
    """Every process's micro-batches of this step (one process: just ours)."""
    if not torch.distributed.is_available() or not torch.distributed.is_initialized():
        return [window]
    out = [None] * torch.distributed.get_world_size()
    torch.distributed.all_gather_object(out, window)
    return out


def group_weights(rule, generation):
    """{(prompt, completion): w} over one whole generation batch (a completion sampled twice in
    a group has one weight: same tokens, same reward)."""
    prompts = [p for p, _, _ in generation]
    names = {p: k for k, p in enumerate(dict.fromkeys(prompts))}
    w = rlvr.weights(rule, [len(c) for _, c, _ in generation], [a for _, _, a in generation],
                     [names[p] for p in prompts])
    out = {}
    for (p, c, _), wi in zip(generation, w):
        assert out.setdefault((p, c), wi) == wi, (p, c)
    return out


class CheckGradient(transformers.TrainerCallback):
    def __init__(self, rule, trainer=None, weights="group"):
        self.rule, self.trainer, self.steps, self.weights = rule, trainer, [], weights

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        tr = self.trainer
        params = [p for p in model.parameters() if p.requires_grad]
        g_trl = torch.cat([p.grad.flatten() for p in params]).double()
        micro = [mb for window in _everyone(tr.window) for mb in window]
        tr.window = []
        # the step's rows, micro-batch after micro-batch
        tokens = torch.cat([mb["completion_mask"].sum(1) for mb in micro]).numpy()
        adv = torch.cat([mb["advantages"] for mb in micro]).double().numpy()
        prompts = [
            tuple(ids[m.bool()].tolist()) for mb in micro for ids, m in zip(mb["prompt_ids"], mb["prompt_mask"])
        ]
        names = {p: k for k, p in enumerate(dict.fromkeys(prompts))}
        groups = np.array([names[p] for p in prompts])
        members = {g: int((groups == g).sum()) for g in set(groups.tolist())}
        if self.weights == "group":
            k = args.steps_per_generation / args.gradient_accumulation_steps
            tables = {}
            w_rlvr = []
            for mb in micro:
                gen = mb["generation"]
                if gen not in tables:
                    tables[gen] = group_weights(self.rule, tr.generations[gen])
                w_rlvr += [k * tables[gen][key] for key in _row_keys(mb)]
            w_rlvr = np.array(w_rlvr)
        else:
            w_rlvr = rlvr.weights(self.rule, tokens, adv, groups)
        grads = {}
        for name, w in (
            ("rlvr", w_rlvr),
            ("token-mean", np.full(len(tokens), 1.0 / max(tokens.sum(), 1))),
        ):
            loss, at = 0.0, 0
            for mb in micro:
                n = len(mb["advantages"])
                logp, entropies = token_logps(model, mb)
                old = mb.get("old_per_token_logps")
                old = logp.detach() if old is None else old
                a = mb["advantages"].unsqueeze(1)
                lt = token_loss(tr, logp, old, a, mb["completion_mask"], entropies)
                wi = torch.as_tensor(w[at : at + n], dtype=torch.float64).unsqueeze(1)
                loss = loss + (wi * (lt * mb["completion_mask"]).double()).sum()
                at += n
            # autograd.grad leaves .grad (TRL's gradient) and DDP's hooks alone
            grads[name] = torch.cat([g.flatten() for g in torch.autograd.grad(loss, params)]).double()
            if name == "rlvr":
                mass = float(np.dot(w, tokens))
        ref = grads["rlvr"]
        self.steps.append(
            dict(
                rel=((g_trl - ref).norm() / ref.norm()).item(),
                rel_token_mean=((grads["token-mean"] - ref).norm() / ref.norm()).item(),
                norm=ref.norm().item(),
                micro_steps=len(micro),
                rows=len(tokens),
                split_groups=sum(1 for n in members.values() if n != tr.num_generations),
                mass=mass,
            )
        )
