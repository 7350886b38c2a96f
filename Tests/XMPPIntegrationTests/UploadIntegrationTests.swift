import Foundation
import IntegrationSupport
import NIOPosix
import TestServers
import Testing
import XMPP

/// HTTP File Upload (XEP-0363) against a real Prosody with `mod_http_file_share` on an
/// upload component, served over HTTPS on 127.0.0.1 with the test certificate: discovery,
/// a slot, the PUT through our TLS, the GET back, and the refusals.
@Suite("HTTP File Upload against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.uploadEnabled), .timeLimit(.minutes(3)))
struct UploadIntegrationTests {
    /// A client for `server`'s HTTPS: the upload domain connects to 127.0.0.1, and the
    /// certificate is checked against the upload domain, trusting `trustFile` only.
    /// Uploads through `session`'s account, PUT with `http`.
    static func uploads(_ session: TestSession, _ http: HTTPSClient) -> HTTPFileUpload {
        HTTPFileUpload(through: session.session, using: http, logger: IntegrationEnvironment.logger("upload-test"))
    }

    static func http(_ server: ProsodyServer, trustFile: String?) -> HTTPSClient {
        HTTPSClient(
            configuration: .init(
                tls: TLSConfiguration(additionalTrustRootsFile: trustFile, useSystemTrustStore: trustFile == nil),
                connectTimeout: .seconds(5), requestTimeout: .seconds(30),
                connectAddresses: [server.uploadDomain: "127.0.0.1"]
            ),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: IntegrationEnvironment.logger("upload-test")
        )
    }

    /// How many slots Prosody has issued so far (its log line per slot, at info level).
    static func slotsIssued(_ server: ProsodyServer) -> Int {
        let log = (try? String(contentsOfFile: "\(server.directory)/prosody.log", encoding: .utf8)) ?? ""
        return log.components(separatedBy: "Issuing upload slot").count - 1
    }

    @Test("discovery finds the component with its limit; 1 MB goes up and comes back the same, from bytes and from a file")
    func uploadAndFetch() async throws {
        let server = try await UploadServer.started()
        defer { server.shutdown() }
        let alice = try await TestSession.start("alice", on: server)
        let http = Self.http(server, trustFile: server.certificate?.certificateFile)

        let service = try #require(try await Self.uploads(alice, http).discoverService())
        #expect(service == UploadService(jid: try JID(server.uploadDomain), maxFileSize: UploadServer.limit))

        let bytes = UploadServer.randomBytes(1 << 20)
        let url = try await Self.uploads(alice, http).upload(bytes, filename: "build.log", contentType: "text/plain", service: service)
        let parsed = try HTTPURL(url)
        #expect(parsed.scheme == .https)
        #expect(parsed.host == server.uploadDomain)
        #expect(parsed.port == server.httpsPort)
        #expect(parsed.target.hasSuffix("/build.log"))
        let fetched = try await http.get(url: url, maxBytes: 1 << 20)
        #expect(fetched.status == 200)
        #expect(fetched.bodyBytes.count == bytes.count)
        #expect(fetched.bodyBytes == bytes)

        // The same through a file, with discovery inside upload(), named after the file.
        let path = "\(server.directory)/report ü.bin"
        let other = UploadServer.randomBytes(300_000)
        try Data(other).write(to: URL(fileURLWithPath: path))
        let fileURL = try await Self.uploads(alice, http).upload(fileAt: path, contentType: nil)
        #expect(try HTTPURL(fileURL).target.lowercased().hasSuffix("/report%20%c3%bc.bin"))
        #expect(try await http.get(url: fileURL, maxBytes: 1 << 20).bodyBytes == other)
        // What the refusal test relies on: each slot leaves its line in the log.
        #expect(Self.slotsIssued(server) == 2)

        // GET limits: a body over maxBytes (Content-Length), a slot that does not exist.
        await #expect(throws: HTTPSClientError.responseTooLarge(limit: 1000)) { try await http.get(url: url, maxBytes: 1000) }
        var missing = parsed
        missing.target = "/file_share/no-such-slot/build.log"
        await #expect(throws: HTTPSClientError.unexpectedStatus(code: 404, reason: "Not Found", host: server.uploadDomain)) {
            try await http.get(url: missing, maxBytes: 1000)
        }
        await alice.stop()
    }

    @Test("a file over the limit is refused before any slot or PUT; the service's own refusal carries its max-file-size")
    func tooLarge() async throws {
        let server = try await UploadServer.started()
        defer { server.shutdown() }
        let alice = try await TestSession.start("alice", on: server)
        let http = Self.http(server, trustFile: server.certificate?.certificateFile)
        let service = try #require(try await Self.uploads(alice, http).discoverService())

        let issued = Self.slotsIssued(server)
        await #expect(throws: UploadError.fileTooLarge(size: UploadServer.limit + 1, maxFileSize: UploadServer.limit)) {
            try await Self.uploads(alice, http).upload(UploadServer.randomBytes(UploadServer.limit + 1), filename: "big.bin", contentType: nil, service: service)
        }
        let path = "\(server.directory)/big.bin"
        try Data(count: UploadServer.limit + 1).write(to: URL(fileURLWithPath: path))
        await #expect(throws: UploadError.fileTooLarge(size: UploadServer.limit + 1, maxFileSize: UploadServer.limit)) {
            try await Self.uploads(alice, http).upload(fileAt: path, contentType: nil, service: service)
        }
        #expect(Self.slotsIssued(server) == issued)

        // Asked anyway, Prosody refuses with <file-too-large><max-file-size/>.
        let unknownLimit = UploadService(jid: service.jid, maxFileSize: nil)
        await #expect(throws: UploadError.fileTooLarge(size: UploadServer.limit + 1, maxFileSize: UploadServer.limit)) {
            try await Self.uploads(alice, http).requestSlot(service: unknownLimit, filename: "big.bin", size: UploadServer.limit + 1, contentType: nil)
        }
        #expect(Self.slotsIssued(server) == issued)
        await alice.stop()
    }

    @Test("without trust in the test CA the PUT fails certificate verification; a URL by IP address fails the name check")
    func untrustedCertificate() async throws {
        let server = try await UploadServer.started()
        defer { server.shutdown() }
        let alice = try await TestSession.start("alice", on: server)
        let untrusting = Self.http(server, trustFile: nil)
        let service = try #require(try await Self.uploads(alice, untrusting).discoverService())

        do {
            _ = try await Self.uploads(alice, untrusting).upload(UploadServer.randomBytes(1000), filename: "a.bin", contentType: nil, service: service)
            Issue.record("the upload went through an untrusted certificate")
        } catch {
            guard case .transfer(.tls(let tls)) = error else {
                Issue.record("expected a TLS error, got \(error)")
                return
            }
            #expect(tls.kind == .certificateRejected)
            #expect(tls.certificateVerification == "self-signed certificate")
        }

        // Trusted chain, wrong name: the certificate names the domains, not 127.0.0.1.
        let trusting = Self.http(server, trustFile: server.certificate?.certificateFile)
        let byAddress = try HTTPURL("https://127.0.0.1:\(server.httpsPort)/file_share/x/a.bin")
        do {
            _ = try await trusting.get(url: byAddress, maxBytes: 1000)
            Issue.record("a certificate without the address was accepted")
        } catch {
            guard case .tls(let tls) = error else {
                Issue.record("expected a TLS error, got \(error)")
                return
            }
            #expect(tls.kind == .certificateRejected)
            #expect(tls.certificateVerification == "IP address mismatch")
        }
        await alice.stop()
    }
}
