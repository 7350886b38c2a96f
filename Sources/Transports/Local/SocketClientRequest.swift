/// One JSON line from a Unix-socket client: a message
/// (`{"channel":…, "body":…, "type":…, "subject":…}`) or a subscription change
/// (`{"subscribe":["alerts"]}`, `{"unsubscribe":[…]}`).
struct SocketClientRequest: Decodable {
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
