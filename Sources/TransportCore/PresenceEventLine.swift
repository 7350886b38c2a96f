import Foundation

/// The JSON line for a presence event:
/// `{"event":"presence","channel":…,"contact":…,"nick":…,"availability":…,"status":…}`.
public enum PresenceEventLine {
    struct Record: Encodable {
        var event = "presence"
        var channel: String
        var contact: String
        var nick: String
        var availability: String
        var status: String?
    }

    struct OccupantRecord: Encodable {
        var event = "occupant"
        var channel: String
        var room: String
        var nick: String
        /// `joined` or `left`.
        var change: String
    }

    /// `{"event":"occupant","channel":…,"room":…,"nick":…,"change":"joined"|"left"}`.
    public static func occupantJSON(channel: String, room: Endpoint, nick: String, joined: Bool) -> String {
        Self.encode(OccupantRecord(channel: channel, room: room.description, nick: nick, change: joined ? "joined" : "left"))
    }

    static func encode(_ record: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(record)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    public static func json(channel: String, contact: Endpoint, nick: String, state: PresenceState) -> String {
        Self.encode(Record(channel: channel, contact: contact.description, nick: nick, availability: state.availability.description, status: state.status))
    }
}
