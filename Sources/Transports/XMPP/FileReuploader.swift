import Logging
import NIOCore
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

    public init(http: HTTPSClient, logger: Logger) {
        self.http = http
        self.logger = logger
    }

    /// The URL to share for `url`: this account's copy, or `url` itself when it cannot be made.
    func reupload(_ url: String, maximumBytes: Int, session: XMPPSession<ContinuousClock>) async -> String {
        do {
            guard let service = try await session.discoverUploadService() else { throw UploadError.noUploadService }
            let limit = min(service.maxFileSize ?? maximumBytes, maximumBytes)
            let response = try await self.http.get(url: url, maxBytes: limit)
            let name = Self.fileName(of: url)
            let contentType = response.headers["Content-Type"].first
            let copy = try await session.upload(response.body, filename: name, contentType: contentType, using: self.http, service: service)
            self.logger.info("file uploaded again for the target", metadata: ["from": "\(url)", "to": "\(copy)", "bytes": "\(response.body.readableBytes)"])
            return copy
        } catch {
            self.logger.warning("cannot upload the file again; sharing the source's URL", metadata: ["url": "\(url)", "error": "\(error)"])
            return url
        }
    }

    /// The last path segment of `url` (without query), percent-decoded; "file" when empty.
    static func fileName(of url: String) -> String {
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        let segments = path.split(separator: "/")
        guard segments.count > 2, let last = segments.last else { return "file" }
        return String(last).removingPercentEncodingIfPossible
    }
}

extension String {
    /// Percent-decoded where that yields UTF-8, else unchanged.
    fileprivate var removingPercentEncodingIfPossible: String {
        var bytes: [UInt8] = []
        var iterator = self.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(), let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else {
                return self
            }
            bytes.append(value)
        }
        return String(validating: bytes, as: UTF8.self) ?? self
    }
}
