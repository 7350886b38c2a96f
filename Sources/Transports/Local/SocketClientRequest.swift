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
}
