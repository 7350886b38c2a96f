/// Which channel binding a SCRAM login uses (XEP-0440 §3, XEP-0474 §4): decided from
/// whether the server offered a -PLUS mechanism, the channel-binding types it announced,
/// and the types this TLS connection can give data for. Binding ties the login to this
/// TLS connection, so that a man in the middle with a certificate we trust by mistake still
/// cannot log in as us; a server's offers arrive unauthenticated, so each rule below
/// refuses what an attacker could have made of them.
public enum ChannelBindingChoice: Hashable, Sendable {
    /// Bind with this type: GS2 header `p=<type>`, with a -PLUS mechanism.
    case bind(ChannelBindingType)
    /// GS2 header `n`: no binding. When the server offered -PLUS and announced only types
    /// we cannot use, its server-first-message must carry a matching downgrade-protection
    /// hash (XEP-0474 §4: ``DowngradeProtection/required``).
    case none(requiresDowngradeProtection: Bool)
    /// GS2 header `y`: we can bind, but the server offered no -PLUS mechanism and announced
    /// no types; a server that does bind sees the downgrade (RFC 5802 §6).
    case notSupportedByServer

    /// The channel-binding types we can produce data for, strongest first.
    public enum ChannelBindingType: String, Hashable, Sendable, CaseIterable {
        /// RFC 9266: keying material exported from the TLS 1.3 session.
        case tlsExporter = "tls-exporter"
        /// RFC 5929 §4: a hash of the server's certificate; weaker (it names the
        /// certificate, not the session), used only where the exporter is not offered.
        case tlsServerEndPoint = "tls-server-end-point"
    }

    /// RFC 6120's SASL or XEP-0388's SASL2: XEP-0440 is stricter for SASL2.
    public enum Profile: Hashable, Sendable {
        case sasl1
        case sasl2
    }

    /// - Parameters:
    ///   - offeredPlus: a -PLUS mechanism is offered (and allowed by the configuration).
    ///   - announcedTypes: XEP-0440's `<sasl-channel-binding>` types; nil without it.
    ///   - available: the types this connection has data for (none without TLS).
    public static func choose(
        offeredPlus: Bool, announcedTypes: [String]?, available: Set<ChannelBindingType>, profile: Profile
    ) throws(SASLError) -> ChannelBindingChoice {
        // XEP-0440 §3 rule 2: a client that cannot bind on this connection says `n`.
        guard !available.isEmpty else { return .none(requiresDowngradeProtection: false) }
        guard let announced = announcedTypes.map(Set.init) else {
            // Rule 3: neither -PLUS nor types: `y`.
            guard offeredPlus else { return .notSupportedByServer }
            // Rule 4: SASL2 with -PLUS but no types is refused. A server of RFC 6120's SASL
            // from before XEP-0440 binds with tls-exporter on TLS 1.3 (RFC 9266 §3).
            guard profile == .sasl1 else { throw SASLError.channelBindingInconsistent("-PLUS offered without XEP-0440's channel-binding types") }
            return available.contains(.tlsExporter) ? .bind(.tlsExporter) : .none(requiresDowngradeProtection: false)
        }
        // Rule 5: types announced, but no -PLUS mechanism to bind with.
        guard offeredPlus else { throw SASLError.channelBindingInconsistent("channel-binding types announced without a -PLUS mechanism") }
        // Rule 7: the strongest type both sides have.
        if let type = ChannelBindingType.allCases.first(where: { available.contains($0) && announced.contains($0.rawValue) }) {
            return .bind(type)
        }
        // Rule 6, as XEP-0474 §4 relaxes it: none of the announced types is one we can use;
        // go on without binding only if the server proves (`h=`) that this is all it offered.
        return .none(requiresDowngradeProtection: true)
    }
}
