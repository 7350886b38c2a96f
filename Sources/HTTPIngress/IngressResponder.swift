import Foundation
import LocalArchive
import Logging
import TransportCore

/// Answers HTTP ingress requests once routed, authorised and their body read: hands
/// messages to the bridge and answers 202 only after the bridge's durable commit (a
/// kill -9 right after the answer loses nothing), renders webhooks through the channel's
/// template, and reports delivery status. No HTTP framework types: the transport adapts.
public struct IngressResponder: Sendable {
    /// What to answer: a status code and a JSON body.
    public struct Answer: Hashable, Sendable {
        public var status: Int
        public var json: String

        public init(status: Int, json: String) {
            self.status = status
            self.json = json
        }

        init(_ error: IngressError) {
            self.init(status: error.status, json: error.json)
        }
    }

    public let name: String
    public let nick: String
    public let waitTimeout: Duration
    let handler: any TransportEventHandler
    let status: (any DeliveryStatusProviding)?
    /// The local archive, for `GET /channels/{channel}/messages`; nil: none kept.
    let archive: (any ArchiveReading)?
    /// The channel names that exist now (they change on reload).
    let channels: @Sendable () -> Set<String>
    /// A channel's webhook template (`template_file`); nil: the default.
    let template: @Sendable (String) -> WebhookTemplate?
    /// A new message id, unique across restarts.
    let makeID: @Sendable () -> String
    /// Set when the ingress stops: a `?wait=sent` request is answered at once then.
    let stopping: StopSignal
    let logger: Logger

    public init(
        name: String, nick: String, waitTimeout: Duration, handler: any TransportEventHandler, status: (any DeliveryStatusProviding)?,
        channels: @escaping @Sendable () -> Set<String>, template: @escaping @Sendable (String) -> WebhookTemplate?,
        makeID: @escaping @Sendable () -> String, stopping: StopSignal = StopSignal(), archive: (any ArchiveReading)? = nil, logger: Logger
    ) {
        self.archive = archive
        self.stopping = stopping
        self.name = name
        self.nick = nick
        self.waitTimeout = waitTimeout
        self.handler = handler
        self.status = status
        self.channels = channels
        self.template = template
        self.makeID = makeID
        self.logger = logger
    }

    /// The answer to a routed, authorised request.
    ///
    /// - Parameters:
    ///   - query: the query's parameters (`wait=sent`, `timeout=SECONDS`).
    ///   - header: a request header's value by name.
    public func respond(to route: IngressRoute, query: [String: String], header: (String) -> String?, body: [UInt8]) async -> Answer {
        switch route {
        case .status(let id):
            guard let status = self.status, let found = await status.status(ofMessage: id, from: self.name) else {
                return Answer(.notFound("no message '\(id)' from \(self.name)"))
            }
            return Answer(status: 200, json: IngressJSON.encode(found))
        case .history(let channel):
            return await self.history(channel: channel, query: query)
        case .message(let channel):
            guard self.channels().contains(channel) else { return Answer(.notFound("unknown channel '\(channel)'")) }
            switch IngressSubmission.parse(contentType: header("Content-Type"), header: header, query: query, body: body) {
            case .failure(let error): return Answer(error)
            case .success(let submission):
                return await self.submit(submission, channel: channel, query: query)
            }
        case .webhook(let channel, let kind):
            guard self.channels().contains(channel) else { return Answer(.notFound("unknown channel '\(channel)'")) }
            if case .failure(let error) = IngressSubmission.bodyKind(contentType: header("Content-Type")) { return Answer(error) }
            let payload: WebhookPayload
            do {
                payload = try WebhookPayload(json: body)
            } catch {
                switch error {
                case .malformed: return Answer(.badRequest("\(error)"))
                case .unexpected: return Answer(.unprocessable("\(error)"))
                }
            }
            let text = (self.template(channel) ?? .standard).render(payload)
            guard !text.isEmpty else { return Answer(.unprocessable("the channel's template rendered nothing for this \(kind.rawValue) payload")) }
            let key: String?
            switch IngressSubmission.idempotencyKey(header("Idempotency-Key")) {
            case .success(let value): key = value
            case .failure(let error): return Answer(error)
            }
            self.logger.debug("webhook rendered", metadata: ["kind": "\(kind.rawValue)", "channel": "\(channel)", "alerts": "\(payload.alertCount)"])
            var submission = IngressSubmission(body: text, idempotencyKey: key)
            switch IngressSubmission.priority(query["priority"] ?? header("X-Priority"), from: "priority") {
            case .success(let value): submission.priority = value
            case .failure(let error): return Answer(error)
            }
            return await self.submit(submission, channel: channel, query: query, notification: payload.notification(kind: kind))
        }
    }

