//! The client's cache of verified Skill Interface Documents.
//!
//! The draft does not want a describe_skill exchange per task ("Operational
//! Considerations"): a client may reuse a verified document "when the cache entry is
//! bound to the same target identity, skill identifier, skill version, and interface
//! digest advertised by the current Agent Card", and "a change to any of those values
//! invalidates the entry". So an entry is keyed by exactly that tuple (the interface
//! version is part of it too: only 1.0 is ever verified), a lookup is made with what the
//! *current* card advertises, and [`InterfaceCache::refresh`] drops every entry of an
//! agent that its newly read card no longer advertises.
//!
//! The draft also requires a limit on cache consumption: the cache holds at most a fixed
//! number of entries and evicts the least recently used one beyond it. Entries share
//! their compiled validators ([`VerifiedInterface`] is cheap to clone).

use crate::client::{CardAdvertisement, VerifiedInterface};
use crate::interface::binding::Binding;
use std::collections::HashMap;

/// The cache key: target identity and the binding (skill_id, skill_version,
/// interface_digest).
type Key = (String, Binding);

/// Verified interfaces keyed by (agent, skill_id, skill_version, interface_digest).
#[derive(Debug)]
pub struct InterfaceCache {
    capacity: usize,
    entries: HashMap<Key, (u64, VerifiedInterface)>,
    clock: u64,
}

fn key(agent: &str, advertised: &Binding) -> Key {
    (agent.to_string(), advertised.clone())
}

impl InterfaceCache {
    /// A cache holding at most `capacity` (at least 1) verified interfaces.
    pub fn new(capacity: usize) -> Self {
        InterfaceCache {
            capacity: capacity.max(1),
            entries: HashMap::new(),
            clock: 0,
        }
    }

    /// The verified interface for what the current Agent Card of `agent` advertises,
    /// if one is cached under exactly that binding. A changed version or digest misses:
    /// call describe_skill again.
    pub fn get(&mut self, agent: &str, advertised: &Binding) -> Option<VerifiedInterface> {
        self.clock += 1;
        let now = self.clock;
        self.entries.get_mut(&key(agent, advertised)).map(|entry| {
            entry.0 = now;
            entry.1.clone()
        })
    }

    /// Keep a verified interface for `agent` (the identity the caller uses for the
    /// target: its card URL or endpoint). Evicts the least recently used entry when full.
    pub fn insert(&mut self, agent: &str, interface: VerifiedInterface) {
        self.clock += 1;
        let k = key(agent, interface.advertised());
        if !self.entries.contains_key(&k) && self.entries.len() >= self.capacity {
            if let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(k, _)| k.clone())
            {
                self.entries.remove(&oldest);
            }
        }
        self.entries.insert(k, (self.clock, interface));
    }

    /// Drop every entry of `agent` whose binding its newly read Agent Card no longer
    /// advertises (another version or digest, or the skill gone). Returns how many.
    pub fn refresh(&mut self, agent: &str, card: &CardAdvertisement) -> usize {
        let before = self.entries.len();
        self.entries
            .retain(|(a, binding), _| a != agent || card.skills.contains(binding));
        before - self.entries.len()
    }

    /// The number of cached interfaces.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
