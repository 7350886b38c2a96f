import Foundation

/// An upload slot (XEP-0363 §4): where to PUT the file, with which header fields, and the
/// URL it can then be fetched from with GET.
///
/// Only `Authorization`, `Cookie` and `Expires` are taken from the slot's `<header/>`
/// elements (§4: other fields MUST be ignored), and a value holding a control character
/// such as CR or LF is dropped whole (§8: no newlines may reach the request), so a
/// service cannot inject fields. Both URLs must be `https` (§4: the host MUST provide
/// TLS); `http` only with `allowInsecureHTTP`, for tests.
public struct UploadSlot: Hashable, Sendable {
    /// Header fields kept from one slot at most; the rest are ignored.
    public static let maximumHeaders = 16
    /// A header value's longest length in bytes; longer ones are ignored.
    public static let maximumHeaderValueLength = 8 * 1024

    public var putURL: HTTPURL
    /// Fields to send with the PUT, names as §4 spells them.
    public var putHeaders: [HTTPHeaderField]
    public var getURL: HTTPURL

    public init(putURL: HTTPURL, putHeaders: [HTTPHeaderField], getURL: HTTPURL) {
        self.putURL = putURL
        self.putHeaders = putHeaders
        self.getURL = getURL
    }

    /// Reads the answer to a slot request: a result with `<slot/>` (§4), or an error
    /// mapped by ``error(for:requestedSize:)``.
    public init(answer: IQ, requestedSize: Int, allowInsecureHTTP: Bool = false) throws(UploadError) {
        switch answer.type {
        case .result:
            try self.init(result: answer, allowInsecureHTTP: allowInsecureHTTP)
        case .error:
            throw Self.error(for: answer.error ?? StanzaError(.undefinedCondition), requestedSize: requestedSize)
        case .get, .set:
            throw .invalidSlot("a request instead of an answer")
        }
    }

    /// Reads the `<slot/>` of a result (§4).
    public init(result: IQ, allowInsecureHTTP: Bool = false) throws(UploadError) {
        guard let slot = result.payload, slot.name == "slot", slot.namespace == UploadService.namespace else {
            throw .invalidSlot("no <slot/> in the result")
        }
        guard let put = slot.firstChild(named: "put", namespace: UploadService.namespace), let putText = put[attribute: "url"] else {
            throw .invalidSlot("no PUT URL")
        }
        guard let get = slot.firstChild(named: "get", namespace: UploadService.namespace), let getText = get[attribute: "url"] else {
            throw .invalidSlot("no GET URL")
        }
        self.putURL = try Self.url(putText, role: "PUT", allowInsecureHTTP: allowInsecureHTTP)
        self.getURL = try Self.url(getText, role: "GET", allowInsecureHTTP: allowInsecureHTTP)
        self.putHeaders = Self.headers(in: put)
    }

    /// The typed error for an error answer to a slot request (§5): `<file-too-large/>`
    /// (with its `<max-file-size/>`), `not-allowed`/`forbidden`, a temporary refusal
    /// (`resource-constraint` or type `wait`, with `<retry stamp/>` when given), else the
    /// stanza error itself.
    public static func error(for error: StanzaError, requestedSize: Int) -> UploadError {
        if let condition = error.applicationCondition, condition.namespace == UploadService.namespace, condition.name == "file-too-large" {
            let maximum = condition.firstChild(named: "max-file-size", namespace: UploadService.namespace).flatMap { UploadService.size($0.text) }
            return .fileTooLarge(size: requestedSize, maxFileSize: maximum)
        }
        switch error.condition {
        case .notAllowed, .forbidden:
            return .notAllowed(text: error.text)
        case .resourceConstraint:
            return .tryLater(retryAt: Self.retryStamp(error), text: error.text)
        default:
            return error.type == .wait ? .tryLater(retryAt: Self.retryStamp(error), text: error.text) : .refused(error)
        }
    }

    // MARK: -

    private static func url(_ text: String, role: String, allowInsecureHTTP: Bool) throws(UploadError) -> HTTPURL {
        do {
            return try HTTPURL(text, allowInsecureHTTP: allowInsecureHTTP)
        } catch {
            throw .invalidSlot("\(role) URL: \(error)")
        }
    }

    /// The allowed fields of a `<put/>`, canonically named; others, repeats past the limit,
    /// and values with control characters are left out.
    private static func headers(in put: XMLElement) -> [HTTPHeaderField] {
        var fields: [HTTPHeaderField] = []
        for header in put.elements where header.name == "header" && header.namespace == UploadService.namespace {
            guard fields.count < Self.maximumHeaders, let name = header[attribute: "name"] else { continue }
            let canonical: String
            switch name.trimmingWhitespace.lowercased() {
            case "authorization": canonical = "Authorization"
            case "cookie": canonical = "Cookie"
            case "expires": canonical = "Expires"
            default: continue
            }
            let value = header.text
            guard value.utf8.count <= Self.maximumHeaderValueLength, HTTPHeaderField.isValidValue(value) else { continue }
            let trimmed = value.trimmingWhitespace
            guard !trimmed.isEmpty else { continue }
            fields.append(HTTPHeaderField(name: canonical, value: trimmed))
        }
        return fields
    }

    /// The `stamp` of a `<retry/>` in the error (§5, XEP-0082 date-time), if it parses.
    private static func retryStamp(_ error: StanzaError) -> Date? {
        guard let retry = error.applicationCondition, retry.name == "retry", retry.namespace == UploadService.namespace,
            let stamp = retry[attribute: "stamp"]
        else { return nil }
        return XMPPDateTime.parse(stamp)
    }
}
