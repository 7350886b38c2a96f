import Testing

@testable import XMPP

/// SRV answers read from hand-built DNS response messages (RFC 1035 §4.1, §4.1.4; RFC 2782).
@Suite("DNSResponseParser")
struct DNSResponseParserTests {
    typealias ParseError = DNSResponseParser.ParseError

    // MARK: - Message builder

    /// Builds DNS messages byte by byte; offsets are known, so compression pointers can be aimed.
    enum DNS {
        static let typeA: UInt16 = 1
        static let typeSRV: UInt16 = 33
        static let classIN: UInt16 = 1
        static let classCH: UInt16 = 3
        static let headerLength = 12

        static func u16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
        static func u32(_ value: UInt32) -> [UInt8] { u16(UInt16(value >> 16)) + u16(UInt16(value & 0xFFFF)) }

        /// Flags of a recursive response (QR, RD, RA) with this response code.
        static func flags(rcode: UInt16) -> UInt16 { 0x8180 | rcode }

        static func header(id: UInt16 = 0xBEEF, rcode: UInt16 = 0, questions: UInt16, answers: UInt16) -> [UInt8] {
            u16(id) + u16(flags(rcode: rcode)) + u16(questions) + u16(answers) + u16(0) + u16(0)
        }

        /// An uncompressed name: length-prefixed labels and the root label. `"."` and `""` are the root.
        static func name(_ text: String) -> [UInt8] {
            labels(text) + [0]
        }

        /// Labels without the terminating root label, to be followed by a pointer.
        static func labels(_ text: String) -> [UInt8] {
            text.split(separator: ".").flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
        }

        static func pointer(_ offset: Int) -> [UInt8] { [0xC0 | UInt8(offset >> 8), UInt8(offset & 0xFF)] }

        static func question(_ name: [UInt8], type: UInt16 = typeSRV) -> [UInt8] {
            name + u16(type) + u16(classIN)
        }

        static func record(owner: [UInt8], type: UInt16, klass: UInt16 = classIN, ttl: UInt32 = 300, rdata: [UInt8]) -> [UInt8] {
            owner + u16(type) + u16(klass) + u32(ttl) + u16(UInt16(rdata.count)) + rdata
        }

        static func srvData(priority: UInt16, weight: UInt16, port: UInt16, target: [UInt8]) -> [UInt8] {
            u16(priority) + u16(weight) + u16(port) + target
        }

        static func srv(
            owner: [UInt8], priority: UInt16, weight: UInt16, port: UInt16, target: [UInt8], klass: UInt16 = classIN
        ) -> [UInt8] {
            record(owner: owner, type: typeSRV, klass: klass, rdata: srvData(priority: priority, weight: weight, port: port, target: target))
        }

        static func a(owner: [UInt8], address: [UInt8]) -> [UInt8] {
            record(owner: owner, type: typeA, rdata: address)
        }

        static let service = "_xmpp-client._tcp.example.com"
        /// Offset of `example.com` inside the question name at offset 12.
        static let exampleComOffset = headerLength + 1 + "_xmpp-client".utf8.count + 1 + "_tcp".utf8.count

        /// A response to an SRV query for ``service`` with these answer records.
        static func response(rcode: UInt16 = 0, answers: [[UInt8]]) -> [UInt8] {
            header(rcode: rcode, questions: 1, answers: UInt16(answers.count)) + question(name(service)) + answers.flatMap { $0 }
        }

        /// Two SRV answers with compressed owners and a target that reuses the question's `example.com`.
        static let compressed: [UInt8] = response(answers: [
            srv(owner: pointer(headerLength), priority: 5, weight: 60, port: 5222, target: labels("xmpp1") + pointer(exampleComOffset)),
            srv(owner: pointer(headerLength), priority: 10, weight: 0, port: 5269, target: name("xmpp2.example.net")),
        ])
    }

    static func parse(_ message: [UInt8]) -> Result<[SRVRecord], ParseError> {
        Result { () throws(ParseError) in try DNSResponseParser.srvRecords(from: message) }
    }

    // MARK: - Answers

