import Logging
import NIOCore

/// HTTP File Upload (XEP-0363) through an account's session: find the service (§3), ask it
/// for a slot (§4), PUT the file (§6). The decisions are the pure ``UploadService``,
/// ``UploadSlotRequest`` and ``UploadSlot``; the requests go through the session
/// (``IQRequester``), the transfer is an ``HTTPSClient``.
public struct HTTPFileUpload: Sendable {
    let session: any IQRequester
    let http: HTTPSClient
    let logger: Logger

    /// Uploads through `session`'s requests (the account's), PUT with `http`.
    public init(through session: any IQRequester, using http: HTTPSClient, logger: Logger) {
        self.session = session
        self.http = http
        self.logger = logger
    }

    /// Finds the account's upload service (XEP-0363 §3): the server itself when its
    /// disco#info lists the feature, else the first entity of its disco#items (XEP-0030
    /// §4) whose disco#info does, in the server's order, asking at most `maximumItems`.
    /// Returns nil when none offers it. An item that answers with an error or not in time
    /// is passed over; a lost connection throws ``UploadError/request(_:)``.
    public func discoverService(timeout: Duration? = nil, maximumItems: Int = 50) async throws(UploadError) -> UploadService? {
        guard let bound = await self.session.boundJID else { throw .request(.notConnected) }
        guard let domain = try? JID(domainpart: bound.domainpart) else {
            throw .invalidRequest("the account's domain is not a JID")
        }
        if let answer = try await self.discoRequest(ServiceDiscovery.infoRequest(id: await self.session.nextID(), to: domain), timeout: timeout),
            let service = UploadService(jid: domain, discoInfoResult: answer)
        {
            return service
        }
        guard let listing = try await self.discoRequest(ServiceDiscovery.itemsRequest(id: await self.session.nextID(), to: domain), timeout: timeout) else {
            return nil
        }
        for item in ServiceDiscovery.items(in: listing, limit: maximumItems) where item != domain {
            guard let answer = try await self.discoRequest(ServiceDiscovery.infoRequest(id: await self.session.nextID(), to: item), timeout: timeout) else { continue }
            if let service = UploadService(jid: item, discoInfoResult: answer) {
                self.logger.debug("upload service found", metadata: ["service": "\(service)"])
                return service
            }
        }
        return nil
    }

    /// Asks `service` for a slot for a file (XEP-0363 §4) and checks the answer: both
    /// URLs https (http only when the HTTPS client allows it, for tests), only the header fields
    /// §4 allows. Refusals become ``UploadError/fileTooLarge(size:maxFileSize:)``,
    /// ``UploadError/notAllowed(text:)``, ``UploadError/tryLater(retryAt:text:)`` or
    /// ``UploadError/refused(_:)`` (§5).
    public func requestSlot(
        service: UploadService,
        filename: String,
        size: Int,
        contentType: String?,
        timeout: Duration? = nil
    ) async throws(UploadError) -> UploadSlot {
        let request = try UploadSlotRequest(filename: filename, size: size, contentType: contentType)
        let answer: IQ
        do {
            answer = try await self.session.request(request.iq(id: await self.session.nextID(), to: service.jid), timeout: timeout)
        } catch XMPPSessionError.stanzaError(let error) {
            throw UploadSlot.error(for: error, requestedSize: size)
        } catch let error as XMPPSessionError {
            throw .request(error)
        } catch {
            throw .request(.writeFailed("\(error)"))
        }
        return try UploadSlot(result: answer, allowInsecureHTTP: self.http.configuration.allowInsecureHTTP)
    }

    /// Uploads `body` and returns the URL to share (the slot's GET URL): finds the
    /// service unless given, refuses a body larger than its `max-file-size` before asking,
    /// gets a slot, PUTs it.
    public func upload(
        _ body: ByteBuffer,
        filename: String,
        contentType: String?,
        service: UploadService? = nil,
        timeout: Duration? = nil
    ) async throws(UploadError) -> String {
        let service = try await self.uploadService(service, timeout: timeout)
        return try await self.upload(body, filename: filename, contentType: contentType, to: service, timeout: timeout)
    }

    /// ``upload(_:filename:contentType:service:timeout:)`` for bytes in an array.
    public func upload(
        _ bytes: [UInt8],
        filename: String,
        contentType: String?,
        service: UploadService? = nil,
        timeout: Duration? = nil
    ) async throws(UploadError) -> String {
        try await self.upload(ByteBuffer(bytes: bytes), filename: filename, contentType: contentType, service: service, timeout: timeout)
    }

    /// Uploads the file at `path` (named by its last path component unless `filename` is
    /// given) and returns the URL to share. The size is checked against the service's
    /// `max-file-size` and `maximumSize` before the file is read (on a detached task, off
    /// the caller's executor).
    public func upload(
        fileAt path: String,
        filename: String? = nil,
        contentType: String?,
        service: UploadService? = nil,
        maximumSize: Int = 1 << 30,
        timeout: Duration? = nil
    ) async throws(UploadError) -> String {
        let service = try await self.uploadService(service, timeout: timeout)
        let limit = min(service.maxFileSize ?? maximumSize, maximumSize)
        let read = await Task.detached { Result { () throws(UploadError) -> ByteBuffer in try UploadFile.read(path: path, maximumSize: limit) } }.value
        let body = try read.get()
        let name = filename ?? path.split(separator: "/").last.map(String.init) ?? path
        return try await self.upload(body, filename: name, contentType: contentType, to: service, timeout: timeout)
    }

    // MARK: -

    private func upload(
        _ body: ByteBuffer,
        filename: String,
        contentType: String?,
        to service: UploadService,
        timeout: Duration?
    ) async throws(UploadError) -> String {
        let size = body.readableBytes
        guard service.accepts(size: size) else { throw .fileTooLarge(size: size, maxFileSize: service.maxFileSize) }
        let slot = try await self.requestSlot(service: service, filename: filename, size: size, contentType: contentType, timeout: timeout)
        do {
            _ = try await self.http.put(url: slot.putURL, headers: slot.putHeaders, contentType: contentType, body: body)
        } catch {
            throw .transfer(error)
        }
        self.logger.info("file uploaded", metadata: ["service": "\(service.jid)", "bytes": "\(size)", "host": "\(slot.getURL.host)"])
        return slot.getURL.description
    }

    private func uploadService(_ given: UploadService?, timeout: Duration?) async throws(UploadError) -> UploadService {
        if let given { return given }
        guard let found = try await self.discoverService(timeout: timeout) else { throw .noUploadService }
        return found
    }

    /// A disco request's answer; nil when the entity answered with an error or not in time
    /// (it offers nothing we can use). Only a gone connection throws.
    private func discoRequest(_ iq: IQ, timeout: Duration?) async throws(UploadError) -> IQ? {
        do {
            return try await self.session.request(iq, timeout: timeout)
        } catch XMPPSessionError.stanzaError(let error) {
            self.logger.debug("disco request refused", metadata: ["to": "\(iq.to.map { "\($0)" } ?? "-")", "error": "\(error)"])
            return nil
        } catch XMPPSessionError.timedOut(let id) {
            self.logger.debug("disco request timed out", metadata: ["to": "\(iq.to.map { "\($0)" } ?? "-")", "id": "\(id)"])
            return nil
        } catch let error as XMPPSessionError {
            throw .request(error)
        } catch {
            throw .request(.writeFailed("\(error)"))
        }
    }
}
