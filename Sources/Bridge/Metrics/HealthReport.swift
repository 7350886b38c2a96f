import Foundation

/// What `/health/ready` answers and the metrics' state gauges show: each transport as
/// `xmpp-bridge status` shows it (``ControlResponse/TransportStatus``), and why the
/// bridge is not ready, if it is not.
struct HealthReport: Sendable, Encodable {
    var ready: Bool
    /// Why not ready.
    var problems: [String]
    var transports: [ControlResponse.TransportStatus]
}
