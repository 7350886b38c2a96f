import NIOConcurrencyHelpers

/// One ``ConnectionGate`` per server, made on first use: accounts on a server that does not
/// answer (their logins hold places until they time out) never queue the logins of
/// accounts on other servers behind them.
public final class ConnectionGates: Sendable {
    /// Logins that may run at the same time against one server.
    public let limitPerServer: Int
    private let gates = NIOLockedValueBox([String: ConnectionGate]())

    public init(limitPerServer: Int) {
        precondition(limitPerServer > 0, "a gate lets at least one in")
        self.limitPerServer = limitPerServer
    }

    /// The gate for `configuration`'s server: its `host` when set, else its JID's domain
    /// (lower-cased: one server, one queue).
    public func gate(for configuration: XMPPClientConfiguration) -> ConnectionGate {
        let server = (configuration.host ?? configuration.jid.domainpart).lowercased()
        return self.gates.withLockedValue { gates in
            if let gate = gates[server] { return gate }
            let gate = ConnectionGate(limit: self.limitPerServer)
            gates[server] = gate
            return gate
        }
    }
}
