//! rlvr-train: see DESIGN.md section 4.
