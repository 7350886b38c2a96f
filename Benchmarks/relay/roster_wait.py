#!/usr/bin/env python3
"""Waits, as a gateway user, until the gateway has offered COUNT puppets (XEP-0144 roster
item exchange suggestions, or XEP-0356 pushes into the roster), and prints one JSON line:
{"items": n, "end": when the last arrived (wall clock, seconds since the epoch)}.

usage: roster_wait.py --jid USER@DOMAIN/RES --password-file F --host H --port P --ca-file CA
                      --count N [--timeout S]
"""
import argparse
import asyncio
import json
import ssl
import sys
import time

import slixmpp

RX = "http://jabber.org/protocol/rosterx"


def main():
    parser = argparse.ArgumentParser()
    for name in ("jid", "password-file", "host", "ca-file"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    with open(args.password_file) as f:
        password = f.read().strip()
    client = slixmpp.ClientXMPP(args.jid, password)
    context = ssl.create_default_context(cafile=args.ca_file)
    client.ssl_context = context
    seen = set()
    done = asyncio.get_event_loop().create_future()

    def finish():
        if not done.done():
            done.set_result(time.time())

    def on_message(msg):
        for item in msg.xml.iter(f"{{{RX}}}item"):
            if item.get("action", "add") == "add":
                seen.add(item.get("jid"))
        if len(seen) >= args.count:
            finish()

    def on_roster(_):
        seen.update(j for j in client.client_roster.keys() if "\\40" in j)
        if len(seen) >= args.count:
            finish()

    client.add_event_handler("message", on_message)
    client.add_event_handler("roster_update", on_roster)
    client.add_event_handler("session_start", lambda _: client.send_presence())
    client.connect(host=args.host, port=args.port)

    async def wait():
        try:
            end = await asyncio.wait_for(done, args.timeout)
            print(json.dumps({"items": len(seen), "end": end}))
        except asyncio.TimeoutError:
            print(json.dumps({"items": len(seen), "end": None, "error": f"not all within {args.timeout} s"}))
        client.disconnect()

    asyncio.get_event_loop().run_until_complete(wait())


if __name__ == "__main__":
    sys.exit(main())
