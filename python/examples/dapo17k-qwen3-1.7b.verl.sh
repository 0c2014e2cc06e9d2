#!/usr/bin/env bash
# verl form of configs/dapo17k-qwen3-1.7b.toml, written by `rlvr export verl` (verl 0.9, main_ppo).
# Balanced Aggregation is rlvr's advantage estimator (pip install rlvr's python/ next to verl);
# every optimizer step is exact (docs/integrations.md). DATA: where the data files go;
# N_GPUS: GPUs of this node; RLVR: the rlvr binary, to write missing data files.
set -euo pipefail
DATA=${DATA:-data/verl}
N_GPUS=${N_GPUS:-8}
RLVR=${RLVR:-rlvr}
mkdir -p "$DATA"
[ -f "${DATA}/dapo_math_17k.parquet" ] || "$RLVR" export data --prompt-template dapo --split train --out "${DATA}/dapo_math_17k.parquet" -- dapo_math_17k
[ -f "${DATA}/aime24.parquet" ] || "$RLVR" export data --prompt-template dapo --split test --out "${DATA}/aime24.parquet" -- aime24
[ -f "${DATA}/math500.parquet" ] || "$RLVR" export data --prompt-template dapo --split test --out "${DATA}/math500.parquet" -- math500
[ -f "${DATA}/amc23.parquet" ] || "$RLVR" export data --prompt-template dapo --split test --out "${DATA}/amc23.parquet" -- amc23
REWARD_PY=$(python3 -c 'import rlvr.verl, sys; sys.stdout.write(rlvr.verl.__file__)')
VERL_USE_EXTERNAL_MODULES=rlvr.verl python3 -m verl.trainer.main_ppo \
    "actor_rollout_ref.model.path='Qwen/Qwen3-1.7B-Base'" \
    "actor_rollout_ref.model.enable_gradient_checkpointing=true" \
    "actor_rollout_ref.actor.fsdp_config.optimizer_offload=false" \
    "actor_rollout_ref.model.use_remove_padding=true" \
    "trainer.device=cuda" \
    "actor_rollout_ref.actor.fsdp_config.dtype=bfloat16" \
    "actor_rollout_ref.ref.fsdp_config.dtype=bfloat16" \
    "actor_rollout_ref.rollout.dtype=bfloat16" \
    "data.train_files=${DATA}/dapo_math_17k.parquet" \
    "data.max_prompt_length=1024" \
    "data.shuffle=true" \
    "data.seed=0" \
    "actor_rollout_ref.actor.data_loader_seed=0" \
    "data.filter_overlong_prompts=true" \
    "actor_rollout_ref.rollout.name=vllm" \
    "actor_rollout_ref.rollout.n=16" \
    "actor_rollout_ref.rollout.temperature=1.0" \
    "actor_rollout_ref.rollout.top_p=1.0" \
    "actor_rollout_ref.rollout.top_k=-1" \
    "data.max_response_length=8192" \
    "algorithm.adv_estimator=rlvr_balanced" \
    "algorithm.norm_adv_by_std_in_grpo=true" \
    "actor_rollout_ref.actor.loss_agg_mode=token-mean" \
    "actor_rollout_ref.actor.policy_loss.loss_mode=vanilla" \
    "actor_rollout_ref.actor.clip_ratio_low=0.2" \
    "actor_rollout_ref.actor.clip_ratio_high=0.28" \
    "actor_rollout_ref.actor.clip_ratio_c=1000000000.0" \
    "actor_rollout_ref.actor.use_kl_loss=false" \
    "actor_rollout_ref.actor.kl_loss_coef=0.001" \
    "actor_rollout_ref.actor.kl_loss_type=low_var_kl" \
    "algorithm.use_kl_in_reward=false" \
    "actor_rollout_ref.actor.entropy_coeff=0.0" \
    "actor_rollout_ref.actor.ppo_epochs=1" \
    "actor_rollout_ref.actor.ppo_mini_batch_size=32" \
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8" \
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8" \
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8" \
    "actor_rollout_ref.actor.use_dynamic_bsz=true" \
    "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=65536" \
    "algorithm.filter_groups.enable=true" \
    "algorithm.filter_groups.max_num_gen_batches=10" \
    "reward.custom_reward_function.path=${REWARD_PY}" \
    "reward.custom_reward_function.name=compute_score" \
    "reward.reward_manager.name=dapo" \
    "+reward.reward_kwargs.overlong_buffer_cfg.enable=true" \
    "+reward.reward_kwargs.overlong_buffer_cfg.len=1024" \
    "+reward.reward_kwargs.overlong_buffer_cfg.penalty_factor=1.0" \
    "+reward.reward_kwargs.overlong_buffer_cfg.log=false" \
    "+reward.reward_kwargs.max_resp_len=8192" \
    "reward.num_workers=8" \
    "actor_rollout_ref.actor.optim.lr=1.0e-06" \
    "actor_rollout_ref.actor.optim.weight_decay=0.1" \
    "actor_rollout_ref.actor.optim.betas=[0.9,0.999]" \
    "actor_rollout_ref.actor.optim.clip_grad=1.0" \
    "actor_rollout_ref.actor.optim.lr_warmup_steps=10" \
    "actor_rollout_ref.actor.optim.lr_scheduler_type=constant" \
    "actor_rollout_ref.actor.optim.min_lr_ratio=0.0" \
    "data.train_batch_size=512" \
    "trainer.total_training_steps=200" \
    "trainer.save_freq=10" \
    "trainer.project_name=rlvr" \
    "trainer.experiment_name='dapo17k-qwen3-1.7b'" \
    "trainer.default_local_dir='runs/dapo17k-qwen3-1.7b'" \
    "trainer.max_actor_ckpt_to_keep=2" \
    "trainer.n_gpus_per_node=${N_GPUS}" \
    "trainer.nnodes=1" \
    "trainer.logger=['console']" \
    "data.val_files=[${DATA}/aime24.parquet,${DATA}/math500.parquet,${DATA}/amc23.parquet]" \
    "trainer.test_freq=10" \
    "trainer.val_before_train=true" \
    "actor_rollout_ref.rollout.val_kwargs.n=16" \
    "actor_rollout_ref.rollout.val_kwargs.temperature=1.0" \
    "actor_rollout_ref.rollout.val_kwargs.top_p=0.7" \
    "actor_rollout_ref.rollout.val_kwargs.do_sample=true" \
    "$@"
