//! Numeric bounds: `minimum`/`exclusiveMinimum` and `maximum`/`exclusiveMaximum` are
//! compared as one effective bound each (whichever is tighter), and `multipleOf` by
//! divisibility.

use super::*;

impl<'a> Cx<'a> {
    // -- numbers -----------------------------------------------------------------------

    pub(super) fn cmp_numbers(&mut self, o: &At<'a>, n: &At<'a>, pol: bool) {
        for (lower, incl, excl, tightened, loosened) in [
            (
                true,
                "minimum",
                "exclusiveMinimum",
                "minimum-tightened",
                "minimum-loosened",
            ),
            (
                false,
                "maximum",
                "exclusiveMaximum",
                "maximum-tightened",
                "maximum-loosened",
            ),
        ] {
            let (bo, bn) = match (
                bound(o.map(), incl, excl, lower),
                bound(n.map(), incl, excl, lower),
            ) {
                (Ok(a), Ok(b)) => (a, b),
                _ => {
                    self.unreadable(pol, o, n, incl);
                    continue;
                }
            };
            let cmp = compare_bounds(bo, bn, lower);
            let (op, np) = (
                Self::ptr_of(o, &[incl, excl]),
                Self::ptr_of(n, &[incl, excl]),
            );
            let show = |b: Option<(f64, bool)>| match b {
                None => "none".to_string(),
                Some((v, true)) => format!("{v} (exclusive)"),
                Some((v, false)) => format!("{v}"),
            };
            match cmp {
                std::cmp::Ordering::Equal => {}
                std::cmp::Ordering::Greater => self.emit(
                    pol,
                    tightened,
                    Direction::Narrowing,
                    &op,
                    &np,
                    format!("the {incl} bound went from {} to {}", show(bo), show(bn)),
                ),
                std::cmp::Ordering::Less => self.emit(
                    pol,
                    loosened,
                    Direction::Widening,
                    &op,
                    &np,
                    format!("the {incl} bound went from {} to {}", show(bo), show(bn)),
                ),
            }
        }
        let mo = o.v.get("multipleOf");
        let mn = n.v.get("multipleOf");
        if mo.is_none() && mn.is_none() {
            return;
        }
        let (op, np) = (
            Self::ptr_of(o, &["multipleOf"]),
            Self::ptr_of(n, &["multipleOf"]),
        );
        let positive = |v: Option<&Value>| match v {
            None => Ok(None),
            Some(x) => x.as_f64().filter(|f| *f > 0.0).map(Some).ok_or(()),
        };
        match (positive(mo), positive(mn)) {
            (Ok(None), Ok(Some(b))) => self.emit(
                pol,
                "multiple-of-tightened",
                Direction::Narrowing,
                &op,
                &np,
                format!("numbers must now be multiples of {b}"),
            ),
            (Ok(Some(a)), Ok(None)) => self.emit(
                pol,
                "multiple-of-loosened",
                Direction::Widening,
                &op,
                &np,
                format!("numbers need no longer be multiples of {a}"),
            ),
            (Ok(Some(a)), Ok(Some(b))) if a != b => {
                let divides = |x: f64, y: f64| {
                    let q = x / y;
                    q.is_finite() && q.fract() == 0.0
                };
                let (rule, dir) = if divides(a, b) {
                    ("multiple-of-loosened", Direction::Widening)
                } else if divides(b, a) {
                    ("multiple-of-tightened", Direction::Narrowing)
                } else {
                    ("multiple-of-changed", Direction::Both)
                };
                self.emit(
                    pol,
                    rule,
                    dir,
                    &op,
                    &np,
                    format!("multipleOf went from {a} to {b}"),
                );
            }
            (Ok(_), Ok(_)) => {}
            _ => self.unreadable(pol, o, n, "multipleOf"),
        }
    }
}

/// The effective numeric bound of `incl`/`excl` keywords: (value, exclusive).
fn bound(
    m: &Map<String, Value>,
    incl: &str,
    excl: &str,
    lower: bool,
) -> Result<Option<(f64, bool)>, ()> {
    let read = |k: &str| match m.get(k) {
        None => Ok(None),
        Some(v) => v.as_f64().map(Some).ok_or(()),
    };
    let (i, e) = (read(incl)?, read(excl)?);
    Ok(match (i, e) {
        (None, None) => None,
        (Some(i), None) => Some((i, false)),
        (None, Some(e)) => Some((e, true)),
        (Some(i), Some(e)) => {
            let tighter_is_e = if lower { e >= i } else { e <= i };
            if tighter_is_e {
                Some((e, true))
            } else {
                Some((i, false))
            }
        }
    })
}
