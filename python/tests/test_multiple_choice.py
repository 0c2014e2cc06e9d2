"""Multiple choice through verl and TRL: `rlvr export data` shows the options in the prompt and
keeps them at `extra_info["choices"]`; verl's RLHFDataset reads them back and
`rlvr.compute_score` (verl's custom_reward_function) checks responses against them as rlvr's own
runs do; the TRL export's loader keeps them as a `choices` column, which TRL hands to
`rlvr.math_reward`, which reads it (or an `options` column) as rlvr's dataset readers do."""

import subprocess
from pathlib import Path

import numpy as np
import pytest

import rlvr

REPO = Path(__file__).resolve().parents[2]

OPTIONS = ["12 km", "15 km", "18 km"]


def test_compute_score_reads_the_options_from_extra_info():
    # verl 0.9's NaiveRewardManager adds num_turns and rollout_reward_scores to extra_info
    info = {"id": "q", "index": 0, "split": "test", "choices": OPTIONS, "num_turns": None, "rollout_reward_scores": {}}

    def score(response, gold="B", extra_info=info):
        return rlvr.compute_score(data_source="mmlu", solution_str=response, ground_truth=gold, extra_info=extra_info)

    s = score("so the answer is (B)")
    assert (s["score"], s["acc"]) == (1.0, True) and "B" in s["pred"]
    assert score("The distance is 15 km.")["score"] == 1.0  # the right option's text
    assert score("The answer is (C).")["score"] == 0.0
    assert score("Answer: A or B")["score"] == 0.0  # a hedge names no one option
    assert score("The answer is (B).", gold="15 km")["score"] == 1.0  # a gold written as text
    # the same without the options: the text of B is not the letter B
    for no_options in (None, {}, {"index": 0}, {"choices": None}):
        assert score("The distance is 15 km.", extra_info=no_options)["score"] == 0.0
        assert score("so the answer is (B)", extra_info=no_options)["score"] == 1.0
    # a tuple or a numpy array (pandas' reading of a list column) is read like a list
    for same in (tuple(OPTIONS), np.array(OPTIONS, dtype=object)):
        assert score("The distance is 15 km.", extra_info={"choices": same})["score"] == 1.0
    # reward_kwargs of the config arrive as keyword arguments: accepted
    assert rlvr.compute_score("mmlu", "(B)", "B", extra_info=info, some_kwarg=1)["score"] == 1.0


def test_compute_score_refuses_options_it_cannot_read():
    with pytest.raises(ValueError, match=r"field `extra_info.choices`: expected a list of strings"):
        rlvr.compute_score("mmlu", "(B)", "B", extra_info={"choices": "ABC"})
    with pytest.raises(ValueError, match=r"field `extra_info.choices.1`: expected a string, found a boolean"):
        rlvr.compute_score("mmlu", "(B)", "B", extra_info={"choices": ["1", True]})
    with pytest.raises(ValueError, match=r"field `extra_info.choices`: an empty list of options"):
        rlvr.compute_score("mmlu", "(B)", "B", extra_info={"choices": []})
    with pytest.raises(ValueError, match="extra_info must be a dict"):
        rlvr.compute_score("mmlu", "(B)", "B", extra_info=["12 km"])
    # a number among the options is read as JSON writes it, as rlvr's dataset readers do
    assert rlvr.compute_score("mmlu", "The answer is 2.", "B", extra_info={"choices": ["1", 2]})["score"] == 1.0


