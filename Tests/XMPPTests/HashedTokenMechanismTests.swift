import Testing

@testable import XMPP

/// FAST's hashed-token mechanism (XEP-0484, draft-schmaus-kitten-sasl-ht): the initial
/// response and the server's proof, with values computed independently (Python's hmac).
@Suite("FAST hashed-token mechanism")
struct HashedTokenMechanismTests {
    static let token = "secret-token:fast-0123456789abcdef"
    static let exporter = (0..<32).map { UInt8($0) }

    @Test("HT-SHA-256-NONE and -EXPR: initial response and responder proof")
    func vectors() {
        #expect(
            SASL2Base64.encode(HashedTokenMechanism.initialResponse(username: "user", token: Self.token, channelBinding: []))
                == "dXNlcgBRStt1QmslvXxm2z6lDdckzr8ydMQ3K/JIeje+WP+Mxg=="
        )
        #expect(HashedTokenMechanism.verifyResponder(try? SASL2Base64.decode("pY+5JudGS08DJ+Bie7P76tHf9+t/0UEV+3SJL4Uj+j4="), token: Self.token, channelBinding: []))
        #expect(
            SASL2Base64.encode(HashedTokenMechanism.initialResponse(username: "user", token: Self.token, channelBinding: Self.exporter))
                == "dXNlcgDEHOdnHNd+KIVmGfAbAP9XXCk/p4mooY7xTTQ1e5YKbQ=="
        )
        #expect(HashedTokenMechanism.verifyResponder(try? SASL2Base64.decode("aKPeRg9Pz1CPNPuGCHsvsemLIDC/VJI4HC8f2tBYNHs="), token: Self.token, channelBinding: Self.exporter))
    }

    @Test("the server's proof refused: missing, for another connection's binding, for another token, truncated")
    func refused() throws {
        let proof = try SASL2Base64.decode("aKPeRg9Pz1CPNPuGCHsvsemLIDC/VJI4HC8f2tBYNHs=")
        #expect(!HashedTokenMechanism.verifyResponder(nil, token: Self.token, channelBinding: Self.exporter))
        #expect(!HashedTokenMechanism.verifyResponder(proof, token: Self.token, channelBinding: []))
        #expect(!HashedTokenMechanism.verifyResponder(proof, token: Self.token + "x", channelBinding: Self.exporter))
        #expect(!HashedTokenMechanism.verifyResponder(Array(proof.dropLast()), token: Self.token, channelBinding: Self.exporter))
        #expect(HashedTokenMechanism.allCases.map { $0.channelBindingType?.rawValue } == ["tls-exporter", "tls-server-end-point", nil])
    }

    /// ejabberd offers all four HT mechanisms whatever the connection can do: a bound one is
    /// used only with its data and its type announced (XEP-0440).
    @Test("which token mechanism a connection can use, strongest first")
    func usable() {
        let all = ["HT-SHA-256-NONE", "HT-SHA-256-UNIQ", "HT-SHA-256-EXPR", "HT-SHA-256-ENDP"]
        let both = ChannelBindingData(exporter: Self.exporter, serverEndPoint: [1, 2, 3])
        #expect(HashedTokenMechanism.strongest(offered: all, announcedTypes: ["tls-exporter", "tls-server-end-point"], data: both) == .tlsExporter)
        #expect(HashedTokenMechanism.strongest(offered: all, announcedTypes: ["tls-server-end-point"], data: both) == .tlsServerEndPoint)
        #expect(HashedTokenMechanism.strongest(offered: all, announcedTypes: nil, data: both) == HashedTokenMechanism.none, "types not announced: unbound")
        #expect(HashedTokenMechanism.strongest(offered: all, announcedTypes: ["tls-exporter"], data: .none) == HashedTokenMechanism.none, "no data on this connection")
        #expect(HashedTokenMechanism.strongest(offered: ["HT-SHA-256-EXPR"], announcedTypes: ["tls-exporter"], data: .none) == nil)
        #expect(!HashedTokenMechanism.tlsExporter.isUsable(offered: ["HT-SHA-256-NONE"], announcedTypes: ["tls-exporter"], data: both), "not offered")
        #expect(HashedTokenMechanism.none.channelBindingData(.none) == [])
    }
}