# Not carried, set in this config (no equivalent in the engine):
#   model.device_memory_gib = 139.0: verl sizes memory itself (rollout.gpu_memory_utilization)
#   data.apply_chat_template = false: verl renders every prompt with the tokenizer's chat template (a base model's too)
#   rollout.generation_batch_size = 4: memory only: vLLM batches generation itself
#   algorithm.max_num_gen_batches = 10: set as algorithm.filter_groups.max_num_gen_batches, but verl 0.9's default trainer ignores it (its replay buffer warns so at start): a step keeps sampling until its batch is full, with no cap of 10 generation batches
#   reward.kind = "auto": auto routes code problems to rlvr's sandbox, which the Python package does not carry: verl scores every problem with rlvr's math checker (rlvr.compute_score)
#   optim.lr_warmup_steps = 160: verl changes the learning rate once a batch (16 optimizer steps here) and gives the first batch lr 0: 160 optimizer steps of warmup carried as lr_warmup_steps = 10 batches
#   eval.batch_size = 4: memory only: vLLM batches generation itself
#   logging.print_freq = 1: verl logs every step
# Not carried, at rlvr's default: reward.code_mode, reward.code_max_tests, reward.allow_unsandboxed, model.matmul_dtype, optim.eps, logging.progress, logging.progress_interval_s
