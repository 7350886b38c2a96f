/// Reads SRV answers out of a DNS response message (RFC 1035 §4.1, RFC 2782).
///
/// Pure and bounds-checked: a malformed or hostile response yields an error, never a
/// trap. Compressed names are followed with a hop limit, so pointer loops end.
public enum DNSResponseParser {
    public enum ParseError: Error, Hashable, Sendable {
        case truncated
        case badName
        case responseCode(Int)
    }

    private static let typeSRV: UInt16 = 33
    private static let classIN: UInt16 = 1

    public static func srvRecords(from message: [UInt8]) throws(ParseError) -> [SRVRecord] {
        var reader = Reader(bytes: message)
        _ = try reader.u16()  // id
        let flags = try reader.u16()
        let responseCode = Int(flags & 0x000F)
        // NXDOMAIN (3) simply means "no records".
        if responseCode == 3 { return [] }
        guard responseCode == 0 else { throw .responseCode(responseCode) }
        let questions = Int(try reader.u16())
        let answers = Int(try reader.u16())
        _ = try reader.u16()  // authority
        _ = try reader.u16()  // additional
        for _ in 0..<questions {
            _ = try reader.name()
            _ = try reader.u16()
            _ = try reader.u16()
        }
        var records: [SRVRecord] = []
        for _ in 0..<answers {
            _ = try reader.name()
            let type = try reader.u16()
            let klass = try reader.u16()
            _ = try reader.u32()  // TTL
            let length = Int(try reader.u16())
            let end = reader.offset + length
            guard end <= message.count else { throw .truncated }
            if type == Self.typeSRV, klass == Self.classIN {
                // The fields and the in-record part of the target must fit RDLENGTH.
                guard length >= 7 else { throw .truncated }
                let priority = try reader.u16()
                let weight = try reader.u16()
                let port = try reader.u16()
                let target = try reader.name()
                guard reader.offset <= end else { throw .truncated }
                records.append(SRVRecord(priority: priority, weight: weight, port: port, target: target))
            }
            reader.offset = end
        }
        return records
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func u8() throws(ParseError) -> UInt8 {
            guard self.offset < self.bytes.count else { throw .truncated }
            defer { self.offset += 1 }
            return self.bytes[self.offset]
        }

        mutating func u16() throws(ParseError) -> UInt16 {
            UInt16(try self.u8()) << 8 | UInt16(try self.u8())
        }

        mutating func u32() throws(ParseError) -> UInt32 {
            UInt32(try self.u16()) << 16 | UInt32(try self.u16())
        }

        /// Reads a possibly compressed domain name; leaves `offset` after it.
        mutating func name() throws(ParseError) -> String {
            var labels: [String] = []
            var position = self.offset
            var resumeAt: Int?
            var hops = 0
            while true {
                guard position < self.bytes.count else { throw .truncated }
                let length = Int(self.bytes[position])
                if length == 0 {
                    position += 1
                    break
                }
                if length & 0xC0 == 0xC0 {
                    guard position + 1 < self.bytes.count else { throw .truncated }
                    hops += 1
                    guard hops <= 32 else { throw .badName }
                    if resumeAt == nil { resumeAt = position + 2 }
                    position = (length & 0x3F) << 8 | Int(self.bytes[position + 1])
                    continue
                }
                guard length & 0xC0 == 0 else { throw .badName }
                let start = position + 1
                guard start + length <= self.bytes.count else { throw .truncated }
                labels.append(String(decoding: self.bytes[start..<start + length], as: UTF8.self))
                guard labels.count <= 128 else { throw .badName }
                position = start + length
            }
            self.offset = resumeAt ?? position
            return labels.joined(separator: ".")
        }
    }
}
