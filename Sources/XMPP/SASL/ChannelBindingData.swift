/// What a TLS connection gives for channel binding: the data of each type it can bind
/// with (RFC 9266 `tls-exporter`; RFC 5929 §4 `tls-server-end-point`). Empty without TLS.
public struct ChannelBindingData: Hashable, Sendable {
    /// RFC 9266 §2: 32 bytes exported with label `EXPORTER-Channel-Binding` and no
    /// context; TLS 1.3 only.
    public var exporter: [UInt8]?
    /// RFC 5929 §4.1: the hash of the server's certificate, with its signature's hash
    /// (SHA-256 for MD5 and SHA-1); nil where none is defined (Ed25519).
    public var serverEndPoint: [UInt8]?

    public init(exporter: [UInt8]? = nil, serverEndPoint: [UInt8]? = nil) {
        self.exporter = exporter.flatMap { $0.isEmpty ? nil : $0 }
        self.serverEndPoint = serverEndPoint.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// None: a stream without TLS.
    public static let none = ChannelBindingData()

    /// The types there is data for.
    public var available: Set<ChannelBindingChoice.ChannelBindingType> {
        var types: Set<ChannelBindingChoice.ChannelBindingType> = []
        if self.exporter != nil { types.insert(.tlsExporter) }
        if self.serverEndPoint != nil { types.insert(.tlsServerEndPoint) }
        return types
    }

    /// The data for one type, if there is.
    public func data(for type: ChannelBindingChoice.ChannelBindingType) -> [UInt8]? {
        switch type {
        case .tlsExporter: self.exporter
        case .tlsServerEndPoint: self.serverEndPoint
        }
    }
}
