//! What the gateway remembers of each Task, bounded: which governed skill it invokes
//! (so GetTask, ListTasks, CancelTask and a resubscription apply the same rules as the
//! send did, draft "Skill output"), and the Tasks the gateway decided itself (a
//! refusal, a describe_skill answer, a Task the upstream did not finish), so that every
//! path shows the same Task. The oldest entries are forgotten beyond the capacity; a
//! forgotten governed Task is still recognised by the request in its history.

use super::upstream::OnBehalf;
use crate::interface::DESCRIBE_SKILL;
use a2a_types::{PartContent, Task};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// What the gateway remembers of a Task. Most entries are a governed skill's Task the
/// upstream finished, so an entry is kept small (a decided Task behind a `Box`): the
/// index is full after `capacity` requests, and its size is most of the gateway's memory.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The governed skill the Task invokes; `None` for a base A2A Task.
    pub skill_id: Option<Arc<str>>,
    /// The Task as the gateway decided it, when the upstream has no say (a refusal, a
    /// describe_skill answer, a Task the upstream did not finish in time).
    pub decided: Option<Box<Task>>,
    /// For a describe_skill Task: the skill it described (its Artifact is rebuilt from
    /// the bundle when asked for again).
    pub described: Option<String>,
}

/// Tasks by id, the oldest forgotten beyond `capacity`.
#[derive(Debug)]
pub struct TaskIndex {
    capacity: usize,
    entries: HashMap<Arc<str>, Entry>,
    order: VecDeque<Arc<str>>,
}

impl TaskIndex {
    pub fn new(capacity: usize) -> Self {
        TaskIndex {
            capacity: capacity.max(1),
            entries: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.entries.get(id)
    }

    /// Remember `entry` for Task `id`. A describe_skill Task is kept without its
    /// Artifact's data (a whole Skill Interface Document): `Shared::decided` answers it
    /// from the bundle again, so the index stays small whatever callers ask.
    pub fn insert(&mut self, id: &str, mut entry: Entry) {
        if let Some(task) = entry.decided.as_mut() {
            for artifact in task.artifacts.iter_mut().flatten() {
                if artifact.name.as_deref() == Some(DESCRIBE_SKILL) {
                    let described = artifact.parts.iter().find_map(|p| match &p.content {
                        PartContent::Data(v) => v
                            .pointer("/result/interface/skill_id")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        _ => None,
                    });
                    entry.described = described;
                    artifact.parts.clear();
                }
            }
        }
        let id: Arc<str> = Arc::from(id);
        if self.entries.insert(Arc::clone(&id), entry).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.entries.remove(&old);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The upstream Tasks a governed stream of the gateway follows while they run, each
/// with the caller's upstream (its headers): what the gateway cancels upstream when it
/// stops (SIGTERM) before they end. Bounded by the requests in flight.
#[derive(Debug, Default)]
pub struct InFlight {
    tasks: Mutex<HashMap<String, OnBehalf>>,
}

impl InFlight {
    fn tasks(&self) -> std::sync::MutexGuard<'_, HashMap<String, OnBehalf>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn add(&self, id: &str, upstream: OnBehalf) {
        self.tasks().insert(id.to_string(), upstream);
    }

    pub fn remove(&self, id: &str) {
        self.tasks().remove(id);
    }

    /// Every Task followed now, forgotten here.
    pub fn take_all(&self) -> Vec<(String, OnBehalf)> {
        self.tasks().drain().collect()
    }
}
