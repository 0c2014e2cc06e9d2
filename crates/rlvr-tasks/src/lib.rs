//! rlvr-tasks: see DESIGN.md section 4.
