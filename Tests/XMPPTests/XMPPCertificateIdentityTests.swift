import Foundation
import TestServers
import Testing

@testable import XMPP

/// XMPP's certificate identities besides DNS-ID (issue 13, defect 11; RFC 6120 §13.7.1.2,
/// RFC 7590 §3.1, RFC 4985): a certificate naming the domain only by XmppAddr or SRV-ID is
/// accepted, one naming another domain (or another service) is not — through the real
/// handshake, with certificates made by the openssl command at test time.
@Suite("XMPP certificate identities")
struct XMPPCertificateIdentityTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var subjectAltName: String
        var accepted: Bool
        var testDescription: String { self.name }
    }

    static let cases: [Case] = [
        Case(name: "XmppAddr for the domain", subjectAltName: "otherName:1.3.6.1.5.5.7.8.5;UTF8:example.test", accepted: true),
        Case(name: "XmppAddr, other case", subjectAltName: "otherName:1.3.6.1.5.5.7.8.5;UTF8:Example.TEST", accepted: true),
        Case(name: "SRV-ID _xmpp-client", subjectAltName: "otherName:1.3.6.1.5.5.7.8.7;IA5:_xmpp-client.example.test", accepted: true),
        Case(name: "SRV-ID _xmpps-client", subjectAltName: "otherName:1.3.6.1.5.5.7.8.7;IA5:_xmpps-client.example.test", accepted: true),
        Case(name: "XmppAddr for another domain", subjectAltName: "otherName:1.3.6.1.5.5.7.8.5;UTF8:wrong.test", accepted: false),
        Case(name: "SRV-ID for server-to-server", subjectAltName: "otherName:1.3.6.1.5.5.7.8.7;IA5:_xmpp-server.example.test", accepted: false),
        Case(name: "XmppAddr of a user, not the domain", subjectAltName: "otherName:1.3.6.1.5.5.7.8.5;UTF8:alice@example.test", accepted: false),
        Case(name: "DNS-ID for another domain beside an unrelated otherName", subjectAltName: "DNS:wrong.test,otherName:1.2.3.4;UTF8:example.test", accepted: false),
    ]

    @Test("a server certificate naming the domain by XmppAddr or SRV-ID only", arguments: Self.cases.indices)
    func identities(_ index: Int) throws {
        let `case` = Self.cases[index]
        let directory = NSTemporaryDirectory() + "xmpp-bridge-identity-tests-\(getpid())"
        let certificate = try SelfSignedCertificate.make(name: "server", in: directory, stem: "identity-\(index)", subjectAltName: `case`.subjectAltName)
        let pair = try TLSHandlerTests.Pair(trust: certificate.certificateFile, serverCertificate: certificate)
        try pair.start()
        if `case`.accepted {
            #expect(pair.clientRecorder.errors.isEmpty, "\(pair.clientRecorder.errors)")
            guard case .handshakeCompleted = pair.clientRecorder.events.first else {
                Issue.record("no handshake")
                return
            }
            try pair.client.close().wait()
            try pair.server.close().wait()
        } else {
            let error = try #require(pair.clientRecorder.errors.first as? TLSError)
            #expect(error.kind == .certificateRejected)
            #expect(error.certificateVerification?.contains("mismatch") == true, "\(error)")
        }
        _ = try pair.leftovers()
        #expect(try pair.finishIsClean())
    }

    @Test("the matching rule on its own: XmppAddr equal to the domain, SRV-ID for client service of it")
    func rule() {
        let xmppAddr = XMPPCertificateIdentity.xmppAddrOID
        let srv = XMPPCertificateIdentity.srvNameOID
        #expect(XMPPCertificateIdentity.matches([(xmppAddr, "example.test")], domain: "EXAMPLE.test"))
        #expect(XMPPCertificateIdentity.matches([(srv, "_XMPP-CLIENT.example.test")], domain: "example.test"))
        #expect(!XMPPCertificateIdentity.matches([(srv, "_xmpp-client.sub.example.test")], domain: "example.test"))
        #expect(!XMPPCertificateIdentity.matches([(xmppAddr, "*.example.test")], domain: "a.example.test"))
        #expect(!XMPPCertificateIdentity.matches([("1.2.3", "example.test")], domain: "example.test"))
        #expect(!XMPPCertificateIdentity.matches([], domain: "example.test"))
    }
}
