"""Multiple choice through verl: `rlvr export data` shows the options in the prompt and keeps
them at `extra_info["choices"]`; verl's RLHFDataset reads them back; `rlvr.compute_score`
(verl's custom_reward_function) checks responses against them as rlvr's own runs do."""

import subprocess

import numpy as np
import pytest

import rlvr

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
    with pytest.raises(ValueError, match=r'extra_info\["choices"\] must be a list of strings'):
        rlvr.compute_score("mmlu", "(B)", "B", extra_info={"choices": "ABC"})
    with pytest.raises(ValueError, match=r'extra_info\["choices"\]\[1\] must be a string'):
        rlvr.compute_score("mmlu", "(B)", "B", extra_info={"choices": ["1", 2]})
    with pytest.raises(ValueError, match="extra_info must be a dict"):
        rlvr.compute_score("mmlu", "(B)", "B", extra_info=["12 km"])


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
