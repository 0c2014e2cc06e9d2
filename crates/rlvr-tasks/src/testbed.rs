//! testbed (in progress)
