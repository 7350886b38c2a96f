import BridgeRelay
import Bridge
import Logging
import NIOCore
import NIOPosix
import XMPP

/// `xmpp-bridge send --file`: each file is uploaded through the account's HTTP File Upload
/// service (XEP-0363: disco, slot, PUT; over our OpenSSL TLS, verified like the XMPP
/// connection) and shared as a message whose body is the URL with the same URL as OOB
/// (XEP-0066), which is what makes Conversations and Monal show it inline.
struct FileSender {
    let session: XMPPSession<ContinuousClock>
    let uploads: HTTPFileUpload
    let logger: Logger

    init(session: XMPPSession<ContinuousClock>, tls: TLSConfiguration, logger: Logger) {
        self.session = session
        let http = HTTPSClient(configuration: HTTPSClient.Configuration(tls: tls), eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        self.uploads = HTTPFileUpload(through: session, using: http, logger: logger)
        self.logger = logger
    }

    /// Uploads `text` as a UTF-8 text file named `filename` (a flood's digest); its URL.
    func upload(text: String, filename: String) async throws(UploadError) -> String {
        try await self.uploads.upload(ByteBuffer(string: text), filename: filename, contentType: "text/plain; charset=utf-8")
    }

    /// Uploads the file at `path`; the URL to share.
    func upload(_ path: String) async throws(UploadError) -> String {
        // Named by its last path component (the session's default); typed by its extension.
        let url = try await self.uploads.upload(fileAt: path, contentType: Self.mediaType(of: path))
        self.logger.info("uploaded", metadata: ["file": "\(path)", "url": "\(url)"])
        return url
    }

    /// Uploads each file and shares its URL with every target, in order. A file that cannot
    /// be uploaded is reported by name and skipped; false if any was. The ids of the
    /// messages sent go into `ids` (bounces are matched by them).
    func send(_ paths: [String], to targets: [JID], type: Message.Kind, ids: inout RecentIDs) async throws -> Bool {
        var allSent = true
        for path in paths {
            let url: String
            do {
                url = try await self.upload(path)
            } catch {
                CommandLineOutput.error("\(path): not sent: \(error)")
                allSent = false
                continue
            }
            var messages: [Message] = []
            for target in targets {
                let id = await self.session.nextID()
                ids.insert(id)
                messages.append(Self.message(sharing: url, to: target, type: type, id: id))
            }
            try await self.session.send(messages)
        }
        return allSent
    }

    /// The message sharing `url` with `target`: body and OOB URL equal.
    static func message(sharing url: String, to target: JID, type: Message.Kind, id: String) -> Message {
        let (body, elements) = RichContent(url: url).outgoing(text: nil)
        var message = Message(type: type, to: target, id: id, body: body)
        message.extensions = elements + MessageReceipt.requests
        return message
    }

    /// The media type for a file name by its extension (for the slot request and the PUT);
    /// `application/octet-stream` when unknown.
    static func mediaType(of name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "application/octet-stream" }
        return Self.mediaTypes[name[name.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }

    static let mediaTypes: [String: String] = [
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp", "svg": "image/svg+xml",
        "heic": "image/heic", "pdf": "application/pdf", "txt": "text/plain", "log": "text/plain", "md": "text/markdown", "csv": "text/csv",
        "json": "application/json", "xml": "application/xml", "html": "text/html", "zip": "application/zip", "gz": "application/gzip",
        "tar": "application/x-tar", "mp4": "video/mp4", "webm": "video/webm", "mp3": "audio/mpeg", "m4a": "audio/mp4", "ogg": "audio/ogg",
        "opus": "audio/ogg", "wav": "audio/wav",
    ]
}