def test_math_reward_reads_a_choices_or_options_column_as_rlvr_s_readers_do():
    # TRL hands every dataset column to the reward function, one entry per completion
    completions = ["The distance is 15 km.", "so the answer is (B)", "The answer is (C).", "\\boxed{2}"]
    golds = ["B", "15 km", "B", "2"]
    rows = [OPTIONS, OPTIONS, np.array(OPTIONS, dtype=object), None]
    for column in ("choices", "options"):
        assert rlvr.math_reward(completions, answer=golds, **{column: rows}) == [1.0, 1.0, 0.0, 1.0]
    # without the column the text of B is not the letter B
    assert rlvr.math_reward(completions, answer=golds) == [0.0, 0.0, 0.0, 1.0]
    # ARC's object: a gold written as a label names that option (its letter or its text)
    arc = {"text": ["red", "green", "blue"], "label": ["1", "2", "3"]}
    # (other columns, here ARC's own `id`, are TRL's to pass and are not read)
    assert rlvr.math_reward(["The answer is \\boxed{green}.", "(B)", "(C)"], id=["q1"] * 3,
                            solution=["2", "2", "2"], choices=[arc, arc, arc]) == [1.0, 1.0, 0.0]
    # AQuA's self-labelled options: the text without its label is the option
    aqua = ["A)21", "B)21.5", "C)22"]
    assert rlvr.math_reward(["The answer is 21.5.", "The answer is 21."], answer=["B", "B"],
                            options=[aqua, aqua]) == [1.0, 0.0]


def test_math_reward_refuses_a_choices_column_it_cannot_read():
    with pytest.raises(ValueError, match=r"the choices column has 1"):
        rlvr.math_reward(["(B)", "(B)"], answer=["B", "B"], choices=[OPTIONS])
    with pytest.raises(ValueError, match=r"field `choices\[1\]`: expected a list of strings"):
        rlvr.math_reward(["(B)", "(B)"], answer=["B", "B"], choices=[OPTIONS, "ABC"])
    with pytest.raises(ValueError, match=r"field `options\[0\].text`: missing"):
        rlvr.math_reward(["(B)"], answer=["B"], options=[{"label": ["1"]}])
    # values JSON cannot hold are a ValueError naming the field, not a TypeError
    for bad in ([b"12 km", "15 km"], ["12 km", float("nan")], [object()]):
        with pytest.raises(ValueError, match=r"field `choices\[0\]`: the options are not plain"):
            rlvr.math_reward(["(B)"], answer=["B"], choices=[bad])


def test_exported_options_reach_the_prompt_and_the_reward(binary, tmp_path):
    pytest.importorskip("verl")
    import pyarrow as pa
    import pyarrow.parquet as pq
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset
    from trl_check import tiny_checkpoint
    import transformers

    src = tmp_path / "mc.jsonl"
    src.write_text(
        '{"problem": "How far did she walk?", "answer": "B", "choices": ["12 km", "15 km", "18 km"]}\n'
        '{"problem": "What is 1+1?", "answer": "2"}\n'
    )
    out = tmp_path / "mc.parquet"
    subprocess.run([binary, "export", "data", str(src), "--prompt-template", "qwen-boxed", "--split", "test",
                    "--out", str(out)], check=True, capture_output=True, text=True)
    table = pq.read_table(out)
    field = table.schema.field("extra_info").type.field("choices")
    assert pa.types.is_list(field.type) and field.type.value_type == pa.string() and field.nullable
    rows = table.to_pylist()
    assert rows[0]["extra_info"]["choices"] == OPTIONS
    assert rows[1]["extra_info"]["choices"] is None

    tok = transformers.AutoTokenizer.from_pretrained(tiny_checkpoint(tmp_path / "tiny"))
    tok.chat_template = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    config = OmegaConf.create({"max_prompt_length": 4096, "filter_overlong_prompts": False, "truncation": "error",
                               "cache_dir": str(tmp_path / "cache"), "return_raw_chat": True})
    ds = RLHFDataset(str(out), tok, config)
    assert len(ds) == 2
    mc, plain = ds.dataframe[0], ds.dataframe[1]
    # the model reads the options, in MMLU-Pro's form, before the template's instruction
    assert mc["prompt"][0]["content"] == (
        "How far did she walk?\nOptions:\nA. 12 km\nB. 15 km\nC. 18 km\n"
        "Please reason step by step, and put your final answer within \\boxed{}."
    )
    assert "Options:" not in plain["prompt"][0]["content"]
    assert ds[0]["raw_prompt"][0]["content"] == mc["prompt"][0]["content"]
    # verl hands the row's extra_info to the reward function: the option's text counts
    gold = mc["reward_model"]["ground_truth"]
    assert gold == "B"
    assert rlvr.compute_score(mc["data_source"], "\\boxed{15 km}", gold, extra_info=dict(mc["extra_info"]))["score"] == 1.0
    assert rlvr.compute_score(mc["data_source"], "\\boxed{C}", gold, extra_info=dict(mc["extra_info"]))["score"] == 0.0
    assert plain["extra_info"]["choices"] is None
    assert rlvr.compute_score(plain["data_source"], "\\boxed{2}", "2", extra_info=dict(plain["extra_info"]))["score"] == 1.0


