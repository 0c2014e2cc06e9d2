"""rlvr: Balanced Aggregation, aggregation-bias diagnostics and a math answer checker.

A Rust core (the rlvr-core and rlvr-tasks crates) on numpy arrays. Every function takes
array-likes (lists, numpy arrays, CPU or GPU torch tensors) with one entry per response of
the WHOLE optimizer batch, and returns numpy arrays (or plain Python objects).

Aggregation (docs/architecture.md section 2): every rule is one weight per response,
``loss = sum_i w_i * sum_t l_{i,t}``, computed once over the whole batch; micro-batches,
gradient-accumulation steps and data-parallel ranks then only sum ``w_i * l_{i,t}`` over
their own tokens, so the gradient does not depend on how the batch is split.

=========================  ==============================================================
rule                       ``w_i``
=========================  ==============================================================
token-mean                 ``1/N``  (N loss tokens in the batch)
seq-mean-token-mean        ``1/(n |o_i|)``  (n responses)
seq-mean-token-sum         ``1/n``
seq-mean-token-sum-norm    ``1/(n L)``  (L = ``max_len``)
group-token-mean           ``(1/B) / N_g``  (B groups, N_g tokens of the group)
balanced                   ``(1/B) (|S|/G_g) / N_S``, S the sign class (A>0, A<0, A=0) of i
balanced-mass              ``(1/B) (M_S/G_g) / sum_{j in S} |A_j| |o_j|``, M_S = sum_{j in S} |A_j|
=========================  ==============================================================

Errors: bad input raises ``ValueError`` naming the argument (and the index).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple, Optional, Sequence

import numpy as np

from . import _rlvr

__all__ = [
    "RULES",
    "Verdict",
    "advantages",
    "weights",
    "all_weights",
    "diagnostics",
    "verify",
    "math_reward",
    "compute_score",
]

#: Every aggregation rule, in the order of docs/architecture.md's table.
RULES: tuple = tuple(_rlvr.rules())


def _to_numpy(x: Any, name: str) -> np.ndarray:
    if hasattr(x, "detach"):  # torch tensor, possibly on a GPU
        x = x.detach().cpu().numpy()
    a = np.asarray(x)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one entry per response), got shape {a.shape}")
    return a


def _floats(x: Any, name: str) -> np.ndarray:
    a = _to_numpy(x, name)
    if a.dtype == object or not (np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_):
        raise ValueError(f"{name} must hold numbers, got dtype {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.float64)


def _counts(x: Any, name: str) -> np.ndarray:
    a = _to_numpy(x, name)
    if a.size and not (np.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_):
        if not np.issubdtype(a.dtype, np.number):
            raise ValueError(f"{name} must hold integer token counts, got dtype {a.dtype}")
        f = a.astype(np.float64)
        bad = np.flatnonzero(~np.isfinite(f) | (f != np.round(f)))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"{name} at index {i} is not an integer ({a[i]})")
    return np.ascontiguousarray(a, dtype=np.int64)


def _groups(x: Any, name: str = "groups") -> np.ndarray:
    """Group ids as int64: integer ids as they are, anything else (strings such as verl's
    ``uid``) through ``np.unique`` (only equality of ids matters)."""
    a = _to_numpy(x, name)
    if a.size and np.issubdtype(a.dtype, np.integer):
        return np.ascontiguousarray(a, dtype=np.int64)
    if a.size and np.issubdtype(a.dtype, np.floating):
        return _counts(a, name)
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    _, inverse = np.unique(a.astype(str), return_inverse=True)
    return np.ascontiguousarray(inverse.reshape(-1), dtype=np.int64)


def advantages(
    groups: Any,
    rewards: Any,
    estimator: str = "grpo",
    std_scope: str = "group",
    unbiased_std: bool = True,
    eps: float = 1e-6,
) -> np.ndarray:
    """Group-relative advantages, one per response (float64).

    ``estimator``: ``grpo`` ``(r - mean_g)/(std + eps)``, ``dr-grpo`` ``r - mean_g``,
    ``rloo`` ``r - mean_{j != i}``. ``std_scope`` (grpo): ``group``, ``batch`` (TRL
    ``scale_rewards="batch"``) or ``none``. ``std`` is unbiased (n-1) by default as
    ``torch.std``. Groups of one and all-equal groups get exactly 0.
    """
    return _rlvr.advantages(
        _groups(groups), _floats(rewards, "rewards"), str(estimator), str(std_scope), bool(unbiased_std), float(eps)
    )


def weights(rule: str, tokens: Any, advantages: Any, groups: Any, max_len: Optional[int] = None) -> np.ndarray:
    """The per-response weight ``w_i`` of ``rule`` over one whole optimizer batch (float64).

    ``tokens[i]`` is ``|o_i|``, the loss-mask tokens of response i; ``advantages[i]`` is
    ``A_i``; ``groups[i]`` its prompt id (ints or strings). ``max_len`` is ``L`` of
    ``seq-mean-token-sum-norm`` (default: the longest response). Empty responses get 0.
    TRL's names ``dapo``, ``grpo``, ``dr_grpo`` are accepted as aliases.
    """
    return _rlvr.weights(
        str(rule),
        _counts(tokens, "tokens"),
        _floats(advantages, "advantages"),
        _groups(groups),
        None if max_len is None else int(max_len),
    )


def all_weights(tokens: Any, advantages: Any, groups: Any, max_len: Optional[int] = None) -> dict:
    """``{rule: weights(rule, ...)}`` for every rule in :data:`RULES`."""
    t, a, g = _counts(tokens, "tokens"), _floats(advantages, "advantages"), _groups(groups)
    ml = None if max_len is None else int(max_len)
    return {r: _rlvr.weights(r, t, a, g, ml) for r in RULES}


def diagnostics(tokens: Any, advantages: Any, groups: Any, max_len: Optional[int] = None) -> dict:
    """Which aggregation bias the batch is exposed to (docs/architecture.md section 3).

    Keys: ``sequences``, ``tokens``, ``mean_length``, ``length_cv`` (std/mean of ``|o_i|``),
    ``mean_positive_length``, ``mean_negative_length``, ``mixed_groups``, ``pos_neg_gap``
    (mean over mixed groups of ``L+_g - L-_g``), ``pos_neg_ratio``, ``prefactor`` (mean over
    groups of ``sqrt(k(G-k))/G``), ``positive_share`` and ``longest_quartile_share``
    (``{rule: share or None}``, share of the gradient mass ``w_i |A_i| |o_i|``), ``verdict``
    (one sentence) and ``groups`` (the same figures per group; ``group`` is the caller's id
    for integer ids, the id's rank among the sorted ids otherwise).
    """
    return json.loads(
        _rlvr.diagnostics_json(
            _counts(tokens, "tokens"),
            _floats(advantages, "advantages"),
            _groups(groups),
            None if max_len is None else int(max_len),
        )
    )


class Verdict(NamedTuple):
    """What :func:`verify` found: ``correct``, the ``extracted`` answer (None when there is
    none) and the ``reason`` (the rule that decided), as ``rlvr verify`` prints them."""

    correct: bool
    extracted: Optional[str]
    reason: str

    @property
    def reward(self) -> float:
        """1.0 when correct, else 0.0."""
        return 1.0 if self.correct else 0.0


def _gold_text(gold: Any) -> str:
    """The gold as the checker takes it: a string as it is, a number as ``str(gold)``; anything
    else is a ValueError."""
    if isinstance(gold, str):
        return gold
    if isinstance(gold, (int, float, np.integer, np.floating)) and not isinstance(gold, bool):
        return str(gold)
    raise ValueError(f"gold must be a string or a number, got {type(gold).__name__}")


def verify(
    gold: Any,
    response: Any,
    choices: Optional[Sequence[str]] = None,
    question: Optional[str] = None,
) -> Verdict:
    """rlvr's math answer checker: extract the final answer of ``response`` (boxes,
    ``####``, ``Answer:`` lines, ...) and compare it with ``gold`` (a ``\\boxed{}`` gold is
    unwrapped). Numbers are accepted as gold (``str(gold)``). ``choices``: the problem's
    options, in letter order, for multiple choice: the right option's letter or its text is
    accepted, whichever of the two the gold is, and nothing else (docs/checker.md).
    ``question``: the problem's text; with it, an answer that restates the question's own
    expression instead of working it out (``(x+1)^2`` for "Expand $(x+1)^2$") is wrong, as in
    rlvr's training rewards."""
    gold = _gold_text(gold)
    if not isinstance(response, str):
        raise ValueError(f"response must be a string, got {type(response).__name__}")
    if choices is not None:
        if isinstance(choices, str) or not all(isinstance(c, str) for c in choices):
            raise ValueError("choices must be a list of strings (the options, in letter order)")
        choices = list(choices)
    if question is not None and not isinstance(question, str):
        raise ValueError(f"question must be a string, got {type(question).__name__}")
    return Verdict(*_rlvr.verify(gold, response, choices, question))


