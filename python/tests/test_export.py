"""`rlvr export` against the real packages: the verl overrides of the paper's recipe compose
with verl's own ppo_trainer.yaml (Hydra) into a config holding the recipe's values, and rlvr's
estimator cuts it into 16 exact optimizer steps a batch; the TRL script's GRPOConfig is
accepted by TRL and its batch shape gives exact steps for 1 and 8 processes; an exported data
file loads with verl's own RLHFDataset. The committed examples are what the export prints now."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("verl")
pytest.importorskip("trl")

from hydra import compose, initialize_config_dir  # noqa: E402

import verl  # noqa: E402
import rlvr.trl  # noqa: E402
import rlvr.verl  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "configs" / "dapo17k-qwen3-1.7b.toml"
EXAMPLES = REPO / "python" / "examples"
_CONFIG_DIR = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")


def export(binary, *args):
    # relative config path, as the examples' headers name it
    return subprocess.run([binary, "export", *args], check=True, capture_output=True, text=True, cwd=REPO).stdout


def test_the_verl_export_composes_with_verl_s_config(binary, tmp_path):
    lines = export(binary, "verl", "configs/dapo17k-qwen3-1.7b.toml", "--overrides-only").splitlines()
    values = {"${DATA}": str(tmp_path), "${N_GPUS}": "8", "${REWARD_PY}": rlvr.verl.__file__}
    overrides = []
    for line in lines:
        for k, v in values.items():
            line = line.replace(k, v)
        overrides.append(line)
    with initialize_config_dir(config_dir=_CONFIG_DIR, version_base=None):
        cfg = compose(config_name="ppo_trainer", overrides=overrides)
    actor, rollout = cfg.actor_rollout_ref.actor, cfg.actor_rollout_ref.rollout
    assert cfg.algorithm.adv_estimator == "rlvr_balanced"
    assert cfg.algorithm.norm_adv_by_std_in_grpo is True
    assert (cfg.data.train_batch_size, rollout.n, actor.ppo_mini_batch_size) == (512, 16, 32)
    assert actor.loss_agg_mode == "token-mean" and actor.policy_loss.loss_mode == "vanilla"
    assert (actor.clip_ratio_low, actor.clip_ratio_high) == (0.2, 0.28)
    assert actor.clip_ratio_c >= 1e9  # rlvr's recipe has no dual clip
    assert actor.use_kl_loss is False and actor.entropy_coeff == 0.0
    assert actor.optim.lr == pytest.approx(1e-6) and isinstance(actor.optim.lr, float)
    assert actor.optim.weight_decay == pytest.approx(0.1)
    assert list(actor.optim.betas) == [0.9, 0.999]
    assert actor.optim.lr_warmup_steps == 10 and actor.optim.clip_grad == 1.0
    assert actor.use_dynamic_bsz is True and actor.ppo_max_token_len_per_gpu == 65536
    assert cfg.data.max_prompt_length == 1024 and cfg.data.max_response_length == 8192
    assert cfg.data.train_files == f"{tmp_path}/dapo_math_17k.parquet"
    assert list(cfg.data.val_files) == [f"{tmp_path}/{n}.parquet" for n in ("aime24", "math500", "amc23")]
    assert cfg.algorithm.filter_groups.enable is True and cfg.algorithm.filter_groups.max_num_gen_batches == 10
    # verl 0.9's default trainer ignores the cap (trainer_base warns): the script says so
    assert "max_num_gen_batches = 10: set as" in export(binary, "verl", "configs/dapo17k-qwen3-1.7b.toml")
    kw = cfg.reward.reward_kwargs
    assert cfg.reward.reward_manager.name == "dapo"
    assert (kw.overlong_buffer_cfg.enable, kw.overlong_buffer_cfg.len, kw.max_resp_len) == (True, 1024, 8192)
    assert cfg.reward.custom_reward_function.path == rlvr.verl.__file__
    assert rollout.val_kwargs.n == 16 and rollout.val_kwargs.top_p == pytest.approx(0.7)
    assert (cfg.trainer.total_training_steps, cfg.trainer.test_freq, cfg.trainer.save_freq) == (200, 10, 10)
    assert cfg.trainer.n_gpus_per_node == 8
    # rlvr's estimator reads the cut from this config: 16 exact optimizer steps a batch
    cut = rlvr.verl.step_cut(cfg.algorithm)
    steps = rlvr.verl.optimizer_steps(cut, 512 * 16)
    assert len(steps) == 16 and all(len(s) == 32 * 16 for s in steps)
    assert rlvr.verl.weights_mode(cfg.algorithm) == "group"  # whole-group weights: groups split across the 8 ranks


def load_script(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_trl_export_is_a_grpo_config_trl_accepts(binary, tmp_path):
    script = tmp_path / "trl_recipe.py"
    script.write_text(export(binary, "trl", "configs/dapo17k-qwen3-1.7b.toml"))
    module = load_script(script, "trl_recipe")
    for world in (1, 2, 8):
        # bf16 and a GPU are the recipe's; the CPU test machine has neither
        args = module.config(world, use_cpu=True, bf16=False, output_dir=str(tmp_path / "out"))
        assert args.loss_type == "balanced"
        assert (args.epsilon, args.epsilon_high, args.beta) == (0.2, 0.28, 0.0)
        # on GPUs the export generates as TRL's users do: vLLM in the training processes
        assert args.use_vllm is True and args.vllm_mode == "colocate"
        # TRL counts optimizer steps: rlvr's 200 GRPO steps of 16 optimizer steps each
        assert args.learning_rate == pytest.approx(1e-6) and args.max_steps == 200 * 16
        assert args.num_generations == 16 and args.max_completion_length == 8192
        # the batch: 32 prompts x 16 an optimizer step, 512 x 16 a generation, over `world`
        per_step = args.per_device_train_batch_size * args.gradient_accumulation_steps * world
        assert per_step == 32 * 16
        assert args.per_device_train_batch_size * args.steps_per_generation * world == 512 * 16
        rlvr.trl._check_cut(args, "step")  # even the fragment rule takes this split


def test_exported_data_loads_with_verl_s_rl_dataset(binary, tmp_path):
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset
    from trl_check import tiny_checkpoint
    import transformers

    src = tmp_path / "problems.jsonl"
    src.write_text('{"problem": "What is 1+1?", "answer": "2"}\n{"problem": "Find x: x^2 = 9, x > 0.", "answer": "3"}\n')
    out = tmp_path / "problems.parquet"
    subprocess.run([binary, "export", "data", str(src), "--prompt-template", "dapo", "--split", "test",
                    "--out", str(out)], check=True, capture_output=True, text=True)
    tok = transformers.AutoTokenizer.from_pretrained(tiny_checkpoint(tmp_path / "tiny"))
    tok.chat_template = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    config = OmegaConf.create({"max_prompt_length": 4096, "filter_overlong_prompts": False, "truncation": "error",
                               "cache_dir": str(tmp_path / "cache"), "return_raw_chat": True})
    ds = RLHFDataset(str(out), tok, config)
    assert len(ds) == 2
    row = ds.dataframe[1]
    assert row["reward_model"] == {"ground_truth": "3", "style": "rule"}
    assert row["prompt"][0]["role"] == "user"
    assert "x^2 = 9" in row["prompt"][0]["content"] and "Answer:" in row["prompt"][0]["content"]  # dapo template
    assert row["extra_info"]["split"] == "test"
    # the question, where compute_score reads it (an answer restating it scores 0)
    assert row["extra_info"]["question"] == row["prompt"][0]["content"]
    item = ds[1]
    assert item["raw_prompt"][0]["content"] == row["prompt"][0]["content"]
    # verl scores it with rlvr's checker, given the ground truth as verl passes it
    assert rlvr.compute_score(row["data_source"], "so Answer: 3", row["reward_model"]["ground_truth"])["score"] == 1.0
    assert rlvr.compute_score(row["data_source"], "so Answer: 3", "3", row["extra_info"])["score"] == 1.0


@pytest.mark.parametrize("engine, example", [("verl", "dapo17k-qwen3-1.7b.verl.sh"), ("trl", "dapo17k-qwen3-1.7b.trl.py")])
def test_committed_examples_are_the_current_export(binary, engine, example):
    """Regenerate with `rlvr export verl configs/dapo17k-qwen3-1.7b.toml > python/examples/...`."""
    assert (EXAMPLES / example).read_text() == export(binary, engine, "configs/dapo17k-qwen3-1.7b.toml")


def test_hostile_values_reach_verl_s_config_intact(binary, tmp_path):
    """Quotes, backslashes, `$(...)`, backticks, `${...}` (which OmegaConf would resolve),
    non-ASCII: each value arrives in verl's composed config as it was in rlvr's."""
    model = "/models/it's \"q\" $(touch PWNED) `x` ${oc.env:HOME} \\ π\\"
    runs = "/runs/a b/'\\'/${x}"
    name = "run 'q' \"d\" $(x) `y` π ${z}"
    dump = "/dumps/${DATA} '$(touch PWNED)'"
    note = "it's \"x\" ${y} \\ end\\"
    config = tmp_path / "hostile.toml"
    toml_str = lambda s: json.dumps(s, ensure_ascii=False)  # a JSON string is a TOML basic string
    config.write_text(
        f"[model]\npath = {toml_str(model)}\n"
        f"[data]\ntrain_files = \"gsm8k_train\"\napply_chat_template = true\n"
        f"chat_template_kwargs = {{ enable_thinking = false, note = {toml_str(note)} }}\n"
        f"[trainer]\nruns_dir = {toml_str(runs)}\nrun_name = {toml_str(name)}\n"
        f"rollout_data_dir = {toml_str(dump)}\n"
        f"[eval]\ndatasets = []\n"
    )
    lines = subprocess.run([binary, "export", "verl", str(config), "--overrides-only"], check=True,
                           capture_output=True, text=True).stdout.splitlines()
    fill = {"${DATA}": str(tmp_path), "${N_GPUS}": "8", "${REWARD_PY}": rlvr.verl.__file__}
    overrides = []
    for line in lines:
        for k, v in fill.items():
            # the script's variables only: a value's own `${` comes escaped as `\${`
            line = line.replace("=" + k, "=" + v).replace("[" + k, "[" + v).replace("," + k, "," + v)
        overrides.append(line)
    with initialize_config_dir(config_dir=_CONFIG_DIR, version_base=None):
        cfg = compose(config_name="ppo_trainer", overrides=overrides)
    assert cfg.actor_rollout_ref.model.path == model
    assert cfg.trainer.experiment_name == name
    assert cfg.trainer.default_local_dir == f"{runs}/{name}"
    assert cfg.trainer.rollout_data_dir == dump
    assert cfg.data.apply_chat_template_kwargs.enable_thinking is False
    assert cfg.data.apply_chat_template_kwargs.note == note
    assert cfg.data.train_files == f"{tmp_path}/gsm8k_train.parquet"


def _verl_config(binary, tmp_path, *sets):
    args = ["verl", "configs/dapo17k-qwen3-1.7b.toml", "--overrides-only"]
    for kv in sets:
        args += ["--set", kv]
    values = {"${DATA}": str(tmp_path), "${N_GPUS}": "8", "${REWARD_PY}": rlvr.verl.__file__}
    overrides = []
    for line in export(binary, *args).splitlines():
        for k, v in values.items():
            line = line.replace(k, v)
        overrides.append(line)
    with initialize_config_dir(config_dir=_CONFIG_DIR, version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


def _trl_config(binary, tmp_path, *sets):
    args = ["trl", "configs/dapo17k-qwen3-1.7b.toml"]
    for kv in sets:
        args += ["--set", kv]
    script = tmp_path / "units.py"
    script.write_text(export(binary, *args))
    return load_script(script, "units").config(2, use_cpu=True, bf16=False, output_dir=str(tmp_path / "out"))


@pytest.mark.parametrize("steps, mini, epochs, save, test, warmup", [
    (200, 32, 1, 10, 10, 160),   # the paper's recipe: 16 optimizer steps a GRPO step
    (7, 128, 2, 3, 5, 12),       # 4 mini-batches x 2 epochs: 8 optimizer steps a GRPO step
    (5, 512, 1, 2, 1, 3),        # one optimizer step a GRPO step
])
def test_every_exported_unit_reads_back_as_rlvr_s_meaning(binary, tmp_path, steps, mini, epochs, save, test, warmup):
    """Run length, saves, evaluations and warmup, read back from each engine's own config object
    (verl's Hydra-composed config, TRL's GRPOConfig) and converted to rlvr's units: GRPO steps for
    the first three, optimizer steps for the warmup. verl counts training steps (batches) and
    steps its learning rate once a batch; TRL counts optimizer steps."""
    sets = [f"trainer.total_training_steps={steps}", f"algorithm.ppo_mini_batch_size={mini}",
            f"algorithm.ppo_epochs={epochs}", f"trainer.save_freq={save}", f"eval.test_freq={test}",
            f"optim.lr_warmup_steps={warmup}"]
    per_step = 512 // mini * epochs  # rlvr's optimizer steps a GRPO step
    cfg = _verl_config(binary, tmp_path, *sets)
    actor = cfg.actor_rollout_ref.actor
    assert (cfg.trainer.total_training_steps, cfg.trainer.save_freq, cfg.trainer.test_freq) == (steps, save, test)
    assert actor.ppo_epochs == epochs and actor.ppo_mini_batch_size == mini
    # verl's warmup in batches: rlvr's optimizer steps, rounded up to whole batches
    assert actor.optim.lr_warmup_steps == -(-warmup // per_step)
    args = _trl_config(binary, tmp_path, *sets)
    opt_per_generation = args.steps_per_generation * args.num_iterations // args.gradient_accumulation_steps
    assert opt_per_generation == per_step
    assert args.max_steps == steps * per_step
    assert (args.save_steps, args.eval_steps) == (save * per_step, test * per_step)
    assert args.warmup_steps == warmup and args.num_iterations == epochs


def test_a_cpu_config_generates_with_transformers(binary, tmp_path):
    args = _trl_config(binary, tmp_path, "model.device=cpu", "model.dtype=f32")
    assert args.use_vllm is False and args.use_cpu is True

