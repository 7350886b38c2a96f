import OMEMOState

/// An OMEMO journal entry's changes (``JournalEntry/omemo(account:_:)``) as bytes, for the
/// intake log: tags, little-endian lengths and ids, raw records. ``decode(_:)`` refuses
/// anything that does not read exactly (nil), never traps.
package enum OMEMOChangeColumn {
    private enum Tag: UInt8 {
        case created = 1, keys, trust, deviceList
    }

    package static func encode(_ changes: [OMEMOStateChange]) -> [UInt8] {
        var out: [UInt8] = []
        func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) } }
        func bytes(_ value: [UInt8]) {
            u32(UInt32(value.count))
            out += value
        }
        func text(_ value: String) { bytes(Array(value.utf8)) }
        func records(_ values: [UInt32: [UInt8]?]) {
            u32(UInt32(values.count))
            for (id, record) in values.sorted(by: { $0.key < $1.key }) {
                u32(id)
                optional(record)
            }
        }
        func optional(_ value: [UInt8]?) {
            if let value {
                out.append(1)
                bytes(value)
            } else {
                out.append(0)
            }
        }
        func keyChanges(_ changes: OMEMOKeyChanges) {
            records(changes.preKeys)
            records(changes.signedPreKeys)
            u32(UInt32(changes.sessions.count))
            for (address, record) in changes.sessions.sorted(by: { $0.key < $1.key }) {
                text(address.jid)
                u32(address.device)
                optional(record)
            }
            u32(UInt32(changes.identities.count))
            for (address, key) in changes.identities.sorted(by: { $0.key < $1.key }) {
                text(address.jid)
                u32(address.device)
                bytes(key)
            }
            optional(changes.nextPreKeyID.map { id in withUnsafeBytes(of: id.littleEndian) { Array($0) } })
        }
        u32(UInt32(changes.count))
        for change in changes {
            switch change {
            case .created(let keys):
                out.append(Tag.created.rawValue)
                u32(keys.deviceID)
                bytes(keys.identityPublicKey)
                bytes(keys.identityPrivateKey)
                let full = OMEMOKeyChanges(writing: keys)
                keyChanges(full)
            case .keys(let changes):
                out.append(Tag.keys.rawValue)
                keyChanges(changes)
            case .trust(let jid, let key, let level):
                out.append(Tag.trust.rawValue)
                text(jid)
                bytes(key)
                text(level.rawValue)
            case .deviceList(let jid, let devices):
                out.append(Tag.deviceList.rawValue)
                text(jid)
                u32(UInt32(devices.count))
                for device in devices { u32(device) }
            }
        }
        return out
    }

    package static func decode(_ data: [UInt8]) -> [OMEMOStateChange]? {
        var reader = OMEMOColumnReader(data)
        guard let changes = try? reader.changes(), reader.atEnd else { return nil }
        return changes
    }
}
