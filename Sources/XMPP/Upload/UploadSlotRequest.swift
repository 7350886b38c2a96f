/// A request for an upload slot (XEP-0363 §4): an IQ get to the service with
/// `<request xmlns='urn:xmpp:http:upload:0' filename=… size=… content-type=…/>`.
public struct UploadSlotRequest: Hashable, Sendable {
    /// The file's name as the service should keep it (and usually puts in the URLs).
    public var filename: String
    /// The exact size in bytes; the PUT must send this many (§6).
    public var size: Int
    /// The media type, sent again as the PUT's `Content-Type` (§6); optional (§4).
    public var contentType: String?

    /// The longest file name and content type accepted, in bytes.
    public static let maximumFieldLength = 1024

    /// Checks what the service and the later PUT need: a non-empty name without control
    /// characters or `/`, a size of at least 0, a content type fit to be an HTTP field value.
    public init(filename: String, size: Int, contentType: String?) throws(UploadError) {
        guard !filename.isEmpty, filename.utf8.count <= Self.maximumFieldLength else {
            throw .invalidRequest("the file name must have 1 to \(Self.maximumFieldLength) bytes")
        }
        guard !filename.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == "/" }) else {
            throw .invalidRequest("the file name has a control character or '/'")
        }
        guard size >= 0 else { throw .invalidRequest("negative size \(size)") }
        if let contentType {
            guard !contentType.isEmpty, contentType.utf8.count <= Self.maximumFieldLength, HTTPHeaderField.isValidValue(contentType),
                contentType.contains("/")
            else { throw .invalidRequest("content type '\(contentType.prefix(64))' is not a media type") }
        }
        self.filename = filename
        self.size = size
        self.contentType = contentType
    }

    /// The `<request/>` payload.
    public var element: XMLElement {
        var element = XMLElement(
            name: "request", namespace: UploadService.namespace,
            attributes: [XMLAttribute(name: "filename", value: self.filename), XMLAttribute(name: "size", value: String(self.size))]
        )
        if let contentType { element[attribute: "content-type"] = contentType }
        return element
    }

    /// The IQ get carrying it, to `service`.
    public func iq(id: String, to service: JID) -> IQ {
        IQ(type: .get, id: id, to: service, payload: self.element)
    }
}
