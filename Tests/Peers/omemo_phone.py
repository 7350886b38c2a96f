"""A test peer (issue 41): an OMEMO phone. slixmpp with slixmpp-omemo (OMEMO 0.3, the
eu.siacs.conversations.axolotl namespace Conversations, Dino and Gajim use), its keys kept
in a JSON file (a restart is the same device), blind trust before verification.

It prints one JSON line per event on stdout:
  {"event": "online", "device": N}
  {"event": "message", "from": JID, "id": ID, "origin_id": ID, "body": TEXT, "encrypted": BOOL}
  {"event": "undecryptable", "from": JID, "id": ID, "error": TEXT}
  {"event": "sent", "id": ID, "encrypted": BOOL}
and takes one JSON command per line on a Unix socket (--control):
  {"send": TEXT, "to": JID, "id": ID, "encrypted": BOOL}   (encrypted by default)
  {"refresh": JID}   (read JID's device list again)
"""
import argparse
import asyncio
import json
import logging
import ssl
import sys
from pathlib import Path
from typing import Any, Dict, FrozenSet, Optional

from omemo.storage import Just, Maybe, Nothing, Storage
from omemo.types import DeviceInformation, JSONType
import slixmpp
from slixmpp.jid import JID
from slixmpp.plugins import register_plugin
from slixmpp_omemo import XEP_0384


class FileStorage(Storage):
    """Everything OMEMO keeps, in one JSON file written at each change."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.data: Dict[str, JSONType] = {}
        if path.exists():
            self.data = json.loads(path.read_text())

    async def _load(self, key: str) -> Maybe[JSONType]:
        return Just(self.data[key]) if key in self.data else Nothing()

    async def _store(self, key: str, value: JSONType) -> None:
        self.data[key] = value
        self.save()

    async def _delete(self, key: str) -> None:
        self.data.pop(key, None)
        self.save()

    def save(self) -> None:
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.data))
        temporary.replace(self.path)


class PhoneOMEMO(XEP_0384):
    default_config = {"fallback_message": "I sent you an OMEMO encrypted message.", "data_file": None}

    def plugin_init(self) -> None:
        self._storage = FileStorage(Path(self.data_file))
        super().plugin_init()

    @property
    def storage(self) -> Storage:
        return self._storage

    @property
    def _btbv_enabled(self) -> bool:
        return True

    async def _devices_blindly_trusted(self, blindly_trusted: FrozenSet[DeviceInformation], identifier: Optional[str]) -> None:
        pass

    async def _prompt_manual_trust(self, manually_trusted: FrozenSet[DeviceInformation], identifier: Optional[str]) -> None:
        pass


register_plugin(PhoneOMEMO)


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


class Phone(slixmpp.ClientXMPP):
    def __init__(self, jid: str, password: str) -> None:
        super().__init__(jid, password)
        self.add_event_handler("message", self.on_message)

    async def on_message(self, stanza: slixmpp.Message) -> None:
        if stanza["type"] not in ("chat", "normal"):
            return
        omemo: XEP_0384 = self.plugin["xep_0384"]
        origin = stanza.xml.find("{urn:xmpp:sid:0}origin-id")
        fields = {"from": stanza["from"].bare, "id": stanza["id"], "origin_id": origin.get("id") if origin is not None else None}
        if not omemo.is_encrypted(stanza):
            if stanza["body"]:
                emit(event="message", body=stanza["body"], encrypted=False, **fields)
            return
        try:
            message, _ = await omemo.decrypt_message(stanza)
        except Exception as error:  # every failure is an event the test counts
            emit(event="undecryptable", error=f"{type(error).__name__}: {error}", **fields)
            return
        if message["body"]:
            emit(event="message", body=message["body"], encrypted=True, **fields)

    async def send_text(self, body: str, to: str, message_id: Optional[str], encrypted: bool) -> None:
        message = self.make_message(mto=JID(to), mtype="chat")
        message["body"] = body
        if message_id:
            message["id"] = message_id
        if not encrypted:
            message.send()
            emit(event="sent", id=message["id"], encrypted=False)
            return
        omemo: XEP_0384 = self.plugin["xep_0384"]
        message.set_from(self.boundjid)
        encrypted_message, errors = await omemo.encrypt_message(message, {JID(to)})
        if encrypted_message is not None:
            encrypted_message["eme"]["namespace"] = "eu.siacs.conversations.axolotl"
            encrypted_message["eme"]["name"] = "OMEMO"
            if message_id:
                encrypted_message["id"] = message_id
            encrypted_message.send()
        emit(event="sent", id=message["id"], encrypted=encrypted_message is not None, errors=[str(error) for error in errors])


    async def send_burst(self, bodies: list, to: str) -> None:
        """`bodies` encrypted first, then written at once: the bridge reads them together."""
        omemo: XEP_0384 = self.plugin["xep_0384"]
        sealed = []
        for body in bodies:
            message = self.make_message(mto=JID(to), mtype="chat")
            message["body"] = body
            message.set_from(self.boundjid)
            encrypted_message, _ = await omemo.encrypt_message(message, {JID(to)})
            encrypted_message["eme"]["namespace"] = "eu.siacs.conversations.axolotl"
            encrypted_message["eme"]["name"] = "OMEMO"
            sealed.append(encrypted_message)
        for message in sealed:
            message.send()
        emit(event="burst-sent", count=len(sealed))


async def control(phone: Phone, path: str) -> None:
    async def serve(reader: asyncio.StreamReader, _writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            command = json.loads(line)
            try:
                if "send" in command:
                    await phone.send_text(command["send"], command["to"], command.get("id"), command.get("encrypted", True))
                elif "burst" in command:
                    await phone.send_burst(command["burst"], command["to"])
                elif "refresh" in command:
                    await phone.plugin["xep_0384"].refresh_device_lists({JID(command["refresh"])}, force_download=True)
                    emit(event="refreshed", jid=command["refresh"])
            except Exception as error:
                emit(event="error", command=command, error=f"{type(error).__name__}: {error}")

    await asyncio.start_unix_server(serve, path=path)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jid", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca-file", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--control", required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    phone = Phone(args.jid, args.password)
    phone.register_plugin("xep_0199")
    phone.register_plugin("xep_0380")
    phone.register_plugin("xep_0384", {"data_file": args.data}, module=sys.modules[__name__])
    phone.ssl_context = ssl.create_default_context(cafile=args.ca_file)
    online = asyncio.get_running_loop().create_future()

    async def started(_: Any) -> None:
        phone.send_presence()
        await phone.get_roster()
        manager = await phone.plugin["xep_0384"].get_session_manager()
        own, _ = await manager.get_own_device_information()
        if not online.done():
            online.set_result(own.device_id)

    phone.add_event_handler("session_start", started)
    phone.add_event_handler("failed_auth", lambda _: online.done() or online.set_exception(RuntimeError("authentication failed")))
    phone.connect(host=args.host, port=args.port)
    device = await asyncio.wait_for(online, 30)
    await control(phone, args.control)
    emit(event="online", device=device)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
