import CLibOMEMO
import OMEMOState

/// The store callbacks libomemo-c calls (`signal_protocol.h`): each finds its
/// ``SignalStore`` through `user_data` and reads or writes its ``OMEMOKeys``. A buffer
/// handed back is a copy libomemo-c frees. Nothing here traps: bad arguments are
/// `SG_ERR_INVAL`.
extension SignalStore {
    private static func store(_ userData: UnsafeMutableRawPointer?) -> SignalStore? {
        userData.map { Unmanaged<SignalStore>.fromOpaque($0).takeUnretainedValue() }
    }

    private static func address(_ address: UnsafePointer<signal_protocol_address>?) -> OMEMOAddress? {
        guard let address, let name = address.pointee.name, address.pointee.device_id > 0 else { return nil }
        let jid = String(decoding: UnsafeRawBufferPointer(start: name, count: address.pointee.name_len), as: UTF8.self)
        return OMEMOAddress(jid: jid, device: UInt32(address.pointee.device_id))
    }

    private static func name(_ name: UnsafePointer<CChar>?, _ length: Int) -> String? {
        name.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) }
    }

    private static func bytes(_ data: UnsafeMutablePointer<UInt8>?, _ length: Int) -> [UInt8] {
        data.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
    }

    /// A fresh `signal_buffer` holding `bytes` in `output`; 0, or `SG_ERR_NOMEM`.
    static func hand(_ bytes: [UInt8], to output: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
        guard let output else { return SG_ERR_INVAL }
        guard let buffer = bytes.withUnsafeBufferPointer({ signal_buffer_create($0.baseAddress, $0.count) }) else { return SG_ERR_NOMEM }
        output.pointee = buffer
        return 0
    }

    static func sessionStore(_ me: UnsafeMutableRawPointer) -> signal_protocol_session_store {
        signal_protocol_session_store(
            load_session_func: { record, _, address, userData in
                guard let store = SignalStore.store(userData), let address = SignalStore.address(address) else { return SG_ERR_INVAL }
                guard let bytes = store.keys.sessions[address] else { return 0 }
                let handed = SignalStore.hand(bytes, to: record)
                return handed == 0 ? 1 : handed
            },
            get_sub_device_sessions_func: { sessions, name, length, userData in
                guard let store = SignalStore.store(userData), let jid = SignalStore.name(name, length), let sessions else { return SG_ERR_INVAL }
                guard let list = signal_int_list_alloc() else { return SG_ERR_NOMEM }
                let devices = store.keys.sessions.keys.filter { $0.jid == jid }.map(\.device).sorted()
                for device in devices { signal_int_list_push_back(list, Int32(bitPattern: device)) }
                sessions.pointee = list
                return Int32(devices.count)
            },
            store_session_func: { address, record, length, _, _, userData in
                guard let store = SignalStore.store(userData), let address = SignalStore.address(address) else { return SG_ERR_INVAL }
                store.storeSession(SignalStore.bytes(record, length), for: address)
                return 0
            },
            contains_session_func: { address, userData in
                guard let store = SignalStore.store(userData), let address = SignalStore.address(address) else { return 0 }
                return store.keys.sessions[address] == nil ? 0 : 1
            },
            delete_session_func: { address, userData in
                guard let store = SignalStore.store(userData), let address = SignalStore.address(address) else { return SG_ERR_INVAL }
                return store.deleteSession(address) ? 1 : 0
            },
            delete_all_sessions_func: { name, length, userData in
                guard let store = SignalStore.store(userData), let jid = SignalStore.name(name, length) else { return SG_ERR_INVAL }
                let addresses = store.keys.sessions.keys.filter { $0.jid == jid }
                for address in addresses { _ = store.deleteSession(address) }
                return Int32(addresses.count)
            },
            destroy_func: nil,
            user_data: me
        )
    }

    static func preKeyStore(_ me: UnsafeMutableRawPointer) -> signal_protocol_pre_key_store {
        signal_protocol_pre_key_store(
            load_pre_key: { record, id, userData in
                guard let store = SignalStore.store(userData) else { return SG_ERR_INVAL }
                guard let bytes = store.keys.preKeys[id] else { return SG_ERR_INVALID_KEY_ID }
                return SignalStore.hand(bytes, to: record)
            },
            store_pre_key: { id, record, length, userData in
                guard let store = SignalStore.store(userData) else { return SG_ERR_INVAL }
                store.storePreKey(SignalStore.bytes(record, length), id: id)
                return 0
            },
            contains_pre_key: { id, userData in
                SignalStore.store(userData)?.keys.preKeys[id] == nil ? 0 : 1
            },
            remove_pre_key: { id, userData in
                guard let store = SignalStore.store(userData) else { return SG_ERR_INVAL }
                store.removePreKey(id)
                return 0
            },
            destroy_func: nil,
            user_data: me
        )
    }

    static func signedPreKeyStore(_ me: UnsafeMutableRawPointer) -> signal_protocol_signed_pre_key_store {
        signal_protocol_signed_pre_key_store(
            load_signed_pre_key: { record, id, userData in
                guard let store = SignalStore.store(userData) else { return SG_ERR_INVAL }
                guard let bytes = store.keys.signedPreKeys[id] else { return SG_ERR_INVALID_KEY_ID }
                return SignalStore.hand(bytes, to: record)
            },
            store_signed_pre_key: { id, record, length, userData in
                guard let store = SignalStore.store(userData) else { return SG_ERR_INVAL }
                store.storeSignedPreKey(SignalStore.bytes(record, length), id: id)
                return 0
            },
            contains_signed_pre_key: { id, userData in
                SignalStore.store(userData)?.keys.signedPreKeys[id] == nil ? 0 : 1
            },
            remove_signed_pre_key: { id, userData in
                guard let store = SignalStore.store(userData) else { return SG_ERR_INVAL }
                store.removeSignedPreKey(id)
                return 0
            },
            destroy_func: nil,
            user_data: me
        )
    }

    static func identityStore(_ me: UnsafeMutableRawPointer) -> signal_protocol_identity_key_store {
        signal_protocol_identity_key_store(
            get_identity_key_pair: { publicData, privateData, userData in
                guard let store = SignalStore.store(userData) else { return SG_ERR_INVAL }
                let handed = SignalStore.hand(store.keys.identityPublicKey, to: publicData)
                guard handed == 0 else { return handed }
                return SignalStore.hand(store.keys.identityPrivateKey, to: privateData)
            },
            get_local_registration_id: { userData, id in
                guard let store = SignalStore.store(userData), let id else { return SG_ERR_INVAL }
                id.pointee = store.keys.deviceID
                return 0
            },
            save_identity: { address, key, length, userData in
                guard let store = SignalStore.store(userData), let address = SignalStore.address(address) else { return SG_ERR_INVAL }
                // A null key asks to forget the key but keep what is kept beside it: the
                // trust decision stays, so a returning key is not trusted anew.
                guard let key else { return 0 }
                store.saveIdentity(SignalStore.bytes(key, length), for: address)
                return 0
            },
            is_trusted_identity: { _, _, _, _ in
                // The device decides trust before it encrypts or relays (``OMEMOTrust``).
                1
            },
            destroy_func: nil,
            user_data: me
        )
    }
}
