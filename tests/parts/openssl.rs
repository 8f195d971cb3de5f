//! Key files that OpenSSL reads and writes as we do: `keygen`'s private key (PKCS#8 v1
//! PEM) and SPKI public key are what `openssl genpkey -algorithm ed25519` and
//! `openssl pkey -pubout` write, byte for byte, and each reads the other's. `openssl`
//! is a part (tests/parts/harness.rs): without it these are reported as skipped.

use crate::harness;

harness::tests! {
    openssl_accepts_written_keys needs [OpenSsl],
    reads_keys_generated_by_openssl needs [OpenSsl],
}

use skillbundle::crypto::keys::{write_key_files, PublicKey, SigningKeyPair};
use std::process::{Command, Output};

fn openssl(args: &[&str]) -> Output {
    Command::new("openssl")
        .args(args)
        .output()
        .expect("openssl runs (a part this test needs)")
}

fn openssl_accepts_written_keys() {
    let dir = tempfile::tempdir().unwrap();
    let key = SigningKeyPair::generate().unwrap();
    let written = write_key_files(&dir.path().join("k"), &key, true, false).unwrap();
    let key_path = written[0].to_str().unwrap();
    let check = openssl(&["pkey", "-in", key_path, "-noout"]);
    assert!(
        check.status.success(),
        "openssl rejected the key: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    let pubout = openssl(&["pkey", "-in", key_path, "-pubout"]);
    assert!(pubout.status.success());
    assert_eq!(
        String::from_utf8(pubout.stdout).unwrap(),
        key.public_key().to_spki_pem()
    );
    let pem_path = written[2].to_str().unwrap();
    let pubin = openssl(&["pkey", "-pubin", "-in", pem_path, "-noout"]);
    assert!(
        pubin.status.success(),
        "{}",
        String::from_utf8_lossy(&pubin.stderr)
    );
}

fn reads_keys_generated_by_openssl() {
    let dir = tempfile::tempdir().unwrap();
    let key_path = dir.path().join("openssl.key");
    let key_arg = key_path.to_str().unwrap();
    let generated = openssl(&["genpkey", "-algorithm", "ed25519", "-out", key_arg]);
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    let key = SigningKeyPair::read_pem_file(&key_path).unwrap();
    // OpenSSL writes v1; so do we, byte for byte.
    assert_eq!(
        *key.to_pkcs8_pem(),
        std::fs::read_to_string(&key_path).unwrap()
    );

    let pubout = openssl(&["pkey", "-in", key_arg, "-pubout"]);
    assert!(pubout.status.success());
    let openssl_public = String::from_utf8(pubout.stdout).unwrap();
    assert_eq!(
        PublicKey::from_spki_pem(&openssl_public).unwrap(),
        key.public_key()
    );
    assert_eq!(openssl_public, key.public_key().to_spki_pem());
}
