"""A task store whose memory stays bounded under load (`BoundedTaskStore`).

a2a-sdk's `InMemoryTaskStore` keeps every Task it ever saw: about 13 KiB per request for
the worked example, so a long-running agent grows without end. `BoundedTaskStore` is that
store with a bound on finished tasks: it keeps at most `max_finished` tasks in a terminal
state (completed, failed, canceled, rejected), and when one more finishes, the one that
finished longest ago is deleted. A task still in progress, or waiting for input or
authorization, is never evicted: a client may still continue it. A client that asks
for an evicted task gets the binding's task-not-found error, as for any unknown task.

It uses only the store's public interface (`save`, `delete`), so its owner scoping and
copying are the SDK's own.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import OwnerResolver, resolve_user_scope
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import Task, TaskState

from skillbundle._native import is_terminal

__all__ = ["BoundedTaskStore"]



class BoundedTaskStore(InMemoryTaskStore):
    """`InMemoryTaskStore` keeping at most `max_finished` terminal tasks (least recently
    finished evicted first); tasks not yet terminal are always kept."""

    def __init__(
        self,
        max_finished: int = 1000,
        *,
        owner_resolver: OwnerResolver = resolve_user_scope,
        use_copying: bool = True,
    ) -> None:
        if type(max_finished) is not int or max_finished < 1:
            raise ValueError(f"max_finished must be a positive int, not {max_finished!r}")
        super().__init__(owner_resolver=owner_resolver, use_copying=use_copying)
        self.max_finished = max_finished
        self._owner = owner_resolver
        # (owner, task id) -> the context to delete it with, oldest finished first.
        self._finished: OrderedDict[tuple[Any, str], ServerCallContext] = OrderedDict()

    async def save(self, task: Task, context: ServerCallContext) -> None:
        await super().save(task, context)
        key = (self._owner(context), task.id)
        if not is_terminal(TaskState.Name(task.status.state)):
            self._finished.pop(key, None)
            return
        self._finished[key] = context
        self._finished.move_to_end(key)
        while len(self._finished) > self.max_finished:
            (_, task_id), old = self._finished.popitem(last=False)
            await super().delete(task_id, old)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        self._finished.pop((self._owner(context), task_id), None)
        await super().delete(task_id, context)
