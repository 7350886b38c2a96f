/// What an instance asks the others to do when a control command reaches it (issue 26:
/// `route`, `reconnect` and `queue` work on any instance), sent as `NOTIFY
/// xmpp_bridge_control` with ``payload(from:)``: the route table changed (every instance
/// reads it again), a transport it does not run is to reconnect (its owner does), queued
/// deliveries held by another instance's worker are to be tried now or dropped.
package enum ControlNotice: Equatable, Sendable {
    /// `route add|remove`: every instance reads the route table again.
    case routesChanged
    /// `reconnect NAME`: its owner reconnects it.
    case reconnect(transport: String)
    /// `queue retry SEQ…`: the worker holding them tries them now.
    case retry(sequences: [Int64])
    /// `queue drop SEQ…`: the worker holding them forgets them.
    case drop(sequences: [Int64])

    /// The `LISTEN` channel.
    package static var channel: String { "xmpp_bridge_control" }

    /// Sequences per notice: PostgreSQL's payload holds less than 8,000 bytes.
    package static var sequencesPerNotice: Int { 300 }

    /// This notice as notices that each fit a payload (long lists of sequences split).
    package var parts: [ControlNotice] {
        func chunks(_ sequences: [Int64]) -> [[Int64]] {
            stride(from: 0, to: sequences.count, by: Self.sequencesPerNotice).map { Array(sequences[$0..<min($0 + Self.sequencesPerNotice, sequences.count)]) }
        }
        switch self {
        case .routesChanged, .reconnect: return [self]
        case .retry(let sequences): return chunks(sequences).map { .retry(sequences: $0) }
        case .drop(let sequences): return chunks(sequences).map { .drop(sequences: $0) }
        }
    }

    /// `instance verb [arguments]`: the sender (no spaces in an instance name) first, a
    /// transport name last (it may hold spaces), sequences comma-separated.
    package func payload(from instance: String) -> String {
        switch self {
        case .routesChanged: "\(instance) routes"
        case .reconnect(let transport): "\(instance) reconnect \(transport)"
        case .retry(let sequences): "\(instance) retry \(sequences.map(String.init).joined(separator: ","))"
        case .drop(let sequences): "\(instance) drop \(sequences.map(String.init).joined(separator: ","))"
        }
    }

    /// The notice in `payload`; nil for one `instance` sent itself, or one it cannot read
    /// (another version's: ignored).
    package init?(payload: String, heardBy instance: String) {
        let parts = payload.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] != instance else { return nil }
        let argument = parts.count == 3 ? String(parts[2]) : ""
        let sequences = { argument.split(separator: ",").compactMap { Int64($0) } }
        switch parts[1] {
        case "routes" where parts.count == 2: self = .routesChanged
        case "reconnect" where !argument.isEmpty: self = .reconnect(transport: argument)
        case "retry" where !sequences().isEmpty: self = .retry(sequences: sequences())
        case "drop" where !sequences().isEmpty: self = .drop(sequences: sequences())
        default: return nil
        }
    }
}
