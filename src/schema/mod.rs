//! Checks on the domain schemas a skill delivers inline.
//!
//! The draft makes a Skill Interface Document invalid when one of its inline schemas is
//! not a valid draft 2020-12 schema, selects another dialect, refers to anything outside
//! itself, or exceeds a resource limit — and it requires `format` to be asserted when
//! instances are validated. Each concern is one module here; every check takes a
//! `&serde_json::Value` and returns [`Finding`](crate::finding::Finding)s whose location
//! carries only a JSON Pointer into that value, for the caller to map to file, line and
//! column.
//!
//! Order matters for hostile input, so callers do not run the checks themselves:
//! [`govern`] is the only way a schema is compiled — [`limits::check_schema`] first
//! (its reference chains taken from the one [`closure::analyze`] walk, whose findings
//! are reported after the limits'), then [`dialect::check`], [`closure::check`],
//! `validator::probe` and
//! `validator::compile` (which validates against the meta-schema) — or, with
//! [`govern_lazily`], the meta-schema now and the compile on first use. The limit, dialect and closure walks are
//! iterative and safe on any nesting; compiling and meta-validating recurse, so
//! [`validator`] refuses values nested deeper than [`validator::MAX_NESTING`] on its own.

pub mod closure;
pub mod dialect;
pub mod governance;
pub mod limits;
pub mod lint;
pub mod validator;
pub(crate) mod walk;

pub use governance::{govern, govern_alone, govern_lazily, govern_with_rules};

pub use dialect::DRAFT_2020_12;

#[cfg(test)]
pub(crate) mod test_util {
    use serde_json::{Map, Value};

    /// `levels` objects nested under `keyword`, built without recursion (the `json!`
    /// macro would serialize the inner value recursively).
    pub(crate) fn nest(levels: usize, keyword: &str, innermost: Value) -> Value {
        let mut value = innermost;
        for _ in 0..levels {
            let mut map = Map::new();
            map.insert(keyword.to_owned(), value);
            value = Value::Object(map);
        }
        value
    }

    /// Owns a deeply nested value and drops it with [`drop_deep`], also when a test
    /// panics (unwinding would otherwise overflow the test thread's stack).
    pub(crate) struct Deep(pub(crate) Option<Value>);

    impl Deep {
        pub(crate) fn get(&self) -> &Value {
            self.0.as_ref().expect("value present until drop")
        }
    }

    impl Drop for Deep {
        fn drop(&mut self) {
            if let Some(value) = self.0.take() {
                drop_deep(value);
            }
        }
    }

    /// Drop a deeply nested value on a thread with a large stack: dropping a
    /// `serde_json::Value` recurses once per level.
    pub(crate) fn drop_deep(value: Value) {
        std::thread::Builder::new()
            .stack_size(512 << 20)
            .spawn(move || drop(value))
            .expect("spawn a dropping thread")
            .join()
            .expect("drop a deep value");
    }
}
