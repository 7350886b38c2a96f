import BridgeRelay
import Bridge
import Foundation
import LocalTransport
import Logging
import TransportCore
import XMPP

extension SendCommand {
    /// What the `--lines` loop waits for: the next lines, or the end of a flood's minute.
    private enum Input: Sendable {
        case lines([LineSplitter.Line])
        case minuteOver
    }

    /// `--lines`: every input line is its own message, sent as it arrives; with
    /// `--max-per-minute`, lines over the limit are gathered and go as one digest when
    /// their minute ends or the input does (issue 24: `make | xmpp-bridge send` to a phone).
    func sendLines(to targets: [JID], via session: XMPPSession<ContinuousClock>, ids: inout RecentIDs, failure: inout ExitStatus?, logger: Logger) async throws {
        let reader = FileLineReader(descriptor: 0, splitter: LineSplitter(maxLineBytes: self.maxMessageBytes))
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        let forward = Task {
            for await batch in reader.batches { continuation.yield(.lines(batch)) }
            continuation.finish()
        }
        defer { forward.cancel() }
        // Made once: the digest's file goes up through the account's upload service.
        let uploader = self.maxPerMinute == nil ? nil : FileSender(session: session, tls: try self.account.resolve().client.tls, logger: logger)
        var gate = FloodGate()
        let flood = Endpoint(transport: "send")
        var postponed: [String] = []
        var minuteEnds: Date?
        for await input in inputs {
            guard case .lines(let batch) = input else {
                if let end = minuteEnds, end <= Date() {
                    try await self.sendDigest(postponed, to: targets, via: session, uploader: uploader, ids: &ids, logger: logger)
                    postponed = []
                    minuteEnds = nil
                }
                continue
            }
            reader.consumed()
            // A minute that ended: its digest goes before newer lines.
            if let end = minuteEnds, end <= Date() {
                try await self.sendDigest(postponed, to: targets, via: session, uploader: uploader, ids: &ids, logger: logger)
                postponed = []
                minuteEnds = nil
            }
            var messages: [Message] = []
            for line in batch {
                let text: String
                switch line {
                case .text(let value):
                    text = value
                case .repaired(let value):
                    logger.warning("input line with invalid UTF-8; sent with U+FFFD in its place")
                    text = value
                case .tooLong(let bytes):
                    logger.error("input line of \(bytes) bytes is longer than --max-message-bytes; not sent")
                    failure = .notDelivered
                    continue
                case .invalidUTF8:
                    logger.error("input line with invalid UTF-8; not sent")
                    failure = .notDelivered
                    continue
                }
                if let limit = self.maxPerMinute, let end = gate.admit(flood, limit: limit, priority: 3, at: Date()) {
                    postponed.append(text)
                    if minuteEnds == nil {
                        minuteEnds = end
                        Task {
                            try? await Task.sleep(for: .seconds(max(0, end.timeIntervalSinceNow)))
                            continuation.yield(.minuteOver)
                        }
                    }
                } else {
                    messages += await self.messages(text, to: targets, via: session, ids: &ids)
                }
            }
            try await session.send(messages)
        }
        if !postponed.isEmpty { try await self.sendDigest(postponed, to: targets, via: session, uploader: uploader, ids: &ids, logger: logger) }
    }

    /// The digest of `postponed` lines: the count and first lines with a link to the full text
    /// uploaded as a file (XEP-0363), else the full text in messages of at most
    /// `--max-message-bytes`.
    private func sendDigest(
        _ postponed: [String], to targets: [JID], via session: XMPPSession<ContinuousClock>, uploader: FileSender?, ids: inout RecentIDs, logger: Logger
    ) async throws {
        guard !postponed.isEmpty, let uploader else { return }
        let full = Digest.fullText(postponed)
        do {
            let url = try await uploader.upload(text: full, filename: "digest.txt")
            logger.info("flood gathered into a digest", metadata: ["lines": "\(postponed.count)", "file": "\(url)"])
            try await session.send(await self.messages(Digest.summary(postponed, url: url), to: targets, via: session, ids: &ids))
        } catch let error as UploadError {
            logger.notice("cannot upload the digest; it goes as messages", metadata: ["error": "\(error)", "lines": "\(postponed.count)"])
            for chunk in TextChunker.split(full, maxBytes: self.maxMessageBytes) where !chunk.isEmpty {
                try await session.send(await self.messages(chunk, to: targets, via: session, ids: &ids))
            }
        }
    }
}
