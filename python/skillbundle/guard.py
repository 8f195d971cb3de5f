"""Read every A2A request body strictly before a2a-sdk does (`RequestGuard`).

a2a-sdk reads JSON-RPC bodies with Python's `json` module: of duplicate members the
last wins, integers beyond 2^53 become rounded doubles, UTF-16 and UTF-32 text is
decoded. Its HTTP+JSON binding reads the same bytes with protobuf's parser, which
refuses some of that and not the rest. Neither is the I-JSON the draft requires, and a
skill request object read two ways is checked in one form and acted on in another.

`RequestGuard` is ASGI middleware around the SDK's app. For each request with a body it
reads the body, at most `Limits.max_body_bytes` of it, and hands it to the library's
strict reader (the one every JSON value of skillbundle goes through: UTF-8 only, no
duplicate members, integers within ±(2^53−1), `Limits.max_depth` and
`Limits.max_values`). Only a body that passes reaches the SDK, byte for byte as it came.
Otherwise the request is answered in the binding's own form, the same for both:

* text that is not I-JSON: the binding's parse error: JSON-RPC `-32700` (HTTP 200,
  `id` null), HTTP+JSON `400 INVALID_ARGUMENT`, as the SDK answers malformed JSON;
* a body beyond a limit: the binding's invalid-request error (JSON-RPC `-32600`,
  HTTP+JSON `400 INVALID_ARGUMENT`) whose `google.rpc.ErrorInfo` detail carries the
  draft's condition, `metadata: {"code": "resource_limit_exceeded"}`, as the draft says
  a server-side error before task creation is carried. No task is created.

Messages name the class of fault and its line and column, never the body's text. Which
requests are JSON-RPC is given by path (`jsonrpc_paths`, the `rpc_url` given to
`create_jsonrpc_routes`); every other request with a body is read as HTTP+JSON.

    app = RequestGuard(Starlette(routes=...), jsonrpc_paths=["/"], limits=Limits())
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from a2a.server.jsonrpc_models import JSONParseError
from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.utils.error_handlers import build_rest_error_payload
from a2a.utils.errors import InvalidRequestError
from google.protobuf.json_format import ParseError

from skillbundle._native import RESOURCE_LIMIT_EXCEEDED, body_too_large, check_body
from skillbundle.limits import Limits

__all__ = ["Limits", "RequestGuard"]


class RequestGuard:
    """ASGI middleware: request bodies are read strictly and within `limits` before the
    wrapped app sees them (see the module documentation)."""

    def __init__(
        self,
        app: Any,
        *,
        jsonrpc_paths: Iterable[str] = ("/",),
        limits: Limits | None = None,
    ) -> None:
        self.app = app
        self.jsonrpc_paths = frozenset(jsonrpc_paths)
        self.limits = limits if limits is not None else Limits()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        jsonrpc = scope.get("path") in self.jsonrpc_paths
        limit = self.limits.max_body_bytes
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            # Read the rest only if the client is sending it anyway and it is not huge.
            drained = declared <= 2 * limit and not _expects_continue(scope) and await _drain(receive, 2 * limit)
            await _refuse(send, jsonrpc, *body_too_large(max_body_bytes=limit), close=not drained)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client went away: nothing to answer
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                drained = message.get("more_body", False) is False or await _drain(receive, 2 * limit - size)
                await _refuse(send, jsonrpc, *body_too_large(max_body_bytes=limit), close=not drained)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body:
            fault = check_body(body, max_depth=self.limits.max_depth, max_values=self.limits.max_values)
            if fault is not None:
                await _refuse(send, jsonrpc, *fault)
                return

        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _drain(receive: Any, budget: int) -> bool:
    """Read and drop the rest of a refused body, at most `budget` bytes: whether it
    ended. A server that answers and closes while the client is still sending makes the
    client's kernel reset the connection, and the client loses the answer; a body read
    to its end gets its answer (and the connection can be kept). Beyond the budget the
    connection is closed instead: a refused body costs at most twice the limit to read,
    never memory."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return False
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return True
        if budget < 0:
            return False


def _expects_continue(scope: dict[str, Any]) -> bool:
    """A client that sent `Expect: 100-continue` sends no body until told to, so a
    refusal needs nothing read (reading would ask it for the body)."""
    return any(name.lower() == b"expect" and value.lower() == b"100-continue" for name, value in scope.get("headers", []))


def _content_length(scope: dict[str, Any]) -> int | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _refuse(send: Any, jsonrpc: bool, kind: str, message: str, *, close: bool = False) -> Any:
    """Answer with the binding's parse error (`kind` "parse") or its invalid-request
    error carrying `resource_limit_exceeded` (`kind` "limit"). With `close`, the body was
    not read to its end, so the connection is not kept for another request."""
    if kind == "parse":
        error: Any = JSONParseError(message=message) if jsonrpc else ParseError(message)
    else:
        error = InvalidRequestError(message=message, data={"code": RESOURCE_LIMIT_EXCEEDED})
    if jsonrpc:
        status, payload = 200, build_error_response(None, error)
    else:
        payload = build_rest_error_payload(error)
        status = payload["error"]["code"]
    return _send_json(send, status, payload, close)


async def _send_json(send: Any, status: int, payload: dict[str, Any], close: bool) -> None:
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
