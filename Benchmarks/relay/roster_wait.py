#!/usr/bin/env python3
"""Waits, as a gateway user, until the gateway has offered COUNT puppets (XEP-0144 roster
item exchange suggestions), and prints one JSON line: {"items": n, "end": when the last
arrived (wall clock, seconds since the epoch)}.

usage: roster_wait.py --jid USER@DOMAIN/RES --password-file F --host H --port P --ca-file CA
                      --count N [--timeout S]
"""
import argparse
import asyncio
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load import make_client, online  # noqa: E402

RX = "http://jabber.org/protocol/rosterx"
import logging
logging.basicConfig(level=logging.DEBUG if os.environ.get("ROSTER_WAIT_DEBUG") else logging.WARNING)


async def wait(args):
    client = make_client(args.jid, args.password_file, args.ca_file)
    seen = set()
    done = asyncio.get_running_loop().create_future()

    def on_message(msg):
        for item in msg.xml.iter(f"{{{RX}}}item"):
            if item.get("action", "add") == "add":
                seen.add(item.get("jid"))
        if len(seen) >= args.count and not done.done():
            done.set_result(time.time())

    # A raw handler: slixmpp raises no "message" event for a message without a body.
    from slixmpp.xmlstream.handler import Callback
    from slixmpp.xmlstream.matcher import MatchXPath
    client.register_handler(Callback("rosterx", MatchXPath(f"{{jabber:client}}message/{{{RX}}}x"), on_message))
    await online(client, args.host, args.port)
    print("online", file=sys.stderr, flush=True)
    try:
        end = await asyncio.wait_for(done, args.timeout)
        print(json.dumps({"items": len(seen), "end": end}))
    except asyncio.TimeoutError:
        print(json.dumps({"items": len(seen), "end": None, "error": f"not all within {args.timeout} s"}))
    client.disconnect()


def main():
    parser = argparse.ArgumentParser()
    for name in ("jid", "password-file", "host", "ca-file"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=60)
    asyncio.run(wait(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
