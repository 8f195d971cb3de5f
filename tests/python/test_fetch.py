"""`Bundle.fetch`: a Python agent's start-up from the real CNCF Distribution registry
(Debian's `docker-registry`, installed by scripts/registry-tools, started here on
127.0.0.1 with a free port): pull and verify, keep-last-good, anti-rollback, deadlines and
the referrer signature, through the same library code as `skillbundle pull --state`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillbundle import Bundle, BundleRefused

from conftest import ROOT, Signed, cli_json, run_cli


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Registry:
    """A CNCF Distribution registry on 127.0.0.1, storage in a temporary directory."""

    def __init__(self, directory: Path) -> None:
        binary = shutil.which("docker-registry")
        if binary is None:
            why = "the registry tests need docker-registry: run scripts/registry-tools"
            if os.environ.get("CI") == "true":
                pytest.fail(why)
            pytest.skip(why)
        self.port = free_port()
        directory.mkdir(parents=True, exist_ok=True)
        config = directory / "config.yml"
        config.write_text(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\n"
            f"storage:\n  filesystem:\n    rootdirectory: {directory / 'data'}\n"
            f"http:\n  addr: 127.0.0.1:{self.port}\n"
        )
        self.process = subprocess.Popen(
            [binary, "serve", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the registry did not start"
                time.sleep(0.05)

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    r = Registry(tmp_path / "registry")
    yield r
    r.stop()


@pytest.fixture(scope="session")
def next_version(signed: Signed, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example workspace as 0.2.0, signed by the same key."""
    d = tmp_path_factory.mktemp("next")
    shutil.copytree(ROOT / "example-skills", d / "ws", ignore=shutil.ignore_patterns("dist"))
    manifest = d / "ws" / "skillbundle.yaml"
    text = manifest.read_text()
    assert 'version: "0.1.0"' in text
    manifest.write_text(text.replace('version: "0.1.0"', 'version: "0.2.0"'))
    run_cli("build", d / "ws", "--out", d / "dist", "--sign-key", signed.dir / "vendor.key")
    (bundle,) = (d / "dist").glob("*.tar.gz")
    return bundle


def push(bundle: Path, reference: str, signed: Signed) -> dict:
    return cli_json("push", bundle, reference, "--trust", signed.jwk, "--plain-http")


def test_fetch_keeps_the_last_good_bundle_and_refuses_rollbacks(
    registry: Registry, signed: Signed, next_version: Path, tmp_path: Path
) -> None:
    stable = f"{registry.host}/skills/net:stable"
    state = tmp_path / "state"
    fetch = lambda **kw: Bundle.fetch(  # noqa: E731
        f"oci://{stable}", trust=[signed.jwk], state=state, plain_http=True, **kw
    )

    pushed = push(signed.bundle, stable, signed)
    first = fetch()
    assert first.source == "registry"
    assert first.bundle.name == "example-network-skills" and first.bundle.version == "0.1.0"
    assert first.bundle.verified
    assert first.pinned == f"{registry.host}/skills/net@{pushed['digest']}"
    assert first.previous_version is None and first.refused == []
    assert Path(first.file).read_bytes() == signed.bundle.read_bytes()
    # The same rules as the CLI: the bundle it loaded is the one `verify` accepts.
    assert cli_json("verify", first.file, "--trust", signed.jwk)["ok"]

    push(next_version, stable, signed)
    second = fetch(require_referrer_signature=True)
    assert (second.source, second.bundle.version, second.previous_version) == ("registry", "0.2.0", "0.1.0")

    # The tag moved back to 0.1.0 (signed, valid, older): refused; the agent runs on 0.2.0.
    push(signed.bundle, stable, signed)
    rolled = fetch()
    assert (rolled.source, rolled.bundle.version) == ("last_good", "0.2.0")
    assert [f["code"] for f in rolled.refused] == ["rollback_refused"]
    # The operator's deliberate downgrade.
    forced = fetch(allow_rollback=True)
    assert (forced.source, forced.bundle.version) == ("registry", "0.1.0")

    # The registry goes away: the last good bundle, and the reason.
    registry.stop()
    offline = fetch(timeout=20)
    assert (offline.source, offline.bundle.version) == ("last_good", "0.1.0")
    assert offline.refused[0]["code"] == "registry_error"
    # Nothing kept and nothing reachable: nothing to start on.
    with pytest.raises(BundleRefused) as refused:
        Bundle.fetch(f"oci://{stable}", trust=[signed.jwk], state=tmp_path / "empty", plain_http=True)
    assert refused.value.codes == ["registry_error"]


