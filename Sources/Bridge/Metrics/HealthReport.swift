import Foundation

/// What `/health/ready` answers and the metrics' state gauges show: each transport as
/// `xmpp-bridge status` shows it (``ControlResponse/TransportStatus``), and why the
/// bridge is not ready, if it is not.
package struct HealthReport: Sendable, Encodable {
    package var ready: Bool
    /// Why not ready.
    package var problems: [String]
    package var transports: [ControlResponse.TransportStatus]

    package init(ready: Bool, problems: [String], transports: [ControlResponse.TransportStatus]) {
        self.ready = ready
        self.problems = problems
        self.transports = transports
    }
}
