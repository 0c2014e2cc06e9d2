//! rlvr-model: see DESIGN.md section 4.
