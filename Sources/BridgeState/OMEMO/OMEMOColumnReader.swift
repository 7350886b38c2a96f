import OMEMOState

/// Reads what ``OMEMOChangeColumn/encode(_:)`` wrote; any shortfall or bad tag throws.
struct OMEMOColumnReader {
    struct Malformed: Error {}

    private let data: [UInt8]
    private var offset = 0

    init(_ data: [UInt8]) { self.data = data }

    var atEnd: Bool { self.offset == self.data.count }

    private mutating func take(_ count: Int) throws(Malformed) -> ArraySlice<UInt8> {
        guard count >= 0, count <= self.data.count - self.offset else { throw Malformed() }
        defer { self.offset += count }
        return self.data[self.offset..<(self.offset + count)]
    }

    private mutating func u8() throws(Malformed) -> UInt8 { try self.take(1).first ?? 0 }

    private mutating func u32() throws(Malformed) -> UInt32 {
        try self.take(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// A count of items that each take at least `size` bytes: never more than what is left.
    private mutating func count(_ size: Int) throws(Malformed) -> Int {
        let count = Int(try self.u32())
        guard count <= (self.data.count - self.offset) / max(size, 1) else { throw Malformed() }
        return count
    }

    private mutating func bytes() throws(Malformed) -> [UInt8] { Array(try self.take(Int(try self.u32()))) }
    private mutating func text() throws(Malformed) -> String { String(decoding: try self.bytes(), as: UTF8.self) }

    private mutating func optional() throws(Malformed) -> [UInt8]? {
        switch try self.u8() {
        case 0: return nil
        case 1: return try self.bytes()
        default: throw Malformed()
        }
    }

    private mutating func records() throws(Malformed) -> [UInt32: [UInt8]?] {
        var records: [UInt32: [UInt8]?] = [:]
        for _ in 0..<(try self.count(5)) { records[try self.u32()] = .some(try self.optional()) }
        return records
    }

    private mutating func keyChanges() throws(Malformed) -> OMEMOKeyChanges {
        var changes = OMEMOKeyChanges()
        changes.preKeys = try self.records()
        changes.signedPreKeys = try self.records()
        for _ in 0..<(try self.count(9)) {
            changes.sessions[OMEMOAddress(jid: try self.text(), device: try self.u32())] = .some(try self.optional())
        }
        for _ in 0..<(try self.count(12)) {
            changes.identities[OMEMOAddress(jid: try self.text(), device: try self.u32())] = try self.bytes()
        }
        if let next = try self.optional() {
            guard next.count == 4 else { throw Malformed() }
            changes.nextPreKeyID = next.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
        return changes
    }

    mutating func changes() throws(Malformed) -> [OMEMOStateChange] {
        var changes: [OMEMOStateChange] = []
        for _ in 0..<(try self.count(1)) {
            switch try self.u8() {
            case 1:
                let deviceID = try self.u32()
                let publicKey = try self.bytes()
                let privateKey = try self.bytes()
                let full = try self.keyChanges()
                var keys = OMEMOKeys(deviceID: deviceID, identityPublicKey: publicKey, identityPrivateKey: privateKey, nextPreKeyID: full.nextPreKeyID ?? 1)
                keys.apply(full)
                changes.append(.created(keys))
            case 2:
                changes.append(.keys(try self.keyChanges()))
            case 3:
                let jid = try self.text()
                let key = try self.bytes()
                guard let level = OMEMOTrustLevel(rawValue: try self.text()) else { throw Malformed() }
                changes.append(.trust(jid: jid, identityKey: key, level))
            case 4:
                let jid = try self.text()
                var devices: [UInt32] = []
                for _ in 0..<(try self.count(4)) { devices.append(try self.u32()) }
                changes.append(.deviceList(jid: jid, devices: devices))
            default:
                throw Malformed()
            }
        }
        return changes
    }
}
