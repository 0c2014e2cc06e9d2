#!/usr/bin/env bash
# GRPO with Balanced Aggregation in verl (verl's own launcher; rlvr registers the estimator).
#   pip install ./python            # next to a working verl install
#   bash python/examples/verl_balanced.sh data/gsm8k/train.parquet data/gsm8k/test.parquet
# `algorithm.adv_estimator=rlvr_balanced` is the change; loss_agg_mode must stay token-mean. The
# shape is the paper's DAPO recipe scaled down (mini-batches of 1/4 of the batch: 4 optimizer
# steps a generation batch); every optimizer step is exactly Balanced Aggregation over its own
# sequences (see docs/integrations.md). The reward is rlvr's math checker (optional).
set -euo pipefail
train=${1:?train parquet}; test=${2:?test parquet}
reward_py=$(python3 -c 'import rlvr.verl, sys; sys.stdout.write(rlvr.verl.__file__)')
VERL_USE_EXTERNAL_MODULES=rlvr.verl python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=rlvr_balanced \
    algorithm.norm_adv_by_std_in_grpo=true \
    data.train_files="$train" data.val_files="$test" \
    data.train_batch_size=128 data.max_prompt_length=512 data.max_response_length=1024 \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct \
    actor_rollout_ref.rollout.n=8 \
    actor_rollout_ref.actor.loss_agg_mode=token-mean \
    actor_rollout_ref.actor.ppo_mini_batch_size=32 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \
    actor_rollout_ref.actor.use_kl_loss=false \
    custom_reward_function.path="$reward_py" \
    custom_reward_function.name=compute_score \
    trainer.n_gpus_per_node=8 trainer.nnodes=1 "${@:3}"
