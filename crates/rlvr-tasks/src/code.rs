//! code (in progress)
