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
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional

from .client import Client
from .types import Segment

_METHODS = ("health", "metrics", "openapi", "list_namespaces", "create_namespace",
            "get_namespace", "delete_namespace", "insert", "insert_batch", "get_segment",
            "delete_segment", "update_segment", "list_segments", "retrieve", "compact",
            "export_to", "import_segments", "cluster_status", "cluster_snapshot", "request")
_BATCH = 256  # items pulled from a synchronous iterator per thread hop


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

    def iter_segments(self, ns: str, **kw: Any) -> AsyncIterator[Segment]:
        """Every segment of the listing, page after page."""
        return self._drain(self.sync.iter_segments(ns, **kw))

    def export_lines(self, ns: str) -> AsyncIterator[bytes]:
        """The namespace's export as raw NDJSON lines."""
        return self._drain(self.sync.export_lines(ns))

    def export(self, ns: str) -> AsyncIterator[Dict[str, Any]]:
        """The namespace's export, one JSON object per stored segment."""
        return self._drain(self.sync.export(ns))


def _wrap(name: str) -> Any:
    fn = getattr(Client, name)

    @functools.wraps(fn)
    async def call(self: AsyncClient, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self.sync, name), *args, **kwargs)
    return call


for _name in _METHODS:
    setattr(AsyncClient, _name, _wrap(_name))
