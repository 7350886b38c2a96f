import Foundation
import TransportCore

extension BridgeRuntime {
    /// Ready when the state database answers, every account is connected or waiting to
    /// reconnect (in backoff) and every http local listens; not ready while an account is
    /// still making its first connection or has stopped for good.
    package func health() async -> HealthReport {
        var problems: [String] = []
        if (try? self.storeForStatus.pendingCount(transport: nil)) == nil { problems.append("state database does not answer") }
        let transports = await self.transportStatuses()
        for (status, reported) in transports {
            switch status.kind {
            case LocalConfiguration.Kind.http.rawValue where !status.connected:
                problems.append("http local \(status.name) is not listening\(status.lastError.map { ": \($0)" } ?? "")")
            case "xmpp" where status.stopped:
                problems.append("account \(status.name) stopped: \(status.lastError ?? "-")")
            case "xmpp" where !reported:
                problems.append("account \(status.name) is making its first connection")
            default:
                break
            }
        }
        return HealthReport(ready: problems.isEmpty, problems: problems, transports: transports.map(\.status))
    }
}
