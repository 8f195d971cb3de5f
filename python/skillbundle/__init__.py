"""Load, serve and enforce a signed skill bundle from a Python A2A agent.

Every check runs in the Rust library that `skillbundle build` and `skillbundle verify`
use: signatures, digests, strict I-JSON, JCS, the Skill Interface Schema, schema
governance, and the draft's request/result checks. This package only carries values
across. `skillbundle.a2a` wraps an a2a-sdk `AgentExecutor` (install `skillbundle[a2a]`).

    bundle = skillbundle.Bundle.open("bundle.tar.gz", trust=["vendor.jwk.json"])
    # or, at start-up, from an OCI registry with keep-last-good and anti-rollback:
    bundle = skillbundle.Bundle.fetch("oci://registry.example.com/skills/net:stable",
                                      trust=["vendor.jwk.json"], state="/var/lib/agent").bundle
    match bundle.check_request(data):
        case skillbundle.Describe(skill_id): ...
        case skillbundle.Invoke(skill_id, arguments): ...
"""

from skillbundle._errors import BundleRefused, CardInvalid, InterfaceError
from skillbundle._native import EXTENSION_URI, Bundle, Describe, Fetched, Invoke, __version__

__all__ = [
    "EXTENSION_URI",
    "Bundle",
    "BundleRefused",
    "CardInvalid",
    "Describe",
    "Fetched",
    "InterfaceError",
    "Invoke",
    "__version__",
]
