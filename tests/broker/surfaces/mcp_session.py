"""An MCP client session with ``recall mcp`` spawned over stdio by the SDK's own client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .conftest import RECALL, Workspace


@asynccontextmanager
async def mcp_session(workspace: Workspace, *args: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=RECALL, args=["mcp", *args], env=workspace.env, cwd=workspace.root)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session
