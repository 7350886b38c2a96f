import Testing

@testable import XMPP

/// Where to connect: RFC 2782 SRV ordering, the XEP-0368 merge of Direct TLS and
/// STARTTLS records, the RFC 6120 §3.2.2 fallback, and the loopback check for plaintext.
@Suite("ConnectionTarget")
struct ConnectionTargetTests {
    static func srv(_ target: String, priority: UInt16 = 0, weight: UInt16 = 0, port: UInt16 = 5222) -> SRVRecord {
        SRVRecord(priority: priority, weight: weight, port: port, target: target)
    }

    static func configuration(
        _ jid: String = "user@example.com",
        tlsMode: TLSMode = .startTLS,
        host: String? = nil,
        port: Int? = nil
    ) throws -> XMPPClientConfiguration {
        XMPPClientConfiguration(jid: try JID(jid), tlsMode: tlsMode, host: host, port: port)
    }

    /// Targets of a random source that always answers 0 (the first candidate).
    static func plan(
        _ configuration: XMPPClientConfiguration,
        direct: [SRVRecord] = [],
        startTLS: [SRVRecord] = [],
        random: (Int) -> Int = { _ in 0 }
    ) -> [ConnectionTarget] {
        (try? ConnectionTarget.plan(configuration: configuration, directTLSRecords: direct, startTLSRecords: startTLS, random: random).get()) ?? []
    }

    @Test("a lone '.' SRV target means no service: no fallback to the domain (RFC 2782)")
    func serviceNotOffered() throws {
        let configuration = XMPPClientConfiguration(jid: try JID("user@example.com"))
        let dot = SRVRecord(priority: 0, weight: 0, port: 0, target: "")
        let refused = ConnectionTarget.plan(configuration: configuration, directTLSRecords: [], startTLSRecords: [dot], random: { _ in 0 })
        guard case .failure(.resolutionFailed(let domain, _)) = refused else {
            Issue.record("expected resolutionFailed, got \(refused)")
            return
        }
        #expect(domain == "example.com")
        // Direct TLS records still count when only _xmpp-client is refused.
        let direct = SRVRecord(priority: 5, weight: 0, port: 5223, target: "xmpp.example.com")
        #expect(Self.plan(configuration, direct: [direct], startTLS: [dot]) == [ConnectionTarget(host: "xmpp.example.com", port: 5223, tlsMode: .directTLS)])
        // A '.' in _xmpps-client alone does not stop the STARTTLS fallback.
        #expect(Self.plan(configuration, direct: [dot]) == [ConnectionTarget(host: "example.com", port: 5222, tlsMode: .startTLS)])
    }

    // MARK: - SRVRecord.ordered

    @Test("priorities ascend regardless of input order and weight")
    func priorityOrder() {
        let records = [
            Self.srv("c", priority: 30, weight: 100),
            Self.srv("a", priority: 10, weight: 0),
            Self.srv("d", priority: 65535, weight: 1),
            Self.srv("b", priority: 20, weight: 5),
        ]
        for random: (Int) -> Int in [{ _ in 0 }, { $0 }, { $0 / 2 }] {
            #expect(SRVRecord.ordered(records, random: random).map(\.target) == ["a", "b", "c", "d"])
        }
    }

    /// One priority: weights 10, 0, 20, 0 in that order.
    static let group = [
        srv("w10", priority: 1, weight: 10),
        srv("zero1", priority: 1, weight: 0),
        srv("w20", priority: 1, weight: 20),
        srv("zero2", priority: 1, weight: 0),
    ]

    @Test("random 0 takes zero-weight records first (in input order), then the first remaining")
    func randomZero() {
        var bounds: [Int] = []
        let ordered = SRVRecord.ordered(Self.group) { bound in
            bounds.append(bound)
            return 0
        }
        #expect(ordered.map(\.target) == ["zero1", "zero2", "w10", "w20"])
        // The bound is the weight sum of the records not yet ordered.
        #expect(bounds == [30, 30, 30, 20])
    }

    @Test("random returning the total takes the last record (running sum reaches it first there)")
    func randomTotal() {
        var bounds: [Int] = []
        let ordered = SRVRecord.ordered(Self.group) { bound in
            bounds.append(bound)
            return bound
        }
        // [zero1, zero2, w10, w20]: sums 0, 0, 10, 30 → w20; then sums 0, 0, 10 → w10;
        // then only zero weights remain, the total is 0 and the first is taken.
        #expect(ordered.map(\.target) == ["w20", "w10", "zero1", "zero2"])
        #expect(bounds == [30, 10, 0, 0])
    }

