//! rlvr-core: the math of GRPO-style training, on plain numbers (being written).
