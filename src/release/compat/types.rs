//! `type` with `enum`/`const`: the two keywords constrain together (the accepted values
//! are the enum's values whose type is allowed), so they are compared on that effective
//! set rather than one by one.

use super::*;

impl<'a> Cx<'a> {
    // -- type --------------------------------------------------------------------------

    /// `type` and `enum`/`const` constrain together: the accepted values are those of
    /// the enum whose type is allowed. Both are compared on that effective set.
    pub(super) fn cmp_type(&mut self, o: &At<'a>, n: &At<'a>, pol: bool) {
        let (to, tn) = match (types_of(o.map()), types_of(n.map())) {
            (Ok(a), Ok(b)) => (a.unwrap_or(T_ALL), b.unwrap_or(T_ALL)),
            _ => {
                if !json_eq(
                    o.v.get("type").unwrap_or(&TRUE),
                    n.v.get("type").unwrap_or(&TRUE),
                ) {
                    self.unreadable(pol, o, n, "type");
                }
                return;
            }
        };
        let (vo, vn) = match (values_of(o.map()), values_of(n.map())) {
            (Ok(a), Ok(b)) => (a, b),
            _ => {
                self.unreadable(pol, o, n, "enum");
                return;
            }
        };
        let filter = |values: Option<Vec<Value>>, types: u8| {
            values.map(|vs| {
                vs.into_iter()
                    .filter(|v| value_bits(v) & types != 0)
                    .collect::<Vec<_>>()
            })
        };
        let (vo, vn) = (filter(vo, to), filter(vn, tn));
        self.cmp_values(o, n, pol, vo.clone(), vn.clone());
        if vo.is_some() && vn.is_some() {
            // Both sides enumerate their values: the value comparison said it all.
            return;
        }
        let effective = |types: u8, values: &Option<Vec<Value>>| match values {
            Some(vs) => types & vs.iter().fold(0, |b, v| b | value_bits(v)),
            None => types,
        };
        let (to, tn) = (effective(to, &vo), effective(tn, &vn));
        let (op, np) = (Self::ptr_of(o, &["type"]), Self::ptr_of(n, &["type"]));
        let added = tn & !to;
        let removed = to & !tn;
        if added != 0 {
            self.emit(
                pol,
                "type-added",
                Direction::Widening,
                &op,
                &np,
                format!("the new schema also accepts {}", type_names(added)),
            );
        }
        if removed != 0 {
            self.emit(
                pol,
                "type-removed",
                Direction::Narrowing,
                &op,
                &np,
                format!("the new schema no longer accepts {}", type_names(removed)),
            );
        }
    }

    // -- enum / const ------------------------------------------------------------------

    pub(super) fn cmp_values(
        &mut self,
        o: &At<'a>,
        n: &At<'a>,
        pol: bool,
        vo: Option<Vec<Value>>,
        vn: Option<Vec<Value>>,
    ) {
        let (op, np) = (
            Self::ptr_of(o, &["enum", "const"]),
            Self::ptr_of(n, &["enum", "const"]),
        );
        match (vo, vn) {
            (None, None) => {}
            (None, Some(values)) => self.emit(
                pol,
                "enum-added",
                Direction::Narrowing,
                &op,
                &np,
                format!(
                    "the value is now restricted to {}",
                    short(&Value::Array(values))
                ),
            ),
            (Some(values), None) => self.emit(
                pol,
                "enum-removed",
                Direction::Widening,
                &op,
                &np,
                format!(
                    "the value is no longer restricted to {}",
                    short(&Value::Array(values))
                ),
            ),
            (Some(old), Some(new)) => {
                let keys = |vs: &[Value]| -> HashSet<Vec<u8>> {
                    vs.iter().map(crate::wire::digest::jcs).collect()
                };
                let (old_keys, new_keys) = (keys(&old), keys(&new));
                for v in new
                    .iter()
                    .filter(|v| !old_keys.contains(&crate::wire::digest::jcs(v)))
                {
                    self.emit(
                        pol,
                        "enum-value-added",
                        Direction::Widening,
                        &op,
                        &np,
                        format!("value {} is now allowed", short(v)),
                    );
                }
                for v in old
                    .iter()
                    .filter(|v| !new_keys.contains(&crate::wire::digest::jcs(v)))
                {
                    self.emit(
                        pol,
                        "enum-value-removed",
                        Direction::Narrowing,
                        &op,
                        &np,
                        format!("value {} is no longer allowed", short(v)),
                    );
                }
            }
        }
    }
}