def test_the_trl_export_hands_the_options_to_math_reward_through_trl(binary, tmp_path):
    """`rlvr export trl`'s load() keeps the options of an exported file as a `choices` column;
    TRL's GRPOTrainer hands that column to the reward function beside `answer`, one entry per
    completion; rlvr.math_reward then scores with the options."""
    pytest.importorskip("trl")
    import importlib.util

    import trl
    from trl_check import tiny_checkpoint

    data = tmp_path / "data"
    data.mkdir()
    src = tmp_path / "mc.jsonl"
    src.write_text(
        '{"problem": "How far did she walk?", "answer": "B", "choices": ["12 km", "15 km", "18 km"]}\n'
        '{"problem": "What is 1+1?", "answer": "2"}\n'
    )
    subprocess.run([binary, "export", "data", str(src), "--prompt-template", "qwen-boxed", "--out",
                    str(data / "mc.parquet")], check=True, capture_output=True, text=True)
    script = tmp_path / "recipe.py"
    script.write_text(subprocess.run([binary, "export", "trl", "configs/dapo17k-qwen3-1.7b.toml"], check=True,
                                     capture_output=True, text=True, cwd=REPO).stdout)
    spec = importlib.util.spec_from_file_location("recipe", script)
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    recipe.DATA = str(data)
    ds = recipe.load("mc")
    assert ds.column_names == ["prompt", "answer", "choices"]
    assert [r["choices"] for r in ds] == [OPTIONS, None]

    seen = []

    def reward(completions, **kwargs):
        seen.append(kwargs)
        return rlvr.math_reward(completions, **kwargs)

    args = trl.GRPOConfig(output_dir=str(tmp_path / "out"), num_generations=2, per_device_train_batch_size=4,
                          max_completion_length=4, max_steps=1, report_to="none", save_strategy="no",
                          use_cpu=True, bf16=False, seed=0, logging_steps=1)
    trainer = trl.GRPOTrainer(model=tiny_checkpoint(tmp_path / "tiny"), reward_funcs=reward, args=args,
                              train_dataset=ds)
    trainer.train()
    kwargs = seen[0]
    assert len(kwargs["answer"]) == len(kwargs["choices"]) == 4
    for gold, options in zip(kwargs["answer"], kwargs["choices"]):
        assert (gold, options) in (("B", OPTIONS), ("2", None))
    # the same columns score hand-written completions with the options: B's text counts
    texts = ["The distance is 15 km." if g == "B" else "\\boxed{2}" for g in kwargs["answer"]]
    assert rlvr.math_reward(texts, **kwargs) == [1.0] * 4
    wrong = ["The answer is (C)." if g == "B" else "\\boxed{3}" for g in kwargs["answer"]]
    assert rlvr.math_reward(wrong, **kwargs) == [0.0] * 4


def test_a_math_layout_parquet_by_path_keeps_its_options(binary, tmp_path):
    """A parquet file in the MATH layout (`problem`, `answer`, `options`), written by pyarrow as
    Hugging Face datasets write theirs, is read by path in that layout (its first record has
    `problem`), not as verl's; its options reach the exported file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = tmp_path / "mc.parquet"
    pq.write_table(pa.table({
        "problem": ["How far did she walk?", "What is 1+1?"],
        "answer": ["B", "2"],
        "options": [["A)12 km", "B)15 km", "C)18 km"], None],
    }), src)
    out = tmp_path / "out.jsonl"
    subprocess.run([binary, "export", "data", str(src), "--out", str(out)], check=True, capture_output=True,
                   text=True)
    import json

    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["reward_model"]["ground_truth"] for r in rows] == ["B", "2"]
    assert rows[0]["extra_info"]["choices"] == OPTIONS and "choices" not in rows[1]["extra_info"]
    assert "B. 15 km" in rows[0]["prompt"][-1]["content"]
