//! The gateway's log records (draft "Security Considerations": nothing a peer sent is
//! repeated): what happened, to which Task, with which condition code, as data. The
//! library prints nothing; the binary writes each record as one JSON line on stderr.

use serde::Serialize;
use std::sync::Arc;

/// How serious a log record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warn,
    Error,
}

/// One structured log record: what happened, to which Task, with which code. Never an
/// argument value, a result, or anything else a caller or the upstream sent beyond ids.
#[derive(Debug, Clone, Serialize)]
pub struct LogRecord {
    pub level: Level,
    pub event: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl LogRecord {
    fn new(level: Level, event: &'static str) -> Self {
        LogRecord {
            level,
            event,
            task_id: None,
            skill_id: None,
            state: None,
            code: None,
            message: None,
        }
    }
    pub fn info(event: &'static str) -> Self {
        Self::new(Level::Info, event)
    }
    pub fn warn(event: &'static str) -> Self {
        Self::new(Level::Warn, event)
    }
    pub fn error(event: &'static str) -> Self {
        Self::new(Level::Error, event)
    }
    pub fn with_task(mut self, id: &str) -> Self {
        self.task_id = Some(id.to_string());
        self
    }
    pub fn with_skill(mut self, id: &str) -> Self {
        self.skill_id = Some(id.to_string());
        self
    }
    pub fn with_state(mut self, state: &a2a_types::TaskState) -> Self {
        self.state = serde_json::to_value(state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string));
        self
    }
    pub fn with_code(mut self, code: &str) -> Self {
        self.code = Some(code.to_string());
        self
    }
    /// A message of the gateway's own words (never a peer's).
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// Where log records go.
pub type Log = Arc<dyn Fn(&LogRecord) + Send + Sync>;
