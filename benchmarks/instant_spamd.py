"""``python -m benchmarks.instant_spamd``: a spamd that answers every CHECK at once, "not spam",
without reading what the message says: what spamc costs on this machine at this time (its
process started, a connection made, the message sent, a reply read) with no filter behind
it; the floor under any spamd's latency through spamc (the serve section's row for it).

It prints ``listening on 127.0.0.1:PORT`` and serves until it is killed; one asyncio loop
in one process, as ``streamnb serve`` is.
"""

from __future__ import annotations

import asyncio

REPLY = b"SPAMD/1.1 0 EX_OK\r\nSpam: False ; 0.0 / 9.0\r\n\r\n"


async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        await reader.readexactly(length)
        writer.write(REPLY)
        await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(answer, "127.0.0.1", 0, limit=1 << 16)
    print(f"listening on 127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
