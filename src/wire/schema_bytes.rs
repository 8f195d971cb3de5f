//! A schema's canonical (RFC 8785) bytes as the crate holds them: plain, or packed.
//!
//! Two readers keep many schemas for long and look at few of them again. A loaded
//! bundle keeps every schema it governed, to answer `describe_skill` and to compile a
//! validator when a request first needs one; the lock keeps every schema ever
//! published, and a build compares only the changed ones with them. At 10,000 skills
//! with large schemas each set is over 200 MB of JSON text. So
//! [`crate::agent::Bundle::open`] and the lock reader pack each schema once they have
//! checked it: an LZ4 block (`lz4_flex`, safe Rust; the bench's schemas pack to 59% of
//! their size at 1–3 KB and to 22% at 6–12 KB, and one unpacks in microseconds). A
//! workspace's checked schemas stay plain, or share the lock's bytes when the lock
//! records them. Whichever form, [`SchemaBytes::bytes`] gives the same bytes, the ones
//! the digest was computed over.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// Canonical schema bytes, plain or packed; cheap to clone (shared).
#[derive(Clone)]
pub struct SchemaBytes(Repr);

#[derive(Clone)]
enum Repr {
    Plain(Arc<[u8]>),
    /// An LZ4 block of `len` plain bytes, packed by [`SchemaBytes::packed`].
    Packed {
        len: usize,
        block: Arc<[u8]>,
    },
}

impl SchemaBytes {
    /// The same bytes, packed (already packed ones are shared as they are).
    pub fn packed(&self) -> SchemaBytes {
        match &self.0 {
            Repr::Plain(b) => SchemaBytes(Repr::Packed {
                len: b.len(),
                block: lz4_flex::block::compress(b).into(),
            }),
            Repr::Packed { .. } => self.clone(),
        }
    }

    /// The canonical bytes (unpacked here when packed).
    pub fn bytes(&self) -> Cow<'_, [u8]> {
        match &self.0 {
            Repr::Plain(b) => Cow::Borrowed(b),
            Repr::Packed { len, block } => Cow::Owned(
                lz4_flex::block::decompress(block, *len)
                    .expect("bytes this crate packed itself unpack"),
            ),
        }
    }

    /// The length of the canonical bytes (known without unpacking them).
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Plain(b) => b.len(),
            Repr::Packed { len, .. } => *len,
        }
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many bytes this holds (packed or not).
    pub fn held(&self) -> usize {
        match &self.0 {
            Repr::Plain(b) | Repr::Packed { block: b, .. } => b.len(),
        }
    }

    fn shares(&self, other: &SchemaBytes) -> bool {
        match (&self.0, &other.0) {
            (Repr::Plain(a), Repr::Plain(b))
            | (Repr::Packed { block: a, .. }, Repr::Packed { block: b, .. }) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl From<Vec<u8>> for SchemaBytes {
    fn from(bytes: Vec<u8>) -> Self {
        SchemaBytes(Repr::Plain(bytes.into()))
    }
}

impl From<&[u8]> for SchemaBytes {
    fn from(bytes: &[u8]) -> Self {
        SchemaBytes(Repr::Plain(bytes.into()))
    }
}

impl From<Arc<[u8]>> for SchemaBytes {
    fn from(bytes: Arc<[u8]>) -> Self {
        SchemaBytes(Repr::Plain(bytes))
    }
}

/// Equal when the canonical bytes are, whichever form holds them.
impl PartialEq for SchemaBytes {
    fn eq(&self, other: &Self) -> bool {
        self.shares(other) || self.bytes() == other.bytes()
    }
}

impl Eq for SchemaBytes {}

impl fmt::Debug for SchemaBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_bytes_unpack_to_the_same_bytes() {
        let text =
            br#"{"properties":{"a":{"type":"string"},"b":{"type":"string"}},"type":"object"}"#;
        let plain = SchemaBytes::from(text.to_vec());
        let packed = plain.packed();
        assert_eq!(&*packed.bytes(), &text[..]);
        assert_eq!(packed.len(), text.len());
        assert_eq!(plain, packed);
        assert_eq!(packed.packed().held(), packed.held());
        assert_ne!(plain, SchemaBytes::from(b"true".to_vec()));
        let empty = SchemaBytes::from(Vec::new()).packed();
        assert!(empty.bytes().is_empty());
        // Repetitive schema text packs well below its size.
        let big = SchemaBytes::from(text.repeat(100));
        assert!(big.packed().held() * 5 < big.held());
    }
}