    @Test("the weighted pick selects the first running sum >= the random value (RFC 2782)", arguments: [
        (0, "zero1"), (1, "w10"), (10, "w10"), (11, "w20"), (29, "w20"), (30, "w20"),
    ])
    func weightedPick(value: Int, first: String) {
        var calls = 0
        let ordered = SRVRecord.ordered(Self.group) { _ in
            calls += 1
            return calls == 1 ? value : 0
        }
        #expect(ordered.first?.target == first)
        #expect(ordered.count == 4)
        #expect(Set(ordered.map(\.target)) == Set(Self.group.map(\.target)))
    }

    @Test("each priority is ordered separately, lower priority groups first")
    func groupsSeparately() {
        let records = [
            Self.srv("p2-heavy", priority: 2, weight: 90),
            Self.srv("p1-light", priority: 1, weight: 1),
            Self.srv("p2-light", priority: 2, weight: 10),
            Self.srv("p1-heavy", priority: 1, weight: 99),
        ]
        var bounds: [Int] = []
        let ordered = SRVRecord.ordered(records) { bound in
            bounds.append(bound)
            return bound
        }
        #expect(ordered.map(\.target) == ["p1-heavy", "p1-light", "p2-light", "p2-heavy"])
        #expect(bounds == [100, 1, 100, 90])
    }

    @Test("no records, one record")
    func trivial() {
        #expect(SRVRecord.ordered([], random: { _ in Issue.record("random called"); return 0 }).isEmpty)
        #expect(SRVRecord.ordered([Self.srv("only", weight: 7)], random: { $0 }) == [Self.srv("only", weight: 7)])
    }

    @Test("random values outside 0...bound do not trap and keep every record", arguments: [-1, Int.min, 31, Int.max])
    func outOfRangeRandom(value: Int) {
        let ordered = SRVRecord.ordered(Self.group, random: { _ in value })
        #expect(ordered.count == Self.group.count)
        #expect(Set(ordered.map(\.target)) == Set(Self.group.map(\.target)))
    }

    @Test("records with equal fields are both kept")
    func duplicates() {
        let record = Self.srv("same", priority: 1, weight: 1)
        #expect(SRVRecord.ordered([record, record], random: { $0 }) == [record, record])
    }

    // MARK: - ConnectionTarget.plan

    @Test("an explicit host wins over SRV, with the mode's default port", arguments: [
        (TLSMode.startTLS, 5222), (.directTLS, 5223), (.plaintextOnLoopback, 5222),
    ])
    func explicitHostDefaultPort(mode: TLSMode, port: Int) throws {
        let configuration = try Self.configuration(tlsMode: mode, host: "xmpp.internal")
        let targets = Self.plan(
            configuration, direct: [Self.srv("srv-direct", port: 443)], startTLS: [Self.srv("srv-plain", port: 5222)]
        )
        #expect(targets == [ConnectionTarget(host: "xmpp.internal", port: port, tlsMode: mode)])
    }

    @Test("an explicit host and port are used as given")
    func explicitHostAndPort() throws {
        let configuration = try Self.configuration(tlsMode: .directTLS, host: "127.0.0.1", port: 15223)
        #expect(Self.plan(configuration) == [ConnectionTarget(host: "127.0.0.1", port: 15223, tlsMode: .directTLS)])
    }

    @Test("without SRV records: the JID domain on the mode's default port", arguments: [
        (TLSMode.startTLS, 5222), (.directTLS, 5223), (.plaintextOnLoopback, 5222),
    ])
    func noSRV(mode: TLSMode, port: Int) throws {
        let configuration = try Self.configuration("user@example.com/res", tlsMode: mode)
        #expect(Self.plan(configuration) == [ConnectionTarget(host: "example.com", port: port, tlsMode: mode)])
    }

