//! Everything that is not an assertion: annotations and unknown keywords never change the
//! accepted set (their changes are reported with direction `none`), and `$schema` is
//! compared where a dialect is chosen — at embedded resources here, at the documents'
//! roots by `compare_with_limits`.

use super::*;

impl<'a> Cx<'a> {
    // -- everything else ---------------------------------------------------------------

    pub(super) fn cmp_other(&mut self, o: &At<'a>, n: &At<'a>, pol: bool) {
        let (om, nm) = (o.map(), n.map());
        let mut keys: Vec<&String> = om.keys().chain(nm.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            if is_assertion(k) || SILENT.contains(&k.as_str()) {
                continue;
            }
            let (a, b) = (om.get(k), nm.get(k));
            if a.zip(b).is_some_and(|(a, b)| json_eq(a, b)) {
                continue;
            }
            let (op, np) = (Self::ptr_of(o, &[k]), Self::ptr_of(n, &[k]));
            if k == "$schema" {
                // The dialect belongs to a resource: the documents' roots are compared
                // once (see `compare_with_limits`), embedded resources here. A `$ref`
                // that lands on a plain subschema compares no dialect.
                let embedded = |at: &At<'a>| !at.ptr.is_empty() && at.v.get("$id").is_some();
                if !(embedded(o) && embedded(n)) {
                    continue;
                }
                self.emit(
                    pol,
                    "dialect-changed",
                    Direction::Undecided,
                    &op,
                    &np,
                    format!(
                        "$schema changed from {} to {}",
                        a.map_or("none".into(), short),
                        b.map_or("none".into(), short)
                    ),
                );
            } else {
                self.emit(
                    pol,
                    "annotation-changed",
                    Direction::None,
                    &op,
                    &np,
                    format!("`{k}` changed; it does not affect validation"),
                );
            }
        }
    }
}
