"""Agent Card signatures checked by the A2A project's own SDK (a2a-sdk[signing]).

skillbundle signs the merged Agent Card over its canonical form (protobuf-JSON without
`signatures`, defaults and empty members omitted, JCS); a2a-sdk's verifier must accept
it, refuse it once the card changed, and skillbundle must verify a card the SDK signed.

Needs SKILLBUNDLE_BIN (the built binary) and SKILLBUNDLE_ROOT (the repository).
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from a2a.types import AgentCard
from a2a.utils.signing import (
    InvalidSignaturesError,
    create_agent_card_signer,
    create_signature_verifier,
)
from google.protobuf.json_format import MessageToDict, ParseDict
from jwt.api_jwk import PyJWK

BIN = os.environ["SKILLBUNDLE_BIN"]
ROOT = Path(os.environ["SKILLBUNDLE_ROOT"])


def run(*args, cwd, check=True):
    out = subprocess.run([BIN, *args], cwd=cwd, capture_output=True, text=True)
    if check:
        assert out.returncode == 0, out.stdout + out.stderr
    return out


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    """A signed bundle, a card key pair, and the card merged into a base and signed."""
    d = tmp_path_factory.mktemp("cards")
    shutil.copytree(ROOT / "example-skills", d / "ws", ignore=shutil.ignore_patterns("dist"))
    run("keygen", "--out", "keys/release", cwd=d)
    run("keygen", "--out", "keys/card", cwd=d)
    run("build", "ws", "--sign-key", "keys/release.key", cwd=d)
    base = json.loads((ROOT / "tests/cmd/fixtures/client/card.json").read_text())
    # Members the SDK's canonical form omits: a false without presence, empty lists.
    base["capabilities"] = {"streaming": False, "extensions": []}
    base["skills"] = []
    base["securityRequirements"] = []
    (d / "base.json").write_text(json.dumps(base))
    bundle = next((d / "ws/dist").glob("*.tar.gz"))
    out = run(
        "card", str(bundle), "--trust", "keys/release.jwk.json",
        "--base", "base.json", "--sign-key", "keys/card.key", cwd=d,
    )
    (d / "signed.json").write_text(out.stdout)
    return d


def jwk(d, name):
    return PyJWK(json.loads((d / f"keys/{name}.jwk.json").read_text()))


def verifier(key):
    return create_signature_verifier(lambda kid, jku: key, ["EdDSA"])


def parse(text):
    return ParseDict(json.loads(text), AgentCard())


def test_the_sdk_verifies_our_signature(signed):
    card = parse((signed / "signed.json").read_text())
    assert len(card.signatures) == 1
    # The merged card carries a "required": false, which the canonical form omits.
    ext = json.loads((signed / "signed.json").read_text())["capabilities"]["extensions"][0]
    assert ext.get("required") is False
    verifier(jwk(signed, "card"))(card)


def test_the_sdk_refuses_a_stale_signature(signed):
    card = json.loads((signed / "signed.json").read_text())
    card["description"] = "Changed after signing."
    with pytest.raises(InvalidSignaturesError):
        verifier(jwk(signed, "card"))(ParseDict(card, AgentCard()))
    # And so does skillbundle.
    (signed / "stale.json").write_text(json.dumps(card))
    out = run("verify-card", "stale.json", "--trust", "keys/card.jwk.json", cwd=signed, check=False)
    assert out.returncode == 1
    assert "signature_invalid" in out.stdout + out.stderr


def test_the_sdk_refuses_another_key(signed):
    with pytest.raises(InvalidSignaturesError):
        verifier(jwk(signed, "release"))(parse((signed / "signed.json").read_text()))


def test_skillbundle_verifies_a_card_the_sdk_signed(signed):
    card = parse((signed / "signed.json").read_text())
    del card.signatures[:]
    private = (signed / "keys/card.key").read_text()
    kid = json.loads((signed / "keys/card.jwk.json").read_text())["kid"]
    signer = create_agent_card_signer(private, {"alg": "EdDSA", "kid": kid, "typ": "JOSE"})
    sdk_signed = MessageToDict(signer(card))
    (signed / "sdk-signed.json").write_text(json.dumps(sdk_signed))
    out = run("verify-card", "sdk-signed.json", "--trust", "keys/card.jwk.json", cwd=signed)
    assert kid in out.stdout
    # The same card, changed: refused.
    sdk_signed["name"] = "Another agent"
    (signed / "sdk-changed.json").write_text(json.dumps(sdk_signed))
    out = run("verify-card", "sdk-changed.json", "--trust", "keys/card.jwk.json", cwd=signed, check=False)
    assert out.returncode == 1


def test_a_base_card_with_signatures_is_refused_without_sign_key(signed):
    bundle = next((signed / "ws/dist").glob("*.tar.gz"))
    base = json.loads((signed / "base.json").read_text())
    base["signatures"] = json.loads((signed / "signed.json").read_text())["signatures"]
    (signed / "signed-base.json").write_text(json.dumps(base))
    out = run(
        "card", str(bundle), "--trust", "keys/release.jwk.json", "--base", "signed-base.json",
        cwd=signed, check=False,
    )
    assert out.returncode == 1
    assert "card_invalid" in out.stderr and "--sign-key" in out.stderr