def test_a_registry_that_never_answers_is_cut_off_by_the_deadline(signed: Signed, tmp_path: Path) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        host = "127.0.0.1:%d" % silent.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(BundleRefused) as refused:
            Bundle.fetch(
                f"oci://{host}/skills/net:stable",
                trust=[signed.jwk],
                state=tmp_path / "state",
                plain_http=True,
                timeout=1.5,
            )
        elapsed = time.monotonic() - started
    assert refused.value.codes == ["registry_error"]
    assert elapsed < 15, elapsed


def test_fetch_requires_trust_and_sane_arguments(signed: Signed, tmp_path: Path) -> None:
    reference = "oci://127.0.0.1:1/skills/net:stable"
    with pytest.raises(ValueError, match="trust is empty"):
        Bundle.fetch(reference, trust=[], state=tmp_path)
    with pytest.raises(TypeError):
        Bundle.fetch(reference, trust=str(signed.jwk), state=tmp_path)
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="timeout"):
            Bundle.fetch(reference, trust=[signed.jwk], state=tmp_path, timeout=bad)
    with pytest.raises(BundleRefused) as refused:
        Bundle.fetch("skills/net:stable", trust=[signed.jwk], state=tmp_path)
    assert refused.value.codes == ["artifact_not_found"]


def test_a_bundle_without_its_referrer_signature_is_refused_when_required(
    registry: Registry, signed: Signed, tmp_path: Path
) -> None:
    # `push` publishes the referrer; a copy by another tool does not: skopeo copies the
    # artifact alone.
    source = f"{registry.host}/skills/net:0.1.0"
    push(signed.bundle, source, signed)
    copy = f"{registry.host}/mirror/net:0.1.0"
    subprocess.run(
        ["skopeo", "copy", "--src-tls-verify=false", "--dest-tls-verify=false", f"docker://{source}", f"docker://{copy}"],
        check=True,
        capture_output=True,
    )
    fetched = Bundle.fetch(f"oci://{copy}", trust=[signed.jwk], state=tmp_path / "a", plain_http=True)
    assert fetched.source == "registry"
    with pytest.raises(BundleRefused) as refused:
        Bundle.fetch(
            f"oci://{copy}",
            trust=[signed.jwk],
            state=tmp_path / "b",
            plain_http=True,
            require_referrer_signature=True,
        )
    assert refused.value.codes == ["referrer_signature_missing"]


def test_max_age_requires_a_fresh_release_statement(registry: Registry, signed: Signed, tmp_path: Path) -> None:
    stale = f"{registry.host}/skills/net:0.1.0"
    push(signed.bundle, stale, signed)
    with pytest.raises(BundleRefused) as refused:
        Bundle.fetch(f"oci://{stale}", trust=[signed.jwk], state=tmp_path / "a", plain_http=True, max_age=3600)
    assert refused.value.codes == ["release_expired"]

    # The same bundle built again with a statement issued now, pushed with it.
    shutil.copytree(ROOT / "example-skills", tmp_path / "ws", ignore=shutil.ignore_patterns("dist"))
    run_cli("build", tmp_path / "ws", "--out", tmp_path / "dist", "--sign-key", signed.dir / "vendor.key", "--expires", "1d")
    (bundle,) = (tmp_path / "dist").glob("*.tar.gz")
    assert bundle.read_bytes() == signed.bundle.read_bytes()
    fresh = f"{registry.host}/skills/fresh:0.1.0"
    push(bundle, fresh, signed)
    fetched = Bundle.fetch(f"oci://{fresh}", trust=[signed.jwk], state=tmp_path / "b", plain_http=True, max_age=3600)
    assert fetched.source == "registry"
    with pytest.raises(ValueError, match="max_age"):
        Bundle.fetch(f"oci://{fresh}", trust=[signed.jwk], state=tmp_path / "c", max_age=-5)
