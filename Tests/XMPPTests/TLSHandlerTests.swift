import Foundation
import NIOCore
import NIOEmbedded
import TestServers
import Testing

@testable import XMPP

/// Records what reaches the end of a pipeline: user events, errors, and plaintext.
final class PipelineRecorder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    var events: [TLSUserEvent] = []
    var errors: [any Error] = []

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent { self.events.append(event) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.errors.append(error)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }
}

/// A TLS client and a TLS server handler back to back in memory (RFC 6120 §5.4.3).
@Suite("TLS handler over EmbeddedChannel")
struct TLSHandlerTests {
    static let certificates: (good: SelfSignedCertificate, other: SelfSignedCertificate) = {
        let directory = NSTemporaryDirectory() + "xmpp-bridge-tls-tests-\(getpid())"
        // Generated at test time with the openssl command; nothing is committed.
        let good = try! SelfSignedCertificate.make(name: "example.test", in: directory)
        let other = try! SelfSignedCertificate.make(name: "wrong.test", in: directory)
        return (good, other)
    }()

    struct Pair {
        let client = EmbeddedChannel()
        let server = EmbeddedChannel()
        let clientRecorder = PipelineRecorder()
        let serverRecorder = PipelineRecorder()

        init(trust: String?, expectedHost: String = "example.test", serverCertificate: SelfSignedCertificate) throws {
            let clientContext = try TLSContext(
                configuration: TLSConfiguration(additionalTrustRootsFile: trust, useSystemTrustStore: false)
            )
            let serverContext = try TLSContext(
                configuration: TLSConfiguration(),
                role: .server(certificateChainFile: serverCertificate.certificateFile, privateKeyFile: serverCertificate.privateKeyFile)
            )
            try self.client.pipeline.syncOperations.addHandler(TLSHandler(context: clientContext, expectedHost: expectedHost))
            try self.client.pipeline.syncOperations.addHandler(self.clientRecorder)
            try self.server.pipeline.syncOperations.addHandler(TLSHandler(context: serverContext, expectedHost: nil))
            try self.server.pipeline.syncOperations.addHandler(self.serverRecorder)
        }

