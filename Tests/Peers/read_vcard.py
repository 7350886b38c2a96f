"""A test peer (issue 25): logs in with slixmpp, reads JID's vCard (XEP-0054) and prints
what it says as one JSON line: nick, full name, photo type and the SHA-1 of the photo's
bytes. Exit status 1 when it cannot log in or read."""
import argparse
import asyncio
import hashlib
import json
import logging
import ssl
import sys

import slixmpp


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jid", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca-file", required=True)
    parser.add_argument("target")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)  # stdout is the JSON line alone
    client = slixmpp.ClientXMPP(args.jid, args.password)
    client.register_plugin("xep_0054")
    context = ssl.create_default_context(cafile=args.ca_file)
    client.ssl_context = context
    online = asyncio.get_running_loop().create_future()
    client.add_event_handler("session_start", lambda _: online.done() or online.set_result(True))
    client.add_event_handler("failed_auth", lambda _: online.done() or online.set_exception(RuntimeError("authentication failed")))
    client.connect(host=args.host, port=args.port)
    await asyncio.wait_for(online, 20)
    reply = await client.plugin["xep_0054"].get_vcard(args.target, cached=False, timeout=20)
    card = reply["vcard_temp"]
    photo = card["PHOTO"]
    binval = photo["BINVAL"] if photo is not None else b""
    nick = card["NICKNAME"]
    if isinstance(nick, list):  # slixmpp gives NICKNAME as a list of nicknames
        nick = nick[0] if nick else None
    print(json.dumps({
        "nick": nick or None,
        "fullName": card["FN"] or None,
        "photoType": (photo["TYPE"] or None) if photo is not None else None,
        "photoHash": hashlib.sha1(binval).hexdigest() if binval else None,
    }), flush=True)
    client.disconnect()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as error:  # a clear line for the test's failure message
        print(f"read_vcard.py: {error!r}", file=sys.stderr)
        sys.exit(1)
