"""The request limits an agent enforces (the draft's "Resource limits" section).

The draft requires an implementation to limit payload size and nesting, among others,
and to refuse what exceeds a limit with `resource_limit_exceeded`; it sets no numbers.
`Limits` holds them, with the library's defaults (Rust `agent::body::BodyLimits`, safe
for an agent on the open network, stated in the README's Python section); change them
per agent:

    RequestGuard(app, limits=Limits(max_body_bytes=4 << 20))

`skillbundle.guard.RequestGuard` applies them to each request body before a2a-sdk reads
it, so an oversized or overdeep request costs a bounded read and one pass of the strict
reader, never the SDK's conversions.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from skillbundle._native import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_DEPTH, DEFAULT_MAX_VALUES

__all__ = ["Limits"]


@dataclass(frozen=True)
class Limits:
    """Request limits; each must be a positive integer. One shape for every limit of the
    package: the request guard reads the three below; limits the executor enforces belong
    here too.

    * `max_body_bytes`: the largest request body read, in bytes (1 MiB). A body beyond
      it is refused as soon as the bytes read so far, or its `Content-Length`, exceed
      it: it is never buffered whole. The rest of a refused body, up to twice the limit
      in all, is read and dropped first, so that the client gets the answer rather than
      a reset connection.
    * `max_depth`: the deepest nesting of the body's JSON text, counted from its root
      (37: what a2a-sdk's protobuf parser can carry, a Data Part nested at most 32
      levels). A skill request object's `arguments` sit 7 levels down in a JSON-RPC
      body, 6 in an HTTP+JSON one.
    * `max_values`: the most JSON values in the body, every object member and array
      element counted (20,000): what parsing and the SDK's conversions cost grows with
      them, not with the bytes (`[]` is two bytes and a whole value).
    """

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH
    max_values: int = DEFAULT_MAX_VALUES

    def __post_init__(self) -> None:
        # Every limit is a positive int: a limit added here is checked without more code.
        for field in fields(self):
            value = getattr(self, field.name)
            if type(value) is not int or value < 1:
                raise ValueError(f"Limits.{field.name} must be a positive int, not {value!r}")