        func start() throws {
            try self.server.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5222)).wait()
            try self.client.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5222)).wait()
            try self.shuttle()
        }

        /// Moves bytes both ways until neither side has anything to send.
        func shuttle() throws {
            var moved = true
            while moved {
                moved = false
                while self.client.isActive, self.server.isActive, let bytes = try self.client.readOutbound(as: ByteBuffer.self) {
                    try self.server.writeInbound(bytes)
                    moved = true
                }
                while self.client.isActive, self.server.isActive, let bytes = try self.server.readOutbound(as: ByteBuffer.self) {
                    try self.client.writeInbound(bytes)
                    moved = true
                }
            }
        }

        /// What each side still has unwritten after the test (closing both channels).
        func leftovers() throws -> (client: [UInt8], server: [UInt8]) {
            var client: [UInt8] = []
            var server: [UInt8] = []
            while var buffer = try self.client.readOutbound(as: ByteBuffer.self) { client += buffer.readBytes(length: buffer.readableBytes) ?? [] }
            while var buffer = try self.server.readOutbound(as: ByteBuffer.self) { server += buffer.readBytes(length: buffer.readableBytes) ?? [] }
            return (client, server)
        }

        /// Both channels closed with nothing left unread or unwritten.
        func finishIsClean() throws -> Bool {
            let client = try self.client.finish(acceptAlreadyClosed: true).isClean
            let server = try self.server.finish(acceptAlreadyClosed: true).isClean
            return client && server
        }

        func readAll(_ channel: EmbeddedChannel) throws -> [UInt8] {
            var bytes: [UInt8] = []
            while var buffer = try channel.readInbound(as: ByteBuffer.self) {
                bytes += buffer.readBytes(length: buffer.readableBytes) ?? []
            }
            return bytes
        }
    }

    @Test("handshake, then data both ways; both sides derive the same tls-exporter binding")
    func handshakeAndData() throws {
        let pair = try Pair(trust: Self.certificates.good.certificateFile, serverCertificate: Self.certificates.good)
        // Written before the handshake: held until it completes.
        pair.client.write(ByteBuffer(string: "<early/>"), promise: nil)
        pair.client.flush()
        try pair.start()
        #expect(pair.clientRecorder.errors.isEmpty)
        #expect(pair.clientRecorder.events.count == 1)
        #expect(pair.serverRecorder.events.count == 1)
        guard case .handshakeCompleted(let version, let clientBinding) = pair.clientRecorder.events.first,
            case .handshakeCompleted(_, let serverBinding) = pair.serverRecorder.events.first
        else {
            Issue.record("no handshake event")
            return
        }
        #expect(version == "TLSv1.3")
        #expect(clientBinding.exporter?.count == 32)
        #expect(clientBinding.exporter == serverBinding.exporter)
        // The server sees no certificate of ours: no end-point binding on its side.
        #expect(serverBinding.serverEndPoint == nil)

        let big = [UInt8]((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try pair.client.writeAndFlush(ByteBuffer(bytes: big)).wait()
        try pair.server.writeAndFlush(ByteBuffer(string: "pong")).wait()
        try pair.shuttle()
        #expect(try pair.readAll(pair.server) == Array("<early/>".utf8) + big)
        #expect(try pair.readAll(pair.client) == Array("pong".utf8))
        let left = try pair.leftovers()
        #expect(left.client.isEmpty && left.server.isEmpty, "\(left)")
        // Closing sends close_notify: one alert, in TLS 1.3 inside an application-data record
        // (type 23, 22 bytes with its tag), and nothing else.
        try pair.client.close().wait()
        try pair.server.close().wait()
        let closing = try pair.leftovers()
        #expect(closing.client.first == 23 && closing.client.count == 24)
        #expect(closing.server.first == 23 && closing.server.count == 24)
        #expect(try pair.finishIsClean())
    }

    @Test("an idle connection gives its TLS buffers back and goes on both ways; a record cut around it arrives whole (issue 43)")
    func trimBuffers() throws {
        let pair = try Pair(trust: Self.certificates.good.certificateFile, serverCertificate: Self.certificates.good)
        let clientTLS = try pair.client.pipeline.syncOperations.handler(type: TLSHandler.self)
        let serverTLS = try pair.server.pipeline.syncOperations.handler(type: TLSHandler.self)
        pair.client.write(ByteBuffer(string: "<early/>"), promise: nil)
        #expect(!clientTLS.trimBuffers(), "not before the handshake, with a write held")
        try pair.start()
        let big = [UInt8]((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try pair.client.writeAndFlush(ByteBuffer(bytes: big)).wait()
        try pair.server.writeAndFlush(ByteBuffer(bytes: big)).wait()
        try pair.shuttle()
        #expect(try pair.readAll(pair.server) == Array("<early/>".utf8) + big)
        #expect(try pair.readAll(pair.client) == big)
        #expect(clientTLS.trimBuffers())
        #expect(serverTLS.trimBuffers())

        try pair.client.writeAndFlush(ByteBuffer(string: "ping")).wait()
        try pair.server.writeAndFlush(ByteBuffer(string: "pong")).wait()
        try pair.shuttle()
        #expect(try pair.readAll(pair.server) == Array("ping".utf8))
        #expect(try pair.readAll(pair.client) == Array("pong".utf8))

        // Half a record reaches the client, its buffers go, then the other half.
        try pair.server.writeAndFlush(ByteBuffer(string: "a record cut in two")).wait()
        var record = try #require(try pair.server.readOutbound(as: ByteBuffer.self))
        guard let head = record.readSlice(length: record.readableBytes / 2) else {
            Issue.record("no record from the server")
            return
        }
        try pair.client.writeInbound(head)
        #expect(try pair.readAll(pair.client).isEmpty)
        #expect(clientTLS.trimBuffers(), "OpenSSL took the half record into its own buffer")
        try pair.client.writeInbound(record)
        #expect(try pair.readAll(pair.client) == Array("a record cut in two".utf8))
        let left = try pair.leftovers()
        #expect(left.client.isEmpty && left.server.isEmpty, "\(left)")
        try pair.client.close().wait()
        try pair.server.close().wait()
        _ = try pair.leftovers()
        #expect(try pair.finishIsClean())
    }

    @Test("a connection's TLS buffers are kept while either holds a byte; new ones carry the handshake on")
    func trimOnlyWhenEmpty() throws {
        let clientContext = try TLSContext(
            configuration: TLSConfiguration(additionalTrustRootsFile: Self.certificates.good.certificateFile, useSystemTrustStore: false)
        )
        let serverContext = try TLSContext(
            configuration: TLSConfiguration(),
            role: .server(certificateChainFile: Self.certificates.good.certificateFile, privateKeyFile: Self.certificates.good.privateKeyFile)
        )
        let client = try TLSConnection(context: clientContext, expectedHost: "example.test")
        let server = try TLSConnection(context: serverContext, expectedHost: nil)
        let allocator = ByteBufferAllocator()
        _ = client.doHandshake()
        #expect(!client.trimBuffers(), "the ClientHello waits to be sent")
        let hello = try #require(client.dataForNetwork(allocator: allocator))
        #expect(client.trimBuffers())
        server.consumeDataFromNetwork(hello)
        #expect(!server.trimBuffers(), "the ClientHello waits to be read")
        var established = (client: false, server: false)
        for _ in 0..<8 where !(established.client && established.server) {
            if case .complete = server.doHandshake() { established.server = true }
            if let flight = server.dataForNetwork(allocator: allocator) { client.consumeDataFromNetwork(flight) }
            if case .complete = client.doHandshake() { established.client = true }
            if let flight = client.dataForNetwork(allocator: allocator) { server.consumeDataFromNetwork(flight) }
            _ = client.trimBuffers()
        }
        #expect(established.client && established.server)
        guard case .complete = client.writePlaintext(ByteBuffer(string: "after")) else {
            Issue.record("write failed")
            return
        }
        server.consumeDataFromNetwork(try #require(client.dataForNetwork(allocator: allocator)))
        var plaintext = ByteBuffer()
        guard case .complete = server.readPlaintext(into: &plaintext) else {
            Issue.record("read failed")
            return
        }
        #expect(plaintext.readString(length: plaintext.readableBytes) == "after")
    }

    /// RFC 5929 §4.1: the certificate's hash with its signature's hash, SHA-256 in place of
    /// SHA-1, and none for Ed25519, whose signature has no separate hash.
    @Test(
        "tls-server-end-point is the certificate's hash with its signature's hash",
        arguments: [
            (SelfSignedCertificate.KeyKind.p256, "sha256" as String?), (.p384SHA384, "sha384"), (.rsaSHA1, "sha256"), (.ed25519, nil),
        ]
    )
    func serverEndPoint(kind: SelfSignedCertificate.KeyKind, hash: String?) throws {
        let directory = NSTemporaryDirectory() + "xmpp-bridge-tls-tests-\(getpid())"
        let certificate = try SelfSignedCertificate.make(name: "example.test", in: directory, stem: "end-point-\(hash ?? "none")-\(kind)", key: kind)
        let pair = try Pair(trust: certificate.certificateFile, serverCertificate: certificate)
        try pair.start()
        guard case .handshakeCompleted(_, let binding) = pair.clientRecorder.events.first else {
            Issue.record("no handshake: \(pair.clientRecorder.errors)")
            return
        }
        guard let hash else {
            #expect(binding.serverEndPoint == nil)
            return
        }
        // "sha256 Fingerprint=AB:CD:…", the hash of the DER certificate.
        let fingerprint = try Subprocess.run("openssl", ["x509", "-in", certificate.certificateFile, "-noout", "-fingerprint", "-\(hash)"])
        let hex = fingerprint.split(separator: "=").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        let expected = hex.split(separator: ":").compactMap { UInt8($0, radix: 16) }
        #expect(expected.count == (hash == "sha384" ? 48 : 32))
        #expect(binding.serverEndPoint == expected)
    }

    @Test("a certificate for another name is rejected and the channel closed")
    func hostnameMismatch() throws {
        let pair = try Pair(trust: Self.certificates.other.certificateFile, serverCertificate: Self.certificates.other)
        try pair.start()
        let error = try #require(pair.clientRecorder.errors.first as? TLSError)
        #expect(error.kind == .certificateRejected)
        #expect(error.certificateVerification?.contains("mismatch") == true)
        #expect(!pair.client.isActive)
        #expect(pair.clientRecorder.events.isEmpty)
        let left = try pair.leftovers()
        // What the rejecting client still had for the server: at most a TLS alert record.
        #expect(left.client.isEmpty || left.client.first == 0x15, "\(left.client.prefix(8))")
        #expect(try pair.finishIsClean())
    }

    @Test("an untrusted certificate is rejected")
    func untrusted() throws {
        let pair = try Pair(trust: nil, serverCertificate: Self.certificates.good)
        try pair.start()
        let error = try #require(pair.clientRecorder.errors.first as? TLSError)
        #expect(error.kind == .certificateRejected)
        #expect(!pair.client.isActive)
        let left = try pair.leftovers()
        #expect(left.client.isEmpty || left.client.first == 0x15, "\(left.client.prefix(8))")
        #expect(try pair.finishIsClean())
    }

    @Test("plaintext garbage instead of a handshake is a handshake error, not a crash")
    func garbage() throws {
        let context = try TLSContext(configuration: TLSConfiguration(useSystemTrustStore: false))
        let channel = EmbeddedChannel()
        let recorder = PipelineRecorder()
        try channel.pipeline.syncOperations.addHandler(TLSHandler(context: context, expectedHost: "example.test"))
        try channel.pipeline.syncOperations.addHandler(recorder)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5222)).wait()
        _ = try channel.readOutbound(as: ByteBuffer.self)  // ClientHello
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 400 Bad Request\r\n\r\n<stream:stream>"))
        let error = try #require(recorder.errors.first as? TLSError)
        #expect(error.kind == .handshakeFailed)
        #expect(!error.openSSLErrors.isEmpty)
        #expect(!channel.isActive)
        // At most an alert went back; nothing else is left over.
        while let alert = try channel.readOutbound(as: ByteBuffer.self) { #expect(alert.getInteger(at: alert.readerIndex, as: UInt8.self) == 0x15) }
        #expect(try channel.finish(acceptAlreadyClosed: true).isClean)
    }

    @Test("a missing CA file is a configuration error naming the file")
    func missingCAFile() {
        #expect {
            _ = try TLSContext(configuration: TLSConfiguration(additionalTrustRootsFile: "/nonexistent/ca.pem"))
        } throws: { error in
            (error as? TLSError)?.kind == .configuration && "\(error)".contains("/nonexistent/ca.pem")
        }
    }
}