_GOLD_COLUMNS = ("answer", "solution", "gold", "ground_truth")


def _completion_text(c: Any) -> str:
    if isinstance(c, str):
        return c
    if isinstance(c, dict):
        return str(c.get("content", ""))
    if isinstance(c, (list, tuple)):  # conversational: a list of messages
        return "".join(_completion_text(m) for m in c if not isinstance(m, dict) or m.get("role", "assistant") == "assistant")
    raise ValueError(f"completions: cannot read a completion of type {type(c).__name__}")


_CHOICE_COLUMNS = ("choices", "options")


def _plain(value: Any) -> Any:
    """``value`` with numpy arrays (pandas' and datasets' reading of a list column) and tuples
    as lists, for JSON."""
    if isinstance(value, np.ndarray):
        return [_plain(x) for x in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_plain(x) for x in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value




def _read_choices(field: str, value: Any, gold: Any) -> tuple:
    """``(options or None, gold)``: a problem's options read as rlvr's dataset readers read them
    (a list of strings; ARC's ``{"text": [...], "label": [...]}``, whose label standing as the
    gold becomes that option's letter; labels the options carry themselves, AQuA's ``A)21``,
    removed), or None when ``value`` is None. ``field`` names the value in the error."""
    if value is None:
        return None, gold
    plain = _plain(value)
    if not isinstance(plain, (list, dict)):
        raise ValueError(f"field `{field}`: expected a list of strings (the options, in letter order), got {type(value).__name__}")
    gold = _gold_text(gold)
    try:
        text = json.dumps(plain, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError(f"field `{field}`: the options are not plain strings or numbers ({e})") from None
    texts, gold = _rlvr.read_choices(field, text, gold)
    return texts, gold


def math_reward(completions: list, **kwargs: Any) -> list:
    """A TRL reward function: 1.0 for each completion whose answer matches the gold answer,
    else 0.0. The gold answers come from the dataset column ``answer``, ``solution``,
    ``gold`` or ``ground_truth`` (the first present). Completions may be strings or
    conversational message lists. ``GRPOTrainer(reward_funcs=rlvr.math_reward, ...)``.

    Multiple choice: a column ``choices`` or ``options`` (the first present; a row's value
    None for a problem without options) holds each problem's options, read as rlvr's dataset
    readers read them (a list of strings in letter order, ARC's ``{"text", "label"}`` object,
    AQuA's self-labelled ``A)21``); the right option's letter or its text is then accepted, and
    nothing else, as in rlvr's own runs (:func:`verify` with ``choices``).

    The prompts (TRL passes them as ``prompts``: strings, or conversations whose last user
    message is the question) are the questions: an answer restating the question's own
    expression instead of working it out scores 0.0, as in rlvr's own runs (:func:`verify` with
    ``question``).
    """
    for col in _GOLD_COLUMNS:
        if kwargs.get(col) is not None:
            golds = kwargs[col]
            break
    else:
        raise ValueError(f"math_reward needs a dataset column holding the gold answer: one of {', '.join(_GOLD_COLUMNS)}")
    if len(golds) != len(completions):
        raise ValueError(f"length mismatch: completions has {len(completions)} entries, the gold column has {len(golds)}")
    options, col = [None] * len(completions), None
    for name in _CHOICE_COLUMNS:
        if kwargs.get(name) is not None:
            options, col = kwargs[name], name
            break
    if len(options) != len(completions):
        raise ValueError(f"length mismatch: completions has {len(completions)} entries, the {col} column has {len(options)}")
    prompts = kwargs.get("prompts")
    if prompts is None:
        prompts = [None] * len(completions)
    elif len(prompts) != len(completions):
        raise ValueError(f"length mismatch: completions has {len(completions)} entries, prompts has {len(prompts)}")
    rewards = []
    for i, (g, c, o, p) in enumerate(zip(golds, completions, options, prompts)):
        choices, g = _read_choices(f"{col}[{i}]", o, g)
        rewards.append(verify(g, _completion_text(c), choices, _prompt_text(p)).reward)
    return rewards


def _prompt_text(p: Any) -> Optional[str]:
    """The question of a TRL prompt: the string itself, or the content of a conversation's last
    user message (its last message when none is the user's); None when there is none."""
    if p is None or isinstance(p, str):
        return p
    if isinstance(p, (list, tuple)):
        msgs = [m for m in p if isinstance(m, dict)]
        pool = [m for m in msgs if m.get("role") == "user"] or msgs
        return str(pool[-1].get("content", "")) if pool else None
    return None


def _extra_info_choices(extra_info: Any, gold: Any) -> tuple:
    """``(options or None, gold)`` from ``extra_info["choices"]`` (where ``rlvr export data``
    writes a multiple-choice problem's options; :func:`_read_choices`), None when there are
    none (no ``extra_info``, no key, or null)."""
    if extra_info is None:
        return None, gold
    if not hasattr(extra_info, "get"):
        raise ValueError(f"extra_info must be a dict (verl's extra_info of the row) or None, got {type(extra_info).__name__}")
    return _read_choices("extra_info.choices", extra_info.get("choices"), gold)


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None, **kwargs: Any) -> dict:
    """verl's ``custom_reward_function``: ``{"score": 1.0 or 0.0, "acc": bool, "pred": str}``
    (verl logs the extra keys). Config: ``custom_reward_function.path=<rlvr>/verl.py``,
    ``custom_reward_function.name=compute_score`` (see rlvr.verl). verl 0.9 calls it as
    ``compute_score(data_source=, solution_str=, ground_truth=, extra_info=)`` (plus any
    ``reward_kwargs``, accepted and unused). A multiple-choice row's options at
    ``extra_info["choices"]`` (as ``rlvr export data`` writes them) are used: the right
    option's letter or its text is accepted, as in rlvr's own runs (:func:`verify` with
    ``choices``). A question at ``extra_info["question"]`` (where verl's own preprocessing
    scripts write it) is used as :func:`verify` uses ``question``: an answer restating the
    question's own expression scores 0."""
    choices, ground_truth = _extra_info_choices(extra_info, ground_truth)
    question = extra_info.get("question") if hasattr(extra_info, "get") else None
    if not isinstance(question, str):
        question = None
    v = verify(ground_truth, solution_str, choices, question)
    return {"score": v.reward, "acc": v.correct, "pred": v.extracted or ""}
