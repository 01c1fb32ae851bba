"""A TCP forwarder, run as a process: `python forwarder.py LISTEN_HOST:PORT TARGET_HOST:PORT`.

The cluster's machines reach the root namespace's PostgreSQL (which listens on loopback only)
through it, on the bridge's address. Prints "forwarding" once it listens."""

from __future__ import annotations

import asyncio
import contextlib
import sys


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            writer.close()


async def main(listen: str, target: str) -> None:
    target_host, _, target_port = target.rpartition(":")

    async def forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(target_host, int(target_port))
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))

    host, _, port = listen.rpartition(":")
    server = await asyncio.start_server(forward, host, int(port))
    print("forwarding", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: forwarder.py LISTEN_HOST:PORT TARGET_HOST:PORT")
    asyncio.run(main(sys.argv[1], sys.argv[2]))
