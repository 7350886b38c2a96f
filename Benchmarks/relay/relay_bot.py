#!/usr/bin/env python3
"""The comparator: the minimal slixmpp relay bot a user would write instead of xmpp-bridge.

Logs in as the bot account and relays every chat message from one JID to another as
"[relay] nick: body". Nothing else: no queue, no delivery confirmation, no loop guard.

usage: relay_bot.py --jid BOT_JID --password-file F --source JID --target JID
                    [--host H --port P] [--ca-file PEM]
"""
import argparse
import asyncio
import ssl

import slixmpp


class RelayBot(slixmpp.ClientXMPP):
    def __init__(self, jid, password, source, target):
        super().__init__(jid, password)
        self.source = slixmpp.JID(source).bare
        self.target = target
        self.add_event_handler("session_start", self.start)
        self.add_event_handler("message", self.relay)

    async def start(self, _event):
        self.send_presence()
        await self.get_roster()
        print(f"relay_bot: online as {self.boundjid}", flush=True)

    def relay(self, msg):
        if msg["type"] in ("chat", "normal") and msg["from"].bare == self.source and msg["body"]:
            self.send_message(mto=self.target, mbody=f"[relay] {msg['from'].user}: {msg['body']}", mtype="chat")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jid", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--source", required=True, help="relay messages from this JID")
    parser.add_argument("--target", required=True, help="... to this JID")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int, default=5222)
    parser.add_argument("--ca-file", help="extra CA certificate (self-signed server)")
    args = parser.parse_args()

    with open(args.password_file) as f:
        password = f.read().rstrip("\n")
    bot = RelayBot(args.jid, password, args.source, args.target)
    if args.ca_file:
        bot.ssl_context = ssl.create_default_context(cafile=args.ca_file)
    bot.enable_direct_tls = False  # STARTTLS, as the bridge uses
    bot.connect(host=args.host, port=args.port)
    asyncio.get_event_loop().run_forever()


if __name__ == "__main__":
    main()
