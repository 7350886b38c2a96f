import Foundation
import TestServers
import Testing

@testable import XMPP

/// One OpenSSL context per TLS setting (issue 8, scale: building one per connection read
/// the whole CA bundle each time, about 0.4 MB an account).
@Suite("TLSContextCache")
struct TLSContextCacheTests {
    @Test("one context per configuration; another configuration, or a changed CA file, gets a new one; a missing CA file is an error every time")
    func sharing() throws {
        let directory = NSTemporaryDirectory() + "tls-cache-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try SelfSignedCertificate.make(name: "example.test", in: directory)
        let second = try SelfSignedCertificate.make(name: "wrong.test", in: directory)
        let file = "\(directory)/ca.pem"
        try FileManager.default.copyItem(atPath: first.certificateFile, toPath: file)

        let cache = TLSContextCache()
        let configuration = TLSConfiguration(additionalTrustRootsFile: file)
        let context = try cache.context(for: configuration)
        #expect(try cache.context(for: configuration) === context)
        #expect(try cache.context(for: TLSConfiguration(certificateVerification: .insecureNoVerification)) !== context)

        // A renewed CA file (other content, later time) is read again.
        let renewed = try Data(contentsOf: URL(fileURLWithPath: second.certificateFile)) + Data("\n".utf8)
        try renewed.write(to: URL(fileURLWithPath: file))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(10)], ofItemAtPath: file)
        #expect(try cache.context(for: configuration) !== context)

        let missing = TLSConfiguration(additionalTrustRootsFile: "\(directory)/missing.pem")
        #expect(throws: TLSError.self) { try cache.context(for: missing) }
        #expect(throws: TLSError.self) { try cache.context(for: missing) }
    }
}