    @Test("two uncompressed SRV answers are parsed in message order")
    func twoAnswers() throws {
        let message = DNS.response(answers: [
            DNS.srv(owner: DNS.name(DNS.service), priority: 10, weight: 20, port: 5222, target: DNS.name("xmpp1.example.com")),
            DNS.srv(owner: DNS.name(DNS.service), priority: 0, weight: 5, port: 5223, target: DNS.name("xmpp2.example.com")),
        ])
        let records = try DNSResponseParser.srvRecords(from: message)
        #expect(records == [
            SRVRecord(priority: 10, weight: 20, port: 5222, target: "xmpp1.example.com"),
            SRVRecord(priority: 0, weight: 5, port: 5223, target: "xmpp2.example.com"),
        ])
    }

    @Test("compression pointers in owner names and inside the target")
    func compressedNames() throws {
        #expect(DNS.exampleComOffset == 30)
        #expect(Array(DNS.compressed[DNS.exampleComOffset..<DNS.exampleComOffset + 8]) == [7] + Array("example".utf8))
        let records = try DNSResponseParser.srvRecords(from: DNS.compressed)
        #expect(records == [
            SRVRecord(priority: 5, weight: 60, port: 5222, target: "xmpp1.example.com"),
            SRVRecord(priority: 10, weight: 0, port: 5269, target: "xmpp2.example.net"),
        ])
    }

    @Test("a target that is entirely a pointer to an earlier target")
    func targetPointerToEarlierTarget() throws {
        let first = DNS.srv(owner: DNS.pointer(12), priority: 1, weight: 1, port: 5222, target: DNS.name("a.example.org"))
        // The first target starts after the header, question, and the first record's
        // owner (2), type, class, TTL, rdlength (10) and priority, weight, port (6).
        let firstTargetOffset = DNS.headerLength + DNS.question(DNS.name(DNS.service)).count + 2 + 10 + 6
        let second = DNS.srv(owner: DNS.pointer(12), priority: 2, weight: 0, port: 5223, target: DNS.pointer(firstTargetOffset))
        let records = try DNSResponseParser.srvRecords(from: DNS.response(answers: [first, second]))
        #expect(records.map(\.target) == ["a.example.org", "a.example.org"])
        #expect(records.map(\.port) == [5222, 5223])
    }

    @Test("the root target '.' (service not available) yields an empty target")
    func rootTarget() throws {
        let message = DNS.response(answers: [
            DNS.srv(owner: DNS.pointer(12), priority: 0, weight: 0, port: 0, target: DNS.name("."))
        ])
        #expect(try DNSResponseParser.srvRecords(from: message) == [SRVRecord(priority: 0, weight: 0, port: 0, target: "")])
    }

    @Test("non-SRV answers (A, CNAME) and non-IN SRV answers are skipped")
    func nonSRVSkipped() throws {
        let message = DNS.response(answers: [
            DNS.a(owner: DNS.name("xmpp.example.com"), address: [192, 0, 2, 1]),
            DNS.srv(owner: DNS.pointer(12), priority: 1, weight: 2, port: 5222, target: DNS.name("xmpp.example.com")),
            DNS.record(owner: DNS.pointer(12), type: 5, rdata: DNS.name("alias.example.com")),
            DNS.srv(owner: DNS.pointer(12), priority: 3, weight: 4, port: 5223, target: DNS.name("chaos.example.com"), klass: DNS.classCH),
            DNS.a(owner: DNS.pointer(12), address: [198, 51, 100, 7]),
        ])
        #expect(try DNSResponseParser.srvRecords(from: message) == [
            SRVRecord(priority: 1, weight: 2, port: 5222, target: "xmpp.example.com")
        ])
    }

    @Test("no answers gives no records; extreme field values survive")
    func emptyAndExtremes() throws {
        #expect(try DNSResponseParser.srvRecords(from: DNS.response(answers: [])) == [])
        let message = DNS.response(answers: [
            DNS.srv(owner: DNS.pointer(12), priority: 65535, weight: 65535, port: 65535, target: DNS.name("x"))
        ])
        #expect(try DNSResponseParser.srvRecords(from: message) == [
            SRVRecord(priority: 65535, weight: 65535, port: 65535, target: "x")
        ])
    }

    // MARK: - Response codes

    @Test("NXDOMAIN means no records, whatever follows the header")
    func nxdomain() throws {
        #expect(try DNSResponseParser.srvRecords(from: DNS.header(rcode: 3, questions: 0, answers: 0)) == [])
        #expect(try DNSResponseParser.srvRecords(from: DNS.response(rcode: 3, answers: [])) == [])
        // Counts that promise more than is there do not matter once NXDOMAIN is known.
        #expect(try DNSResponseParser.srvRecords(from: DNS.header(rcode: 3, questions: 9, answers: 9)) == [])
    }

    @Test("other response codes are errors", arguments: [1, 2, 4, 5, 15] as [UInt16])
    func responseCodes(rcode: UInt16) {
        let message = DNS.response(rcode: rcode, answers: [
            DNS.srv(owner: DNS.pointer(12), priority: 1, weight: 1, port: 5222, target: DNS.name("xmpp.example.com"))
        ])
        #expect(Self.parse(message) == .failure(.responseCode(Int(rcode))))
    }

    @Test("SERVFAIL is responseCode(2)")
    func servfail() {
        #expect(throws: ParseError.responseCode(2)) {
            try DNSResponseParser.srvRecords(from: DNS.header(rcode: 2, questions: 1, answers: 0))
        }
    }

    // MARK: - Malformed input

    @Test("every proper prefix of a valid response throws truncated, never traps", arguments: [
        (2, DNS.compressed),
        (1, DNS.response(answers: [
            DNS.srv(owner: DNS.name(DNS.service), priority: 10, weight: 20, port: 5222, target: DNS.name("xmpp1.example.com")),
            DNS.a(owner: DNS.name("xmpp1.example.com"), address: [192, 0, 2, 1]),
        ])),
    ])
    func truncatedPrefixes(srvCount: Int, message: [UInt8]) throws {
        #expect(try DNSResponseParser.srvRecords(from: message).count == srvCount)
        for length in 0..<message.count {
            let result = Self.parse(Array(message.prefix(length)))
            #expect(result == .failure(.truncated), "prefix of \(length) of \(message.count) bytes")
        }
    }

    @Test("an rdlength running past the end is truncated")
    func rdlengthPastEnd() {
        var message = DNS.response(answers: [
            DNS.a(owner: DNS.pointer(12), address: [192, 0, 2, 1])
        ])
        // The last two bytes before the rdata are the rdlength (4); claim 5.
        message[message.count - 5] = 5
        #expect(Self.parse(message) == .failure(.truncated))
    }

    @Test("counts promising more than the message holds are truncated")
    func inflatedCounts() {
        let questions = DNS.header(questions: 0xFFFF, answers: 0) + DNS.question(DNS.name(DNS.service))
        #expect(Self.parse(questions) == .failure(.truncated))
        let answers = DNS.header(questions: 1, answers: 0xFFFF) + DNS.question(DNS.name(DNS.service))
        #expect(Self.parse(answers) == .failure(.truncated))
    }

    @Test("a compression pointer loop is badName", arguments: [
        "self", "pair", "question",
    ])
    func pointerLoop(kind: String) {
        let message: [UInt8]
        switch kind {
        case "self":
            // The target points at itself.
            let targetOffset = DNS.headerLength + DNS.question(DNS.name(DNS.service)).count + 2 + 10 + 6
            message = DNS.response(answers: [
                DNS.srv(owner: DNS.pointer(12), priority: 1, weight: 1, port: 5222, target: DNS.pointer(targetOffset))
            ])
        case "pair":
            // A label followed by a pointer back to the label: a.a.a.… forever.
            let targetOffset = DNS.headerLength + DNS.question(DNS.name(DNS.service)).count + 2 + 10 + 6
            message = DNS.response(answers: [
                DNS.srv(owner: DNS.pointer(12), priority: 1, weight: 1, port: 5222, target: [1, 0x61] + DNS.pointer(targetOffset))
            ])
        default:
            // The question name points at itself.
            message = DNS.header(questions: 1, answers: 0) + DNS.pointer(12) + DNS.u16(33) + DNS.u16(1)
        }
        #expect(Self.parse(message) == .failure(.badName))
    }

    @Test("a compression pointer beyond the message is truncated")
    func pointerBeyondEnd() {
        let message = DNS.response(answers: [
            DNS.srv(owner: DNS.pointer(12), priority: 1, weight: 1, port: 5222, target: DNS.pointer(0x3FFF))
        ])
        #expect(Self.parse(message) == .failure(.truncated))
    }

    @Test("reserved label types (0x40, 0x80) are badName", arguments: [0x40, 0x80, 0x7F, 0xBF] as [UInt8])
    func reservedLabelTypes(lengthByte: UInt8) {
        let message = DNS.response(answers: [
            DNS.srv(owner: DNS.pointer(12), priority: 1, weight: 1, port: 5222, target: [lengthByte, 0x61, 0])
        ])
        #expect(Self.parse(message) == .failure(.badName))
    }

    @Test("a name with more than 128 labels is badName")
    func tooManyLabels() {
        let long = Array(Array(repeating: [UInt8]([1, 0x61]), count: 129).joined()) + [0]
        let message = DNS.response(answers: [
            DNS.srv(owner: DNS.pointer(12), priority: 1, weight: 1, port: 5222, target: long)
        ])
        #expect(Self.parse(message) == .failure(.badName))
        let fits = Array(Array(repeating: [UInt8]([1, 0x61]), count: 128).joined()) + [0]
        let ok = DNS.response(answers: [
            DNS.srv(owner: DNS.pointer(12), priority: 1, weight: 1, port: 5222, target: fits)
        ])
        #expect((try? DNSResponseParser.srvRecords(from: ok))?.first?.target.count == 255)
    }

    @Test("single-byte corruptions anywhere never trap")
    func corruptionsNeverTrap() {
        var outcomes = 0
        for index in DNS.compressed.indices {
            for value: UInt8 in [0x00, 0x01, 0x3F, 0x40, 0x7F, 0xC0, 0xC1, 0xFF] {
                var message = DNS.compressed
                message[index] = value
                switch Self.parse(message) {
                case .success, .failure: outcomes += 1
                }
            }
        }
        #expect(outcomes == DNS.compressed.count * 8)
    }

    @Test(
        "an SRV rdlength too short for its fields is an error, not a record made of the next record's bytes"
    )
    func srvRdataOverrun() {
        // SRV rdata claims 4 bytes (priority, weight) but the port and target are read
        // from the next record (its owner pointer 0xC00C becomes the port).
        let short = DNS.record(owner: DNS.pointer(12), type: DNS.typeSRV, rdata: DNS.u16(10) + DNS.u16(5))
        let next = DNS.a(owner: DNS.pointer(12), address: [192, 0, 2, 1])
        let message = DNS.response(answers: [short, next])
        // Today: [SRVRecord(priority: 10, weight: 5, port: 0xC00C, target: "")].
        #expect(throws: ParseError.self) { try DNSResponseParser.srvRecords(from: message) }
    }
}
