import Foundation

/// What `/health/ready` and the metrics' state gauges report.
struct HealthReport: Sendable, Encodable {
    struct Transport: Sendable, Encodable {
        var name: String
        var kind: String
        var connected: Bool
        /// Gave up until SIGHUP or `reconnect` (wrong password, rejected certificate).
        var stopped: Bool
        /// Not yet connected, and not yet failed once either.
        var starting: Bool
        var queued: Int
        var oldestAgeSeconds: Double?
        var dead: Int
    }

    var ready: Bool
    /// Why not ready.
    var problems: [String]
    var transports: [Transport]
}
