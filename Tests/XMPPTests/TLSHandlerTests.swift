import EmbeddedProsody
import Foundation
import NIOCore
import NIOEmbedded
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
        #expect(clientBinding?.count == 32)
        #expect(clientBinding == serverBinding)

        let big = [UInt8]((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try pair.client.writeAndFlush(ByteBuffer(bytes: big)).wait()
        try pair.server.writeAndFlush(ByteBuffer(string: "pong")).wait()
        try pair.shuttle()
        #expect(try pair.readAll(pair.server) == Array("<early/>".utf8) + big)
        #expect(try pair.readAll(pair.client) == Array("pong".utf8))
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
    }

    @Test("an untrusted certificate is rejected")
    func untrusted() throws {
        let pair = try Pair(trust: nil, serverCertificate: Self.certificates.good)
        try pair.start()
        let error = try #require(pair.clientRecorder.errors.first as? TLSError)
        #expect(error.kind == .certificateRejected)
        #expect(!pair.client.isActive)
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
