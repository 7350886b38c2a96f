import Foundation
import OMEMOState

/// An account's OMEMO state (issue 41) as rows, the same in both stores:
/// `omemo_device` (the account's device: id, identity, next prekey id), `omemo_keys`
/// (prekeys, signed prekeys, sessions and remote identity keys, by kind, JID and id),
/// `omemo_trust` and `omemo_device_lists`. Binary values are base64 text, so `state
/// migrate` copies them as any other column.
package enum OMEMORows {
    /// What a row of `omemo_keys` holds.
    package enum Kind: String, CaseIterable, Sendable {
        case preKey = "prekey"
        case signedPreKey = "signed"
        case session
        case identity
    }

    /// One write of a journal entry's changes.
    package enum Write: Equatable, Sendable {
        /// Every row of the account goes (a new device replaces the old).
        case clear(account: String)
        case device(account: String, deviceID: Int64, publicKey: String, privateKey: String, nextPreKeyID: Int64)
        case nextPreKeyID(account: String, Int64)
        case key(account: String, kind: Kind, jid: String, id: Int64, record: String)
        case removeKey(account: String, kind: Kind, jid: String, id: Int64)
        case trust(account: String, jid: String, identityKey: String, level: String)
        case deviceList(account: String, jid: String, devices: String)
    }

    /// The writes for `changes`, in order.
    package static func writes(_ changes: [OMEMOStateChange], account: String) -> [Write] {
        var writes: [Write] = []
        for change in changes {
            switch change {
            case .created(let keys):
                writes.append(.clear(account: account))
                writes.append(
                    .device(
                        account: account, deviceID: Int64(keys.deviceID), publicKey: Self.text(keys.identityPublicKey),
                        privateKey: Self.text(keys.identityPrivateKey), nextPreKeyID: Int64(keys.nextPreKeyID)
                    )
                )
                let full = OMEMOKeyChanges(writing: keys)
                writes += Self.keyWrites(full, account: account)
            case .keys(let keyChanges):
                writes += Self.keyWrites(keyChanges, account: account)
            case .trust(let jid, let key, let level):
                writes.append(.trust(account: account, jid: jid, identityKey: Self.text(key), level: level.rawValue))
            case .deviceList(let jid, let devices):
                writes.append(.deviceList(account: account, jid: jid, devices: devices.map(String.init).joined(separator: " ")))
            }
        }
        return writes
    }

    private static func keyWrites(_ changes: OMEMOKeyChanges, account: String) -> [Write] {
        var writes: [Write] = []
        func put(_ kind: Kind, _ jid: String, _ id: UInt32, _ record: [UInt8]?) {
            if let record {
                writes.append(.key(account: account, kind: kind, jid: jid, id: Int64(id), record: Self.text(record)))
            } else {
                writes.append(.removeKey(account: account, kind: kind, jid: jid, id: Int64(id)))
            }
        }
        for (id, record) in changes.preKeys.sorted(by: { $0.key < $1.key }) { put(.preKey, "", id, record) }
        for (id, record) in changes.signedPreKeys.sorted(by: { $0.key < $1.key }) { put(.signedPreKey, "", id, record) }
        for (address, record) in changes.sessions.sorted(by: { $0.key < $1.key }) { put(.session, address.jid, address.device, record) }
        for (address, key) in changes.identities.sorted(by: { $0.key < $1.key }) { put(.identity, address.jid, address.device, key) }
        if let next = changes.nextPreKeyID { writes.append(.nextPreKeyID(account: account, Int64(next))) }
        return writes
    }

    /// The state from its rows; nil without a device row. A row that does not decode (not
    /// base64, an id out of range) is an error: keys are never half read.
    package static func state(
        device: (deviceID: Int64, publicKey: String, privateKey: String, nextPreKeyID: Int64)?,
        keys: [(kind: String, jid: String, id: Int64, record: String)],
        trust: [(jid: String, identityKey: String, level: String)],
        deviceLists: [(jid: String, devices: String)]
    ) throws(OMEMORowError) -> OMEMOAccountState? {
        guard let device else { return nil }
        var state = OMEMOAccountState(
            keys: OMEMOKeys(
                deviceID: try Self.id(device.deviceID), identityPublicKey: try Self.bytes(device.publicKey),
                identityPrivateKey: try Self.bytes(device.privateKey), nextPreKeyID: try Self.id(device.nextPreKeyID)
            )
        )
        for row in keys {
            let id = try Self.id(row.id)
            let record = try Self.bytes(row.record)
            switch Kind(rawValue: row.kind) {
            case .preKey: state.keys.preKeys[id] = record
            case .signedPreKey: state.keys.signedPreKeys[id] = record
            case .session: state.keys.sessions[OMEMOAddress(jid: row.jid, device: id)] = record
            case .identity: state.keys.identities[OMEMOAddress(jid: row.jid, device: id)] = record
            case nil: throw OMEMORowError("an omemo_keys row of unknown kind '\(row.kind)'")
            }
        }
        for row in trust {
            guard let level = OMEMOTrustLevel(rawValue: row.level) else { throw OMEMORowError("an omemo_trust row with unknown trust '\(row.level)'") }
            state.trust[row.jid, default: [:]][try Self.bytes(row.identityKey)] = level
        }
        for row in deviceLists {
            state.deviceLists[row.jid] = try row.devices.split(separator: " ").map { text throws(OMEMORowError) in
                guard let id = UInt32(text) else { throw OMEMORowError("an omemo_device_lists row with device '\(text)'") }
                return id
            }
        }
        return state
    }

    private static func text(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    private static func bytes(_ text: String) throws(OMEMORowError) -> [UInt8] {
        guard let data = Data(base64Encoded: text) else { throw OMEMORowError("a value that is not base64") }
        return Array(data)
    }

    private static func id(_ value: Int64) throws(OMEMORowError) -> UInt32 {
        guard let id = UInt32(exactly: value) else { throw OMEMORowError("an id out of range: \(value)") }
        return id
    }
}
