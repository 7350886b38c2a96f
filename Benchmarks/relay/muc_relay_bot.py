#!/usr/bin/env python3
"""The comparator for rooms: the minimal slixmpp MUC relay bot a user would write instead.

Logs in as the bot account, joins the target room and the source room (no history), and
relays every groupchat message from an occupant of the source room other than itself to
the target room as "nick: body". Nothing else: no queue, no rejoin, no catch-up.

usage: muc_relay_bot.py --jid BOT_JID --password-file F --source ROOM --target ROOM
                        [--nick NICK] [--host H --port P] [--ca-file PEM]
"""
import argparse
import asyncio
import ssl

import slixmpp


class MucRelayBot(slixmpp.ClientXMPP):
    def __init__(self, jid, password, source, target, nick):
        super().__init__(jid, password)
        self.register_plugin("xep_0045")
        self.source = slixmpp.JID(source).bare
        self.target = slixmpp.JID(target).bare
        self.nick = nick
        self.add_event_handler("session_start", self.start)
        self.add_event_handler("groupchat_message", self.relay)

    async def start(self, _event):
        self.send_presence()
        await self.get_roster()
        muc = self.plugin["xep_0045"]
        await muc.join_muc_wait(self.target, self.nick, maxstanzas=0)
        await muc.join_muc_wait(self.source, self.nick, maxstanzas=0)
        print(f"muc_relay_bot: online as {self.boundjid}, {self.source} -> {self.target}", flush=True)

    def relay(self, msg):
        if msg["from"].bare == self.source and msg["mucnick"] != self.nick and msg["body"]:
            self.send_message(mto=self.target, mbody=f"{msg['mucnick']}: {msg['body']}", mtype="groupchat")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jid", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--source", required=True, help="relay messages from this room")
    parser.add_argument("--target", required=True, help="... to this room")
    parser.add_argument("--nick", default="bot")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int, default=5222)
    parser.add_argument("--ca-file", help="extra CA certificate (self-signed server)")
    args = parser.parse_args()

    with open(args.password_file) as f:
        password = f.read().rstrip("\n")
    bot = MucRelayBot(args.jid, password, args.source, args.target, args.nick)
    if args.ca_file:
        bot.ssl_context = ssl.create_default_context(cafile=args.ca_file)
    bot.enable_direct_tls = False  # STARTTLS, as the bridge uses
    bot.connect(host=args.host, port=args.port)
    asyncio.get_event_loop().run_forever()


if __name__ == "__main__":
    main()