    @Test("Direct TLS and STARTTLS records merge by priority, Direct TLS first on ties")
    func mergeByPriority() throws {
        let configuration = try Self.configuration()
        let targets = Self.plan(
            configuration,
            direct: [Self.srv("d20", priority: 20, port: 443), Self.srv("d10", priority: 10, port: 5223)],
            startTLS: [
                Self.srv("s30", priority: 30, port: 5222), Self.srv("s5", priority: 5, port: 5222),
                Self.srv("s10", priority: 10, port: 5322),
            ]
        )
        #expect(targets == [
            ConnectionTarget(host: "s5", port: 5222, tlsMode: .startTLS),
            ConnectionTarget(host: "d10", port: 5223, tlsMode: .directTLS),
            ConnectionTarget(host: "s10", port: 5322, tlsMode: .startTLS),
            ConnectionTarget(host: "d20", port: 443, tlsMode: .directTLS),
            ConnectionTarget(host: "s30", port: 5222, tlsMode: .startTLS),
        ])
    }

    @Test("on a priority tie all Direct TLS records of that priority come first")
    func tieDirectFirst() throws {
        let configuration = try Self.configuration()
        let targets = Self.plan(
            configuration,
            direct: [Self.srv("dA", priority: 10, port: 5223), Self.srv("dB", priority: 10, port: 5224)],
            startTLS: [Self.srv("sA", priority: 10, port: 5222), Self.srv("sB", priority: 10, port: 5221)]
        )
        #expect(targets.map(\.host) == ["dA", "dB", "sA", "sB"])
        #expect(targets.map(\.tlsMode) == [.directTLS, .directTLS, .startTLS, .startTLS])
    }

    @Test("each list keeps its RFC 2782 weighted order inside the merge")
    func weightedInsideMerge() throws {
        let configuration = try Self.configuration()
        let targets = Self.plan(
            configuration,
            direct: [Self.srv("d-light", priority: 1, weight: 1, port: 5223), Self.srv("d-heavy", priority: 1, weight: 9, port: 5223)],
            startTLS: [Self.srv("s-light", priority: 1, weight: 1), Self.srv("s-heavy", priority: 1, weight: 9)],
            random: { $0 }
        )
        #expect(targets.map(\.host) == ["d-heavy", "d-light", "s-heavy", "s-light"])
    }

    @Test("Direct TLS mode ignores _xmpp-client records")
    func directTLSIgnoresStartTLSRecords() throws {
        let configuration = try Self.configuration(tlsMode: .directTLS)
        #expect(
            Self.plan(configuration, direct: [Self.srv("d", priority: 50, port: 443)], startTLS: [Self.srv("s", priority: 1)])
                == [ConnectionTarget(host: "d", port: 443, tlsMode: .directTLS)]
        )
        // Only _xmpp-client records: they are ignored, so the domain fallback applies.
        #expect(
            Self.plan(configuration, startTLS: [Self.srv("s", priority: 1)])
                == [ConnectionTarget(host: "example.com", port: 5223, tlsMode: .directTLS)]
        )
    }

    @Test("STARTTLS records carry the configured mode; Direct TLS records are always directTLS", arguments: [
        TLSMode.startTLS, .plaintextOnLoopback,
    ])
    func modesOfRecords(mode: TLSMode) throws {
        let configuration = try Self.configuration(tlsMode: mode)
        let targets = Self.plan(configuration, direct: [Self.srv("d", priority: 2, port: 5223)], startTLS: [Self.srv("s", priority: 1)])
        #expect(targets == [
            ConnectionTarget(host: "s", port: 5222, tlsMode: mode),
            ConnectionTarget(host: "d", port: 5223, tlsMode: .directTLS),
        ])
    }

    @Test("only Direct TLS records in STARTTLS mode: no domain fallback is added")
    func onlyDirectRecords() throws {
        let configuration = try Self.configuration()
        #expect(
            Self.plan(configuration, direct: [Self.srv("d", port: 5223)])
                == [ConnectionTarget(host: "d", port: 5223, tlsMode: .directTLS)]
        )
    }

    @Test("description shows host, port and mode")
    func description() {
        #expect("\(ConnectionTarget(host: "xmpp.example.com", port: 5223, tlsMode: .directTLS))" == "xmpp.example.com:5223 (direct)")
        #expect("\(ConnectionTarget(host: "::1", port: 5222, tlsMode: .plaintextOnLoopback))" == "::1:5222 (plaintext-loopback)")
    }

    // MARK: - XMPPClient.isLoopback

    @Test("loopback hosts", arguments: ["127.0.0.1", "127.1.2.3", "127.255.255.255", "::1", "[::1]", "localhost"])
    func loopback(host: String) {
        #expect(XMPPClient.isLoopback(host))
    }

    @Test("non-loopback hosts", arguments: [
        "10.0.0.1", "example.com", "127.0.0", "127.+0.+0.+1", "127.0.0.1.5", "127.0.0.256", "128.0.0.1", "0.0.0.0", "127..0.1",
        "127.0.0.1.example.com", "localhost.example.com", "::2", "[::1", "::1]", "", "127.0.0.-1", "1.127.0.0",
    ])
    func notLoopback(host: String) {
        #expect(!XMPPClient.isLoopback(host))
    }
}
