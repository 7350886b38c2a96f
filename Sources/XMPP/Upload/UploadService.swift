/// An HTTP File Upload service (XEP-0363 §3): the entity that hands out upload slots, and
/// the largest file it takes, when it says.
public struct UploadService: Hashable, Sendable, CustomStringConvertible {
    /// The XEP-0363 namespace: the disco feature, the form type and the slot elements.
    public static let namespace = "urn:xmpp:http:upload:0"

    /// Where slot requests go.
    public var jid: JID
    /// The largest file, in bytes, from the service's `max-file-size` field (XEP-0363 §3,
    /// XEP-0128); nil when it gave none (or none that is a non-negative integer).
    public var maxFileSize: Int?

    public init(jid: JID, maxFileSize: Int? = nil) {
        self.jid = jid
        self.maxFileSize = maxFileSize
    }

    /// The service `jid` is, read from its disco#info result; nil when it does not
    /// advertise the `urn:xmpp:http:upload:0` feature (XEP-0363 §3, the one requirement;
    /// the `store`/`file` identity of §3's example is not required). `max-file-size` is
    /// read only from the form whose `FORM_TYPE` is the XEP-0363 namespace.
    public init?(jid: JID, discoInfo: ServiceDiscovery.Info) {
        guard discoInfo.features.contains(Self.namespace) else { return nil }
        self.jid = jid
        self.maxFileSize = discoInfo.forms[Self.namespace]?["max-file-size"]?.first.flatMap(Self.size)
    }

    /// The service `jid` is, from its disco#info result IQ (see ``init(jid:discoInfo:)``).
    public init?(jid: JID, discoInfoResult: IQ) {
        guard let info = ServiceDiscovery.Info(result: discoInfoResult) else { return nil }
        self.init(jid: jid, discoInfo: info)
    }

    /// Whether the service says it takes a file of `size` bytes (true when it gave no limit).
    public func accepts(size: Int) -> Bool {
        self.maxFileSize.map { size <= $0 } ?? true
    }

    public var description: String {
        "\(self.jid)" + (self.maxFileSize.map { " (max \($0) bytes)" } ?? "")
    }

    /// A decimal byte count (`xs:integer`, surrounding whitespace allowed), or nil.
    static func size(_ text: String) -> Int? {
        let trimmed = text.trimmingWhitespace
        guard !trimmed.isEmpty, trimmed.count <= 19, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(trimmed)
    }
}
