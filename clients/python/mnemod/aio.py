"""AsyncClient: the same methods as :class:`mnemod.Client`, awaitable.

Each call runs the synchronous client in a worker thread (``asyncio.to_thread``), so the
event loop never blocks on the network and the package stays dependency-free. The
iterators (``iter_segments``, ``export``, ``export_lines``) are async generators.

    async with AsyncClient("http://127.0.0.1:6636") as c:
        hits = await c.retrieve("agent", "staging password", half_life="7d")
"""

from __future__ import annotations

import asyncio
import functools
from typing import (TYPE_CHECKING, Any, AsyncIterator, Callable, Coroutine, Dict, Iterator, List,
                    Optional, TypeVar)

from .client import Client
from .types import Segment

if TYPE_CHECKING:  # only for the checker: the signatures below are strings at run time
    from typing_extensions import Concatenate, ParamSpec
    _P = ParamSpec("_P")
_R = TypeVar("_R")
_BATCH = 256  # items pulled from a synchronous iterator per thread hop


def _awaitable(fn: Callable[Concatenate[Client, _P], _R]
               ) -> Callable[Concatenate[AsyncClient, _P], Coroutine[Any, Any, _R]]:
    """Client.fn as an AsyncClient method with the same parameters, run in a thread."""
    name = fn.__name__

    @functools.wraps(fn)
    async def call(self: AsyncClient, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return await asyncio.to_thread(getattr(self.sync, name), *args, **kwargs)
    return call


class AsyncClient:
    """Takes the same arguments as :class:`mnemod.Client` (or ``client=`` an existing one)."""

    def __init__(self, *args: Any, client: Optional[Client] = None, **kwargs: Any) -> None:
        self.sync = client if client is not None else Client(*args, **kwargs)

    async def close(self) -> None:
        self.sync.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _drain(self, it: Iterator[Any]) -> AsyncIterator[Any]:
        def pull() -> List[Any]:
            out = []
            for x in it:
                out.append(x)
                if len(out) >= _BATCH:
                    break
            return out
        while True:
            batch = await asyncio.to_thread(pull)
            if not batch:
                return
            for x in batch:
                yield x

    health = _awaitable(Client.health)
    metrics = _awaitable(Client.metrics)
    openapi = _awaitable(Client.openapi)
    list_namespaces = _awaitable(Client.list_namespaces)
    create_namespace = _awaitable(Client.create_namespace)
    get_namespace = _awaitable(Client.get_namespace)
    delete_namespace = _awaitable(Client.delete_namespace)
    insert = _awaitable(Client.insert)
    insert_batch = _awaitable(Client.insert_batch)
    get_segment = _awaitable(Client.get_segment)
    delete_segment = _awaitable(Client.delete_segment)
    update_segment = _awaitable(Client.update_segment)
    list_segments = _awaitable(Client.list_segments)
    retrieve = _awaitable(Client.retrieve)
    compact = _awaitable(Client.compact)
    export_to = _awaitable(Client.export_to)
    import_segments = _awaitable(Client.import_segments)
    cluster_status = _awaitable(Client.cluster_status)
    cluster_snapshot = _awaitable(Client.cluster_snapshot)
    request = _awaitable(Client.request)

    def iter_segments(self, ns: str, **kw: Any) -> AsyncIterator[Segment]:
        """Every segment of the listing, page after page."""
        return self._drain(self.sync.iter_segments(ns, **kw))

    def export_lines(self, ns: str) -> AsyncIterator[bytes]:
        """The namespace's export as raw NDJSON lines."""
        return self._drain(self.sync.export_lines(ns))

    def export(self, ns: str) -> AsyncIterator[Dict[str, Any]]:
        """The namespace's export, one JSON object per stored segment."""
        return self._drain(self.sync.export(ns))
