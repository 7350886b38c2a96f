/// The channel-binding choice a SCRAM client announces in its GS2 header
/// (RFC 5802 §6, §7 `gs2-cbind-flag`).
public enum SCRAMChannelBinding: Hashable, Sendable {
    /// The client does not support channel binding: GS2 header `n,,`.
    case none
    /// The client supports channel binding but the server offered no `-PLUS`
    /// mechanism: GS2 header `y,,`, which lets a server that does support
    /// channel binding detect a mechanism downgrade (RFC 5802 §6).
    case notSupportedByServer
    /// Bind to the TLS connection with `tls-exporter` (RFC 9266): GS2 header
    /// `p=tls-exporter,,`. `data` is the 32-byte exporter output for label
    /// `EXPORTER-Channel-Binding` with an empty context (RFC 9266 §2).
    /// Only for the `-PLUS` mechanisms.
    case tlsExporter(data: [UInt8])
    /// Bind to the server's certificate (RFC 5929 §4): GS2 header
    /// `p=tls-server-end-point,,`; `data` is the certificate's hash. Only for the `-PLUS`
    /// mechanisms, and only where the server announced no `tls-exporter` (XEP-0440 §3).
    case tlsServerEndPoint(data: [UInt8])

    /// The binding of `type` with its data.
    init(_ type: ChannelBindingChoice.ChannelBindingType, data: [UInt8]) {
        switch type {
        case .tlsExporter: self = .tlsExporter(data: data)
        case .tlsServerEndPoint: self = .tlsServerEndPoint(data: data)
        }
    }

    /// The GS2 header (RFC 5802 §7 `gs2-header`); no authorization identity.
    var gs2Header: [UInt8] {
        switch self {
        case .none: Array("n,,".utf8)
        case .notSupportedByServer: Array("y,,".utf8)
        case .tlsExporter: Array("p=tls-exporter,,".utf8)
        case .tlsServerEndPoint: Array("p=tls-server-end-point,,".utf8)
        }
    }

    /// The `cbind-input` whose base64 form is the `c=` attribute
    /// (RFC 5802 §7): the GS2 header followed by the channel-binding data, if any.
    var channelBindingInput: [UInt8] {
        switch self {
        case .none, .notSupportedByServer: self.gs2Header
        case .tlsExporter(let data), .tlsServerEndPoint(let data): self.gs2Header + data
        }
    }

    /// The type bound with, if any.
    public var type: ChannelBindingChoice.ChannelBindingType? {
        switch self {
        case .none, .notSupportedByServer: nil
        case .tlsExporter: .tlsExporter
        case .tlsServerEndPoint: .tlsServerEndPoint
        }
    }
}
