import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import OMEMO
import TransportCore
import XMPP

/// Shares a file again from this account's own upload service (issue 12, `reupload`): for a
/// target whose clients cannot reach the source's upload host, the file at the source's URL
/// is fetched over HTTPS (our OpenSSL TLS, verified like the account's XMPP connection; at
/// most the channel's limit and the service's `max-file-size`) and uploaded through
/// XEP-0363. When that fails the source's URL is shared as it is, with a warning: a link
/// that may not open beats a lost message.
public struct FileReuploader: Sendable {
    let http: HTTPSClient
    let logger: Logger
    /// The account's upload service once found (service discovery costs up to 51 requests).
    private let found = NIOLockedValueBox<UploadService?>(nil)

    public init(http: HTTPSClient, logger: Logger) {
        self.http = http
        self.logger = logger
    }

    /// Uploads through `session`'s account (XEP-0363), PUT with this reuploader's client.
    private func uploads(_ session: XMPPSession<EventLoopClock>) -> HTTPFileUpload {
        HTTPFileUpload(through: session, using: self.http, logger: self.logger)
    }

    private func service(_ session: XMPPSession<EventLoopClock>) async throws -> UploadService {
        if let service = self.found.withLockedValue({ $0 }) { return service }
        guard let service = try await self.uploads(session).discoverService() else { throw UploadError.noUploadService }
        self.found.withLockedValue { $0 = service }
        return service
    }

    /// A peer's `Content-Type` if it is a plain `type/subtype` (parameters dropped), else nil.
    static func mediaType(_ value: String) -> String? {
        let media = value.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        let parts = media.split(separator: "/", omittingEmptySubsequences: false)
        let token = { (part: Substring) in !part.isEmpty && part.utf8.count <= 64 && part.utf8.allSatisfy { Self.tokenBytes.contains($0) } }
        guard parts.count == 2, token(parts[0]), token(parts[1]) else { return nil }
        return media
    }

    /// RFC 9110 §5.6.2 token characters.
    static let tokenBytes = Set(Array("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8))

    /// The URL to share for `url`: this account's copy, or `url` itself when it cannot be made.
    /// An `aesgcm://` link (XEP-0454, a file shared alongside OMEMO) is fetched from its
    /// https URL; for a target that gets the message encrypted (`encrypted`) the encrypted
    /// bytes are uploaded as they are and the link keeps its key, for any other the file is
    /// decrypted and uploaded in the clear (the target reads the message's text in the
    /// clear too, and a client without OMEMO cannot open the link).
    func reupload(_ url: String, maximumBytes: Int, encrypted: Bool, session: XMPPSession<EventLoopClock>) async -> String {
        let link = EncryptedFileLink(url)
        let source = link?.url.absoluteString ?? url
        do {
            let service = try await self.service(session)
            let limit = min(service.maxFileSize ?? maximumBytes, maximumBytes)
            let name = RichContent.fileName(of: source) ?? "file"
            let copy: String
            if let link {
                // The file is at most `maximumBytes`, the tag after it; what is uploaded must
                // fit the service: the encrypted bytes as they are, or the file alone.
                let fetchLimit = encrypted
                    ? min(service.maxFileSize ?? Int.max, maximumBytes + EncryptedFileLink.overhead) : limit + EncryptedFileLink.overhead
                let response = try await self.http.get(url: source, maxBytes: fetchLimit)
                if encrypted {
                    copy = try await self.uploads(session).upload(response.body, filename: name, contentType: nil, service: service)
                    guard let at = URL(string: copy), at.scheme?.lowercased() == "https" else { throw UploadError.invalidSlot("not an https URL: \(copy)") }
                    let moved = link.moved(to: at).text
                    guard !moved.isEmpty else { throw UploadError.invalidSlot("no aesgcm link from \(copy)") }
                    self.logger.info("encrypted file uploaded again for the target", metadata: ["bytes": "\(response.body.readableBytes)"])
                    return moved
                }
                // Off the event loop: up to `maximumBytes` of AES-GCM.
                let file = try await withTaskExecutorPreference(globalConcurrentExecutor) {
                    try link.open(Array(buffer: response.body))
                }
                copy = try await self.uploads(session).upload(ByteBuffer(bytes: file), filename: name, contentType: nil, service: service)
                self.logger.info("encrypted file decrypted and uploaded again for the target", metadata: ["bytes": "\(file.count)"])
            } else {
                let response = try await self.http.get(url: source, maxBytes: limit)
                let contentType = response.headers["Content-Type"].first.flatMap(Self.mediaType)
                copy = try await self.uploads(session).upload(response.body, filename: name, contentType: contentType, service: service)
                self.logger.info("file uploaded again for the target", metadata: ["bytes": "\(response.body.readableBytes)"])
            }
            // The URLs are capabilities (whoever has one can fetch the file): debug only.
            self.logger.debug("file uploaded again", metadata: ["from": "\(source)", "to": "\(copy)"])
            return copy
        } catch {
            self.logger.warning("cannot upload the file again; sharing the source's URL", metadata: ["error": "\(error)"])
            return url
        }
    }

    /// Uploads `text` as a UTF-8 text file through this account's service (a flood's
    /// digest, issue 24); its URL, or nil when there is no service or the upload failed.
    func share(text: String, filename: String, session: XMPPSession<EventLoopClock>) async -> String? {
        do {
            let service = try await self.service(session)
            let body = ByteBuffer(string: text)
            let url = try await self.uploads(session).upload(body, filename: filename, contentType: "text/plain; charset=utf-8", service: service)
            self.logger.info("text shared as a file", metadata: ["bytes": "\(body.readableBytes)"])
            return url
        } catch {
            self.logger.notice("cannot share the text as a file; it goes as messages", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
