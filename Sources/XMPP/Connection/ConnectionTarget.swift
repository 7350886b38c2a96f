/// One place to try connecting to: host, port and whether TLS starts at once
/// (RFC 6120 §3.2; XEP-0368).
public struct ConnectionTarget: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var tlsMode: TLSMode

    public init(host: String, port: Int, tlsMode: TLSMode) {
        self.host = host
        self.port = port
        self.tlsMode = tlsMode
    }

    public var description: String { "\(self.host):\(self.port) (\(self.tlsMode.rawValue))" }

    /// The targets to try, in order: the explicit host if configured; else SRV records,
    /// `_xmpps-client` (Direct TLS) and `_xmpp-client` merged by priority with Direct TLS
    /// first on ties (XEP-0368 §3); else the domain itself on 5222 (RFC 6120 §3.2.2).
    /// A lone SRV record with target `.` says the service is not offered (RFC 2782,
    /// RFC 6120 §3.2.1): that list contributes nothing and there is no fallback.
    public static func plan(
        configuration: XMPPClientConfiguration,
        directTLSRecords: [SRVRecord],
        startTLSRecords: [SRVRecord],
        random: (Int) -> Int
    ) -> Result<[ConnectionTarget], XMPPClientError> {
        let mode = configuration.tlsMode
        if let host = configuration.host {
            let port = configuration.port ?? (mode == .directTLS ? 5223 : 5222)
            return .success([ConnectionTarget(host: host, port: port, tlsMode: mode)])
        }
        let refused = { (records: [SRVRecord]) in records.count == 1 && records[0].target.isEmpty }
        let directTLSRecords = directTLSRecords.filter { !$0.target.isEmpty }
        let refusesStartTLS = refused(startTLSRecords)
        let startTLSRecords = startTLSRecords.filter { !$0.target.isEmpty }
        let domain = configuration.jid.domainpart
        let direct = SRVRecord.ordered(directTLSRecords, random: random).map {
            (priority: $0.priority, target: ConnectionTarget(host: $0.target, port: Int($0.port), tlsMode: .directTLS))
        }
        let plain: [(priority: UInt16, target: ConnectionTarget)]
        switch mode {
        case .directTLS:
            plain = []
        case .startTLS, .plaintextOnLoopback:
            plain = SRVRecord.ordered(startTLSRecords, random: random).map {
                (priority: $0.priority, target: ConnectionTarget(host: $0.target, port: Int($0.port), tlsMode: mode))
            }
        }
        // A stable merge keeps each list's RFC 2782 order and puts Direct TLS first on ties.
        var merged: [ConnectionTarget] = []
        var directIndex = 0
        var plainIndex = 0
        while directIndex < direct.count || plainIndex < plain.count {
            if plainIndex >= plain.count
                || (directIndex < direct.count && direct[directIndex].priority <= plain[plainIndex].priority)
            {
                merged.append(direct[directIndex].target)
                directIndex += 1
            } else {
                merged.append(plain[plainIndex].target)
                plainIndex += 1
            }
        }
        if merged.isEmpty {
            if refusesStartTLS {
                return .failure(.resolutionFailed(domain: domain, reason: "SRV says the domain offers no XMPP client service"))
            }
            merged.append(ConnectionTarget(host: domain, port: mode == .directTLS ? 5223 : 5222, tlsMode: mode))
        }
        return .success(merged)
    }
}
