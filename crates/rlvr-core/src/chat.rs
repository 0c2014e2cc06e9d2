//! One chat message, the one type of the workspace: rlvr-tasks reads it from data (verl's and
//! TRL's `prompt` column), rlvr-model renders it with a chat template (transformers'
//! `apply_chat_template` messages). It is here, not in either of them, because this is the one
//! crate both build on without the other's dependencies (rlvr-tasks has no tensor library,
//! rlvr-model no dataset readers).

use serde::{Deserialize, Serialize};

/// One chat message (`role` is `system`, `user` or `assistant` in verl/TRL files).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    /// A message with `role` and `content`.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            content: content.into(),
        }
    }
}