    /// Hands one message to the bridge and answers once it is committed (or, with
    /// `?wait=sent`, once it is sent).
    private func submit(_ submission: IngressSubmission, channel: String, query: [String: String], notification: AlertNotification? = nil) async -> Answer {
        let wait: Duration?
        switch query["wait"] {
        case nil: wait = nil
        case "sent":
            var timeout = self.waitTimeout
            if let text = query["timeout"] {
                guard let seconds = Double(text), seconds >= 0, seconds.isFinite else { return Answer(.badRequest("timeout must be a number of seconds")) }
                // Compared before converting: a huge number must not overflow Int64.
                let limit = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
                if seconds < limit { timeout = .milliseconds(Int64(seconds * 1000)) }
            }
            wait = timeout
        case let other?:
            return Answer(.badRequest("wait=\(other) is not known; use wait=sent"))
        }
        // A repeat of a request with the same key is the same message, under the same id.
        let id = submission.idempotencyKey.map { "\(self.name)-key-\($0)" } ?? self.makeID()
        var message = InboundMessage(
            source: Endpoint(transport: self.name), sender: self.nick, nick: self.nick, id: id, body: submission.body.isEmpty ? nil : submission.body,
            subject: submission.subject, channel: channel, requestedType: submission.type, awaitsCommit: true,
            deduplicationKey: submission.idempotencyKey.map { "idempotency-key:\($0)" }
        )
        message.content = submission.content
        message.priority = submission.priority
        message.notification = notification
        switch await self.handler.handle(.message(message), from: self.name) {
        case .accepted:
            break
        case .duplicate(let first):
            // Another replica's copy of a notification already accepted: the same answer.
            self.logger.info("notification already accepted; not relayed again", metadata: ["channel": "\(channel)", "id": "\(first)"])
            return Answer(status: 202, json: IngressJSON.encode(["id": first, "status": "queued", "channel": channel]))
        case .dropped(let reason) where reason == "already handled":
            return Answer(status: 200, json: IngressJSON.encode(["id": id, "status": "duplicate", "channel": channel]))
        case .dropped(let reason) where reason == "state database error":
            return Answer(status: 503, json: IngressError(503, "not committed (state database error); try again").json)
        case .dropped(let reason) where reason == "the same notification is being committed":
            // Another replica's copy is being committed: answered as a duplicate on a retry,
            // or relayed if that commit failed.
            return Answer(status: 503, json: IngressError(503, "the same notification is being committed; try again").json)
        case .dropped(let reason):
            self.logger.info("http message not relayed", metadata: ["channel": "\(channel)", "reason": "\(reason)"])
            return Answer(.unprocessable("not relayed: \(reason)"))
        }
        guard let wait, let status = self.status else {
            return Answer(status: 202, json: IngressJSON.encode(["id": id, "status": "queued", "channel": channel]))
        }
        let name = self.name
        let stopping = self.stopping
        // The wait ends early when the ingress stops (reload, shutdown): the message is
        // safe either way, and a stop must not wait out wait_timeout.
        let outcome = await withTaskGroup(of: MessageDeliveryStatus?.self) { group in
            group.addTask { await status.waitUntilSent(message: id, from: name, timeout: wait) }
            group.addTask {
                await stopping.wait()
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let found = outcome else {
            return Answer(status: 202, json: IngressJSON.encode(["id": id, "status": "queued", "channel": channel]))
        }
        let code: Int
        switch found.state {
        case .queued: code = 202
        case .failed: code = 502
        case .sent, .received, .displayed: code = 200
        }
        return Answer(status: code, json: IngressJSON.encode(found))
    }

    /// A page of `channel`'s archive, newest first: `since` (an age such as `2h`, or a
    /// time), `q` (words that must all appear), `limit` (1 to 1000, default 50) and
    /// `cursor` (the previous page's `next`). Only a channel this ingress is a member of.
    private func history(channel: String, query: [String: String]) async -> Answer {
        guard let archive = self.archive else { return Answer(.notFound("no archive is kept")) }
        var request = ArchiveQuery(channel: channel, limit: 50)
        if let since = query["since"] {
            guard let date = ArchiveTime.parse(since, now: Date()) else {
                return Answer(.unprocessable("since: cannot read '\(since)' as an age (2h) or a time (2026-11-26T10:00Z)"))
            }
            request.since = date
        }
        if let text = query["q"], !text.isEmpty { request.search = text }
        if let limit = query["limit"] {
            guard let count = Int(limit), (1...1000).contains(count) else { return Answer(.unprocessable("limit: a whole number from 1 to 1000, not '\(limit)'")) }
            request.limit = count
        }
        if let cursor = query["cursor"] {
            guard let number = Int64(cursor), number > 0 else { return Answer(.unprocessable("cursor: use the previous page's next, not '\(cursor)'")) }
            request.before = number
        }
        do {
            guard let page = try await archive.read(request, for: self.name) else {
                return Answer(.notFound("unknown channel '\(channel)' (or \(self.name) is not a member of it)"))
            }
            let json = (try? ArchivedMessage.jsonEncoder().encode(page)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            return Answer(status: 200, json: json)
        } catch {
            self.logger.error("cannot read the archive", metadata: ["channel": "\(channel)", "error": "\(error)"])
            return Answer(status: 503, json: IngressError(503, "the archive cannot be read now; try again").json)
        }
    }
}
