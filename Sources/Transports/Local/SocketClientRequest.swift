import Foundation

/// One JSON line from a Unix-socket client: a message
/// (`{"channel":…, "body":…, "type":…, "subject":…}`) or a subscription change
/// (`{"subscribe":["alerts"]}`, `{"unsubscribe":[…]}`).
public struct SocketClientRequest: Decodable, Sendable {
    var channel: String?
    var body: String?
    var type: String?
    var subject: String?
    var subscribe: [String]?
    var unsubscribe: [String]?
    /// Answer `{"ok":"queued","id":…}` once the message is committed to the journal, so a
    /// client knows what survives a crash (issue 8).
    var ack: Bool?
}

extension SocketClientRequest {
    /// The request in one JSON line; nil when it is not a JSON object of this shape.
    public static func decode(_ line: String) -> SocketClientRequest? {
        try? JSONDecoder().decode(SocketClientRequest.self, from: Data(line.utf8))
    }
}
