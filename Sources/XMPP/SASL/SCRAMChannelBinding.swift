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

    /// The GS2 header (RFC 5802 §7 `gs2-header`); no authorization identity.
    var gs2Header: [UInt8] {
        switch self {
        case .none: Array("n,,".utf8)
        case .notSupportedByServer: Array("y,,".utf8)
        case .tlsExporter: Array("p=tls-exporter,,".utf8)
        }
    }

    /// The `cbind-input` whose base64 form is the `c=` attribute
    /// (RFC 5802 §7): the GS2 header followed by the channel-binding data, if any.
    var channelBindingInput: [UInt8] {
        switch self {
        case .none, .notSupportedByServer: self.gs2Header
        case .tlsExporter(let data): self.gs2Header + data
        }
    }
}
