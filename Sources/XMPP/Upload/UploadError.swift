import Foundation

/// Why an HTTP File Upload (XEP-0363) did not happen: the service's refusals (§5), a slot
/// we do not accept (§4, §8), and the failures of the steps around them.
public enum UploadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Neither the server nor any entity it lists offers XEP-0363 (§3).
    case noUploadService
    /// The file is larger than the service takes: said by the service (§5, with its
    /// `<max-file-size/>` when it gave one), or found before asking from its disco form.
    case fileTooLarge(size: Int, maxFileSize: Int?)
    /// The service does not let this account upload (`not-allowed`, or `forbidden`).
    case notAllowed(text: String?)
    /// A temporary refusal, e.g. a quota (`resource-constraint` or an error of type
    /// `wait`): try again later, not before `retryAt` when the service said (§5 `<retry/>`).
    case tryLater(retryAt: Date?, text: String?)
    /// Any other error answer to the slot request (RFC 6120 §8.3).
    case refused(StanzaError)
    /// The slot request cannot be made: empty file name, a negative size, a content
    /// type that is no field value.
    case invalidRequest(String)
    /// The service's answer is not a usable slot (missing URL, not https, malformed).
    case invalidSlot(String)
    /// The request did not get an answer (not connected, timed out, connection lost).
    case request(XMPPSessionError)
    /// The PUT failed (TLS, connection, status).
    case transfer(HTTPSClientError)
    /// The file could not be read.
    case unreadableFile(path: String, reason: String)

    public var description: String {
        switch self {
        case .noUploadService:
            "the server offers no HTTP File Upload service (XEP-0363)"
        case .fileTooLarge(let size, let maxFileSize):
            "file of \(size) bytes is too large" + (maxFileSize.map { " (the service takes at most \($0) bytes)" } ?? "")
        case .notAllowed(let text):
            "the upload service does not allow this account to upload" + (text.map { ": \($0)" } ?? "")
        case .tryLater(let retryAt, let text):
            "the upload service refused for now" + (retryAt.map { "; try again after \($0)" } ?? "") + (text.map { ": \($0)" } ?? "")
        case .refused(let error):
            "the upload service refused the slot: \(error)"
        case .invalidRequest(let reason):
            "invalid upload request: \(reason)"
        case .invalidSlot(let reason):
            "the upload service sent an unusable slot: \(reason)"
        case .request(let error):
            "upload slot request failed: \(error)"
        case .transfer(let error):
            "upload failed: \(error)"
        case .unreadableFile(let path, let reason):
            "cannot read \(path): \(reason)"
        }
    }
}
