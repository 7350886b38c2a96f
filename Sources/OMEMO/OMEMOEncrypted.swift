import XMPP

/// An OMEMO 0.3 message element (XEP-0384 v0.3 §5): the sender's device, for each recipient
/// device the message key sealed by that device's session (a prekey message when it starts
/// the session), the IV, and the payload sealed with the message key (AES-128-GCM). Without
/// a payload it is a key transport: it only moves a session on (phones send one after a key
/// exchange, and now and then).
public struct OMEMOEncrypted: Hashable, Sendable {
    public struct Key: Hashable, Sendable {
        /// The recipient device.
        public var device: UInt32
        /// A prekey message (XEP-0384 v0.3 `prekey='true'`): it starts a session.
        public var startsSession: Bool
        public var data: [UInt8]

        public init(device: UInt32, startsSession: Bool, data: [UInt8]) {
            self.device = device
            self.startsSession = startsSession
            self.data = data
        }
    }

    /// What a reader accepts, beyond which the element is refused: a flood of keys, or a
    /// payload over the configured message size.
    public struct Limits: Hashable, Sendable {
        public var keys: Int
        public var keySize: Int
        public var payloadSize: Int

        public init(keys: Int = 100, keySize: Int = 4_096, payloadSize: Int = 262_144) {
            self.keys = keys
            self.keySize = keySize
            self.payloadSize = payloadSize
        }
    }

    public var senderDevice: UInt32
    public var keys: [Key]
    public var iv: [UInt8]
    /// Nil for a key transport.
    public var payload: [UInt8]?

    public init(senderDevice: UInt32, keys: [Key], iv: [UInt8], payload: [UInt8]?) {
        self.senderDevice = senderDevice
        self.keys = keys
        self.iv = iv
        self.payload = payload
    }

    /// Reads an `<encrypted/>`. Keys that are not well formed are passed over (another
    /// device's junk must not hide ours); anything else wrong refuses the element.
    public init(element: XMLElement, limits: Limits = Limits()) throws(OMEMOElementError) {
        guard element.name == "encrypted", element.namespace == OMEMOWire.namespace else {
            throw OMEMOElementError("encrypted", "expected <encrypted xmlns='\(OMEMOWire.namespace)'>, got <\(element.name)>")
        }
        guard let header = element.firstChild(named: "header", namespace: OMEMOWire.namespace) else { throw OMEMOElementError("encrypted", "no <header>") }
        self.senderDevice = try OMEMOWire.id(header[attribute: "sid"], "sid", in: "encrypted")
        guard let iv = header.firstChild(named: "iv", namespace: OMEMOWire.namespace) else { throw OMEMOElementError("encrypted", "no <iv>") }
        self.iv = try OMEMOWire.bytes(iv.text, "iv", in: "encrypted", limit: 16)
        // 12 bytes, the size AES-GCM wants; early Conversations sent 16.
        guard self.iv.count == 12 || self.iv.count == 16 else { throw OMEMOElementError("encrypted", "an iv of \(self.iv.count) bytes") }
        let entries = header.elements.filter { $0.name == "key" }
        guard entries.count <= limits.keys else { throw OMEMOElementError("encrypted", "\(entries.count) keys, more than the limit of \(limits.keys)") }
        self.keys = entries.compactMap { entry in
            guard let device = try? OMEMOWire.id(entry[attribute: "rid"], "rid", in: "encrypted"),
                let data = try? OMEMOWire.bytes(entry.text, "key", in: "encrypted", limit: limits.keySize), !data.isEmpty
            else { return nil }
            let prekey = entry[attribute: "prekey"]
            return Key(device: device, startsSession: prekey == "true" || prekey == "1", data: data)
        }
        if let payload = element.firstChild(named: "payload", namespace: OMEMOWire.namespace) {
            self.payload = try OMEMOWire.bytes(payload.text, "payload", in: "encrypted", limit: limits.payloadSize)
        } else {
            self.payload = nil
        }
    }

    /// The key sealed for `device`, if the sender sealed one for it.
    public func key(for device: UInt32) -> Key? {
        self.keys.first { $0.device == device }
    }

    /// The `<encrypted/>` to send.
    public var element: XMLElement {
        var header = XMLElement(name: "header", namespace: OMEMOWire.namespace, attributes: [XMLAttribute(name: "sid", value: String(self.senderDevice))])
        for key in self.keys {
            var attributes = [XMLAttribute(name: "rid", value: String(key.device))]
            if key.startsSession { attributes.append(XMLAttribute(name: "prekey", value: "true")) }
            header.append(OMEMOWire.child("key", text: OMEMOWire.base64(key.data), attributes: attributes))
        }
        header.append(OMEMOWire.child("iv", text: OMEMOWire.base64(self.iv)))
        var encrypted = XMLElement(name: "encrypted", namespace: OMEMOWire.namespace)
        encrypted.append(header)
        if let payload = self.payload { encrypted.append(OMEMOWire.child("payload", text: OMEMOWire.base64(payload))) }
        return encrypted
    }
}
