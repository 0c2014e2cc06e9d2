"""Run by test_trl.py under `accelerate launch --num_processes 2`: the cases of
test_trl.WORKER_CASES, each checked at every optimizer step by trl_check.CheckGradient on every
process, in float64 (trl_check.in_weights_dtype, as test_trl.py's one-process cases);
writes {case: [steps of process 0, steps of process 1]} as JSON.

    trl_ddp_worker.py CHECKPOINT WORK_DIR OUT_JSON
"""

import json
import os
import sys

import datasets
import torch

from test_trl import DTYPE, WORKER_CASES, grpo_args
from trl_check import PROMPTS, CheckGradient, Recorder, in_weights_dtype, long_is_right


def main():
    checkpoint, work, out = sys.argv[1:4]
    data = datasets.Dataset.from_dict({"prompt": PROMPTS})
    results = {}
    for case, (split, max_steps, weights) in WORKER_CASES.items():
        args = grpo_args(f"{work}/{case}", "balanced", max_steps, **split)
        check = CheckGradient("balanced", weights=weights)
        with in_weights_dtype():
            tr = Recorder(model=checkpoint, reward_funcs=long_is_right, args=args, train_dataset=data,
                          callbacks=[check], rlvr_weights=weights)
            assert tr.model.dtype == DTYPE, tr.model.dtype
            check.trainer = tr
            tr.train()
        assert tr.accelerator.num_processes == 2, tr.accelerator.num_processes
        gathered = [None, None]
        torch.distributed.all_gather_object(gathered, check.steps)
        results[case] = gathered
    if torch.distributed.get_rank() == 0:
        with open(out, "w") as f:
            json.dump(results, f)
    # leave the process group before the interpreter tears down (a gloo group alive at exit can
    # abort the process: "terminate called without an active exception")
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()
    # and skip the interpreter's teardown, where gloo's threads can still abort the process
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
