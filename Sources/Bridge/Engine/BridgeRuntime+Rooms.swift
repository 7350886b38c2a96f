import AccountTransport
import TransportCore
import XMPP

/// Rooms (XEP-0045) as channel members: each account is told which rooms to sit in,
/// whenever the routing table changes (start, SIGHUP, `route add|remove`) or the account
/// is started anew. Joins and leaves happen without dropping the account's connection.
extension BridgeRuntime {
    /// Tells every running account its rooms, from the routing table now.
    package func applyRooms(channels: [RelayChannel]? = nil) async {
        guard let channels = channels ?? (try? self.channels()) else { return }
        let configuration = self.currentConfiguration
        var wanted: [String: [RoomConfiguration]] = [:]
        for member in channels.flatMap(\.members) {
            guard let room = member.room, let account = configuration.accounts[member.endpoint.transport],
                let address = member.endpoint.address, let jid = try? JID(address)
            else { continue }
            guard wanted[account.name]?.contains(where: { $0.jid == jid.bare }) != true else { continue }
            let password: String?
            do {
                password = try Self.roomPassword(room)
            } catch {
                self.logger.error("room not joined: cannot read its password", metadata: ["room": "\(jid)", "error": "\(error)"])
                continue
            }
            let nick = room.nick ?? account.client.jid.localpart ?? "bridge"
            wanted[account.name, default: []].append(RoomConfiguration(jid: jid, nick: nick, password: password))
        }
        // Without its stored cursor a room's catch-up would start at the archive's end and
        // skip everything since: no rooms change until the cursors can be read.
        let positions: [String: String]
        do {
            positions = try self.storeForStatus.resumePoints()
        } catch {
            self.logger.error("rooms not joined or changed: their archive cursors cannot be read; tried again on the next reload, route change or `xmpp-bridge reconnect` of an account", metadata: ["error": "\(error)"])
            return
        }
        for name in configuration.accounts.keys.sorted() {
            guard let transport = self.capabilities(of: name).rooms else { continue }
            let rooms = wanted[name] ?? []
            var cursors: [JID: ArchiveCursor] = [:]
            for room in rooms {
                if let cursor = positions[transport.resumeKey(room: room.jid)].flatMap(ArchiveCursor.init) {
                    cursors[room.jid] = cursor
                }
            }
            await transport.setRooms(rooms, cursors: cursors)
        }
    }

    /// The room password from its file or environment variable; nil when it has none.
    package static func roomPassword(_ room: RoomMembership) throws -> String? {
        if let file = room.passwordFile { return try PasswordSource.file(file).read() }
        if let variable = room.passwordEnvironment { return try PasswordSource.environment(variable).read() }
        return nil
    }
}

extension BridgeRuntime {
    /// Every running account's rooms and their state, by account and room.
    package func roomEntries() async -> [ControlResponse.RoomEntry] {
        var entries: [ControlResponse.RoomEntry] = []
        for name in self.currentConfiguration.accounts.keys.sorted() {
            guard let transport = self.capabilities(of: name).rooms else { continue }
            for room in await transport.roomStatuses() {
                entries.append(
                    ControlResponse.RoomEntry(
                        account: name, room: room.jid, nick: room.nick, state: room.state.rawValue, reason: room.reason, occupants: room.occupants
                    )
                )
            }
        }
        return entries
    }
}
