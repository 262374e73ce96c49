//! Scripted models: replay fixed replies (or a closure) so the loop and every mechanism are
//! tested without a model.

use super::{BackendError, ChatRequest, Model};
use crate::messages::{Message, Reply};
use std::collections::VecDeque;

/// What the model was shown on one call.
#[derive(Clone, Debug)]
pub struct SeenRequest {
    pub messages: Vec<Message>,
    pub tool_names: Vec<String>,
    pub num_predict: u32,
}

pub struct ScriptedModel {
    replies: VecDeque<Result<Reply, BackendError>>,
    /// Every request, when `record` is on.
    pub seen: Vec<SeenRequest>,
    pub record: bool,
    pub context: Option<u64>,
}

impl ScriptedModel {
    pub fn new(replies: Vec<Result<Reply, BackendError>>) -> Self {
        ScriptedModel {
            replies: replies.into(),
            seen: Vec::new(),
            record: true,
            context: None,
        }
    }
    pub fn replies(replies: Vec<Reply>) -> Self {
        Self::new(replies.into_iter().map(Ok).collect())
    }
    pub fn remaining(&self) -> usize {
        self.replies.len()
    }
}

impl Model for ScriptedModel {
    fn chat(&mut self, req: &ChatRequest<'_>) -> Result<Reply, BackendError> {
        if self.record {
            self.seen.push(SeenRequest {
                messages: req.messages.to_vec(),
                tool_names: req.tools.iter().map(|t| t.name.clone()).collect(),
                num_predict: req.num_predict,
            });
        }
        self.replies
            .pop_front()
            .unwrap_or(Err(BackendError::Exhausted))
    }
    fn context_length(&self) -> Option<u64> {
        self.context
    }
}

/// A model defined by a closure over the request (a policy rather than a fixed script).
pub struct FnModel<F: FnMut(&ChatRequest<'_>) -> Result<Reply, BackendError>>(pub F);

impl<F: FnMut(&ChatRequest<'_>) -> Result<Reply, BackendError>> Model for FnModel<F> {
    fn chat(&mut self, req: &ChatRequest<'_>) -> Result<Reply, BackendError> {
        (self.0)(req)
    }
}
