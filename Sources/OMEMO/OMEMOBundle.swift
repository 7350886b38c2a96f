import XMPP

/// A device's public keys as its PEP bundle carries them (XEP-0384 v0.3 §4.3): the identity
/// key, one signed prekey with its signature, and the one-time prekeys a new session takes
/// one of. Keys are serialized Curve25519 points (0x05 and 32 bytes).
public struct OMEMOBundle: Hashable, Sendable {
    public struct PreKey: Hashable, Sendable {
        public var id: UInt32
        public var key: [UInt8]

        public init(id: UInt32, key: [UInt8]) {
            self.id = id
            self.key = key
        }
    }

    public var identityKey: [UInt8]
    public var signedPreKeyID: UInt32
    public var signedPreKey: [UInt8]
    public var signedPreKeySignature: [UInt8]
    public var preKeys: [PreKey]

    public init(identityKey: [UInt8], signedPreKeyID: UInt32, signedPreKey: [UInt8], signedPreKeySignature: [UInt8], preKeys: [PreKey]) {
        self.identityKey = identityKey
        self.signedPreKeyID = signedPreKeyID
        self.signedPreKey = signedPreKey
        self.signedPreKeySignature = signedPreKeySignature
        self.preKeys = preKeys
    }

    /// A public key's size: 0x05 and the 32 bytes of the point.
    static let keySize = 33
    /// An XEdDSA signature's size.
    static let signatureSize = 64

    /// Reads a `<bundle/>`. Every part must be there and of its size; prekeys that are not
    /// well formed are passed over, more than `preKeyLimit` refuse the bundle, and a bundle
    /// without a usable prekey is refused (no session can start from it).
    public init(element: XMLElement, preKeyLimit: Int) throws(OMEMOElementError) {
        guard element.name == "bundle", element.namespace == OMEMOWire.namespace else {
            throw OMEMOElementError("bundle", "expected <bundle xmlns='\(OMEMOWire.namespace)'>, got <\(element.name)>")
        }
        func part(_ name: String) throws(OMEMOElementError) -> XMLElement {
            guard let child = element.firstChild(named: name, namespace: OMEMOWire.namespace) else { throw OMEMOElementError("bundle", "no <\(name)>") }
            return child
        }
        func key(_ text: String, _ what: String) throws(OMEMOElementError) -> [UInt8] {
            let bytes = try OMEMOWire.bytes(text, what, in: "bundle", limit: Self.keySize)
            guard bytes.count == Self.keySize, bytes.first == 0x05 else { throw OMEMOElementError("bundle", "\(what) is not a Curve25519 public key") }
            return bytes
        }
        let signed = try part("signedPreKeyPublic")
        self.signedPreKeyID = try OMEMOWire.id(signed[attribute: "signedPreKeyId"], "signedPreKeyId", in: "bundle")
        self.signedPreKey = try key(signed.text, "signedPreKeyPublic")
        self.signedPreKeySignature = try OMEMOWire.bytes(try part("signedPreKeySignature").text, "signedPreKeySignature", in: "bundle", limit: Self.signatureSize)
        guard self.signedPreKeySignature.count == Self.signatureSize else { throw OMEMOElementError("bundle", "signedPreKeySignature is not 64 bytes") }
        self.identityKey = try key(try part("identityKey").text, "identityKey")
        let entries = try part("prekeys").elements.filter { $0.name == "preKeyPublic" }
        guard entries.count <= preKeyLimit else { throw OMEMOElementError("bundle", "\(entries.count) prekeys, more than the limit of \(preKeyLimit)") }
        self.preKeys = entries.compactMap { entry in
            guard let id = try? OMEMOWire.id(entry[attribute: "preKeyId"], "preKeyId", in: "bundle"), let bytes = try? key(entry.text, "preKeyPublic") else { return nil }
            return PreKey(id: id, key: bytes)
        }
        guard !self.preKeys.isEmpty else { throw OMEMOElementError("bundle", "no usable prekey") }
    }

    /// The `<bundle/>` to publish.
    public var element: XMLElement {
        var bundle = XMLElement(name: "bundle", namespace: OMEMOWire.namespace)
        bundle.append(
            OMEMOWire.child("signedPreKeyPublic", text: OMEMOWire.base64(self.signedPreKey), attributes: [XMLAttribute(name: "signedPreKeyId", value: String(self.signedPreKeyID))])
        )
        bundle.append(OMEMOWire.child("signedPreKeySignature", text: OMEMOWire.base64(self.signedPreKeySignature)))
        bundle.append(OMEMOWire.child("identityKey", text: OMEMOWire.base64(self.identityKey)))
        var preKeys = XMLElement(name: "prekeys", namespace: OMEMOWire.namespace)
        for preKey in self.preKeys {
            preKeys.append(OMEMOWire.child("preKeyPublic", text: OMEMOWire.base64(preKey.key), attributes: [XMLAttribute(name: "preKeyId", value: String(preKey.id))]))
        }
        bundle.append(preKeys)
        return bundle
    }
}
