//! RFC 8785 (JCS) conformance: the published vectors (cyberphone/json-canonicalization,
//! Apache-2.0, copied under tests/vectors/jcs with their licence) run through the same
//! strict reader and digest code the pipeline uses.

use skillbundle::wire::digest::{hex, jcs, Digest};
use std::path::{Path, PathBuf};

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/jcs")
}

#[test]
fn every_input_canonicalizes_to_the_expected_bytes_and_digest() {
    let dir = vectors();
    let sums = std::fs::read_to_string(dir.join("output_sha256.txt")).unwrap();
    let mut checked = 0;
    for line in sums.lines().filter(|l| !l.trim().is_empty()) {
        let (sum, name) = line.split_once("  ").unwrap();
        let input = std::fs::read(dir.join("input").join(name)).unwrap();
        let expected = std::fs::read(dir.join("output").join(name)).unwrap();
        let value = skillbundle::wire::json::parse(&input)
            .unwrap_or_else(|e| panic!("{name}: the strict reader refused a JCS vector: {e}"));
        let canonical = jcs(&value);
        assert_eq!(
            String::from_utf8_lossy(&canonical),
            String::from_utf8_lossy(&expected),
            "{name}"
        );
        let hexfile = name.replace(".json", ".txt");
        let outhex = std::fs::read_to_string(dir.join("outhex").join(hexfile)).unwrap();
        let outhex: String = outhex.split_whitespace().collect();
        assert_eq!(hex(&canonical), outhex.to_lowercase(), "{name} (outhex)");
        assert_eq!(
            Digest::of_value(&value).as_str(),
            format!("sha256:{sum}"),
            "{name} (sha256)"
        );
        checked += 1;
    }
    assert_eq!(checked, 6);
}

fn run_number_file(name: &str) -> usize {
    let text = std::fs::read_to_string(vectors().join("numbers").join(name)).unwrap();
    let mut n = 0;
    for line in text.lines().filter(|l| !l.is_empty()) {
        let (bits, expected) = line.split_once(',').unwrap();
        let v = f64::from_bits(u64::from_str_radix(bits, 16).unwrap());
        let value = serde_json::Value::from(v);
        let out = String::from_utf8(jcs(&value)).unwrap();
        assert_eq!(out, expected, "bits {bits}");
        // The canonical text read back through the strict reader is the same number.
        // Integers beyond 2^53 are refused by I-JSON's reader, so only check the rest.
        if let Ok(again) = skillbundle::wire::json::parse(out.as_bytes()) {
            assert_eq!(
                again.as_f64().unwrap().to_bits(),
                if v == 0.0 { 0 } else { v.to_bits() },
                "{out}"
            );
        }
        n += 1;
    }
    n
}

#[test]
fn es6_number_serialization_edge_cases() {
    assert_eq!(run_number_file("es6_first1000.txt"), 1000);
}

#[test]
fn es6_number_serialization_random_doubles() {
    assert_eq!(run_number_file("es6_random1000.txt"), 1000);
}
