import Foundation
import Transports

extension BridgeRuntime {
    /// Ready when the state database answers and every account is connected or waiting
    /// to reconnect (in backoff); not ready while an account is still making its first
    /// connection or has stopped for good.
    func health() async -> HealthReport {
        var problems: [String] = []
        if (try? self.storeForStatus.pendingCount(transport: nil)) == nil { problems.append("state database does not answer") }
        let configuration = self.currentConfiguration
        let availability = await self.relay.availability
        let queues = await self.relay.queueStatus()
        let now = Date()
        var transports: [HealthReport.Transport] = []
        let names = configuration.accounts.keys.map { ($0, "xmpp") } + configuration.locals.map { ($0.key, $0.value.kind.rawValue) }
        for (name, kind) in names.sorted(by: { $0.0 < $1.0 }) {
            let state = availability[name]
            let queue = queues[name]
            let entry = HealthReport.Transport(
                name: name, kind: kind, connected: state?.available ?? false, stopped: state?.stopped ?? false, starting: state == nil,
                queued: queue?.queued ?? 0, oldestAgeSeconds: queue?.oldest.map { now.timeIntervalSince($0) }, dead: queue?.dead ?? 0
            )
            transports.append(entry)
            if kind == LocalConfiguration.Kind.http.rawValue, !entry.connected {
                problems.append("http local \(name) is not listening\(state?.reason.map { ": \($0)" } ?? "")")
            }
            guard kind == "xmpp" else { continue }
            if entry.stopped {
                problems.append("account \(name) stopped: \(state?.reason ?? "-")")
            } else if entry.starting {
                problems.append("account \(name) is making its first connection")
            }
        }
        return HealthReport(ready: problems.isEmpty, problems: problems, transports: transports)
    }
}
