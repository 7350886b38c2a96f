import Foundation
import Testing
import XMPP

@testable import OMEMO

/// OMEMO 0.3's elements (XEP-0384 v0.3 §4–5) as phones send them, and as they must never
/// be taken: each malformed element a clear error, never a crash.
@Suite("OMEMO 0.3 elements")
struct OMEMOElementsTests {
    static let ns = OMEMOWire.namespace

    /// The first element of `xml`, parsed as a server's stream would carry it.
    static func element(_ xml: String) throws -> XMLElement {
        let parser = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        let text = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>" + xml
        let result = Array(text.utf8).withUnsafeBytes { parser.feed($0, into: &events) }
        if case .failure(let error) = result { throw error }
        for event in events {
            if case .element(let element) = event { return element }
        }
        throw OMEMOElementError("test", "no element in \(xml)")
    }

    static func key(_ fill: UInt8) -> [UInt8] { [0x05] + Array(repeating: fill, count: 32) }

    /// Base64 folded every 20 characters, as Conversations writes it.
    static func folded(_ bytes: [UInt8]) -> String {
        let text = Data(bytes).base64EncodedString()
        return stride(from: 0, to: text.count, by: 20).map { String(text.dropFirst($0).prefix(20)) }.joined(separator: "\n")
    }

    // MARK: - Device list

    @Test("a device list: ids ascending and once each; junk ids passed over; our own put back; read back from what it writes")
    func deviceList() throws {
        let list = try OMEMODeviceList(
            element: try Self.element(
                "<list xmlns='\(Self.ns)'><device id='6626'/><device id='15339'/><device id='6626'/><device id='0'/><device id='abc'/><device id='4294967295'/><device/></list>"
            ),
            limit: 50
        )
        #expect(list.devices == [6626, 15339])
        let withOurs = list.adding(42)
        #expect(withOurs.devices == [42, 6626, 15339])
        #expect(withOurs.contains(42) && !list.contains(42))
        #expect(try OMEMODeviceList(element: withOurs.element, limit: 50) == withOurs)
    }

    @Test("a device list flood, or another element, is refused with a reason")
    func deviceListRefused() throws {
        let flood = "<list xmlns='\(Self.ns)'>" + (1...51).map { "<device id='\($0)'/>" }.joined() + "</list>"
        #expect(throws: OMEMOElementError("list", "51 devices, more than the limit of 50")) { try OMEMODeviceList(element: try Self.element(flood), limit: 50) }
        #expect(throws: OMEMOElementError.self) { try OMEMODeviceList(element: try Self.element("<list xmlns='urn:xmpp:omemo:2'/>"), limit: 50) }
    }

    // MARK: - Bundle

    static func bundleXML(identity: String? = nil, signature: String? = nil, preKeys: String? = nil) -> String {
        """
        <bundle xmlns='\(ns)'><signedPreKeyPublic signedPreKeyId='2'>\(folded(key(2)))</signedPreKeyPublic>\
        <signedPreKeySignature>\(signature ?? folded(Array(repeating: 7, count: 64)))</signedPreKeySignature>\
        <identityKey>\(identity ?? folded(key(1)))</identityKey>\
        <prekeys>\(preKeys ?? "<preKeyPublic preKeyId='1'>\(folded(key(3)))</preKeyPublic><preKeyPublic preKeyId='2'>\(folded(key(4)))</preKeyPublic>")</prekeys></bundle>
        """
    }

    @Test("a bundle as Conversations publishes it (base64 folded over lines): keys, signature, prekeys; read back from what it writes")
    func bundle() throws {
        let bundle = try OMEMOBundle(element: try Self.element(Self.bundleXML()), preKeyLimit: 200)
        #expect(bundle.identityKey == Self.key(1))
        #expect(bundle.signedPreKeyID == 2)
        #expect(bundle.signedPreKey == Self.key(2))
        #expect(bundle.signedPreKeySignature == Array(repeating: 7, count: 64))
        #expect(bundle.preKeys == [.init(id: 1, key: Self.key(3)), .init(id: 2, key: Self.key(4))])
        #expect(try OMEMOBundle(element: bundle.element, preKeyLimit: 200) == bundle)
    }

    @Test("a bundle's bad prekeys are passed over; one without a usable prekey, with a short key or signature, bad base64 or too many prekeys is refused")
    func bundleRefused() throws {
        let someBad = "<preKeyPublic preKeyId='x'>\(Self.folded(Self.key(3)))</preKeyPublic><preKeyPublic preKeyId='5'>AAAA</preKeyPublic><preKeyPublic preKeyId='6'>\(Self.folded(Self.key(6)))</preKeyPublic>"
        #expect(try OMEMOBundle(element: try Self.element(Self.bundleXML(preKeys: someBad)), preKeyLimit: 200).preKeys == [.init(id: 6, key: Self.key(6))])
        let cases: [(String, OMEMOElementError)] = [
            (Self.bundleXML(preKeys: ""), OMEMOElementError("bundle", "no usable prekey")),
            (Self.bundleXML(identity: Self.folded(Array(Self.key(1).dropLast()))), OMEMOElementError("bundle", "identityKey is not a Curve25519 public key")),
            (Self.bundleXML(identity: Self.folded([0x06] + Self.key(1).dropFirst())), OMEMOElementError("bundle", "identityKey is not a Curve25519 public key")),
            (Self.bundleXML(signature: "AAAA"), OMEMOElementError("bundle", "signedPreKeySignature is not 64 bytes")),
            (Self.bundleXML(signature: "not base64!"), OMEMOElementError("bundle", "signedPreKeySignature is not base64")),
            (
                Self.bundleXML(preKeys: (1...3).map { "<preKeyPublic preKeyId='\($0)'>\(Self.folded(Self.key(3)))</preKeyPublic>" }.joined()),
                OMEMOElementError("bundle", "3 prekeys, more than the limit of 2")
            ),
            ("<bundle xmlns='\(Self.ns)'/>", OMEMOElementError("bundle", "no <signedPreKeyPublic>")),
        ]
        for (xml, error) in cases {
            #expect(throws: error) { try OMEMOBundle(element: try Self.element(xml), preKeyLimit: 2) }
        }
    }

    // MARK: - Encrypted

    static let iv = Array(repeating: UInt8(9), count: 12)

    @Test("a message: the sender's device, keys for each recipient device (prekey='true' or '1' starts a session), the iv and the payload; read back from what it writes")
    func encrypted() throws {
        let xml = """
            <encrypted xmlns='\(Self.ns)'><header sid='27183'><key rid='31415'>\(Self.folded(Array(repeating: 1, count: 40)))</key>\
            <key prekey='true' rid='12321'>\(Self.folded(Array(repeating: 2, count: 200)))</key><key prekey='1' rid='777'>AQID</key>\
            <key rid='0'>AQID</key><key rid='5'></key><iv>\(Self.folded(Self.iv))</iv></header><payload>\(Self.folded(Array("hi".utf8)))</payload></encrypted>
            """
        let message = try OMEMOEncrypted(element: try Self.element(xml))
        #expect(message.senderDevice == 27183)
        #expect(message.keys.map(\.device) == [31415, 12321, 777])
        #expect(message.keys.map(\.startsSession) == [false, true, true])
        #expect(message.key(for: 12321)?.data == Array(repeating: 2, count: 200))
        #expect(message.key(for: 5) == nil)
        #expect(message.iv == Self.iv)
        #expect(message.payload == Array("hi".utf8))
        #expect(try OMEMOEncrypted(element: message.element) == message)
    }

    @Test("a key transport has no payload")
    func keyTransport() throws {
        let message = try OMEMOEncrypted(element: try Self.element("<encrypted xmlns='\(Self.ns)'><header sid='1'><key rid='2'>AQID</key><iv>\(Self.folded(Self.iv))</iv></header></encrypted>"))
        #expect(message.payload == nil)
        #expect(message.keys.count == 1)
    }

    @Test("a malformed message is refused with a reason: no header, no or a bad sid, no iv or one of a wrong size, a payload not base64 or over the limit, a key flood")
    func encryptedRefused() throws {
        let iv = "<iv>\(Self.folded(Self.iv))</iv>"
        let limits = OMEMOEncrypted.Limits(keys: 2, keySize: 64, payloadSize: 16)
        let cases: [(String, OMEMOElementError)] = [
            ("<encrypted xmlns='\(Self.ns)'/>", OMEMOElementError("encrypted", "no <header>")),
            ("<encrypted xmlns='\(Self.ns)'><header>\(iv)</header></encrypted>", OMEMOElementError("encrypted", "sid missing is not an id from 1 to 2147483647")),
            ("<encrypted xmlns='\(Self.ns)'><header sid='-4'>\(iv)</header></encrypted>", OMEMOElementError("encrypted", "sid '-4' is not an id from 1 to 2147483647")),
            ("<encrypted xmlns='\(Self.ns)'><header sid='1'/></encrypted>", OMEMOElementError("encrypted", "no <iv>")),
            ("<encrypted xmlns='\(Self.ns)'><header sid='1'><iv>AQIDBA==</iv></header></encrypted>", OMEMOElementError("encrypted", "an iv of 4 bytes")),
            ("<encrypted xmlns='\(Self.ns)'><header sid='1'>\(iv)</header><payload>%%%</payload></encrypted>", OMEMOElementError("encrypted", "payload is not base64")),
            (
                "<encrypted xmlns='\(Self.ns)'><header sid='1'>\(iv)</header><payload>\(Self.folded(Array(repeating: 0, count: 40)))</payload></encrypted>",
                OMEMOElementError("encrypted", "payload is longer than 16 bytes")
            ),
            (
                "<encrypted xmlns='\(Self.ns)'><header sid='1'><key rid='1'>AQID</key><key rid='2'>AQID</key><key rid='3'>AQID</key>\(iv)</header></encrypted>",
                OMEMOElementError("encrypted", "3 keys, more than the limit of 2")
            ),
            ("<encrypted xmlns='urn:xmpp:omemo:2'/>", OMEMOElementError("encrypted", "expected <encrypted xmlns='\(Self.ns)'>, got <encrypted>")),
        ]
        for (xml, error) in cases {
            #expect(throws: error) { try OMEMOEncrypted(element: try Self.element(xml), limits: limits) }
        }
    }

    @Test("base64 as the elements carry it: every length read as Foundation reads it, folded or not; bad characters, misplaced or missing padding and a size over the limit refused")
    func base64() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0...70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = Data(bytes).base64EncodedString()
            #expect(try OMEMOWire.bytes(text, "v", in: "t", limit: 100) == bytes)
            let folded = Data(bytes).base64EncodedString(options: [.lineLength64Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
            #expect(try OMEMOWire.bytes(" \n\t" + folded + "\n ", "v", in: "t", limit: 100) == bytes)
        }
        for bad in ["QQ=A", "Q===", "QQ", "QQ==QQ==", "=QQ=", "QUJD\u{e9}", "QUJD-_", "QUJ"] {
            #expect(throws: OMEMOElementError("t", "v is not base64")) { try OMEMOWire.bytes(bad, "v", in: "t", limit: 100) }
        }
        #expect(throws: OMEMOElementError("t", "v is longer than 2 bytes")) { try OMEMOWire.bytes("QUJD", "v", in: "t", limit: 2) }
        #expect(throws: OMEMOElementError("t", "v is longer than 4 bytes")) { try OMEMOWire.bytes("QUJDREU=", "v", in: "t", limit: 4) }
    }

    @Test("ids: decimal 1 … 2³¹ − 1 with spaces around; signs, inner spaces, overflow and zero refused")
    func ids() throws {
        #expect(try OMEMOWire.id(" 12\t", "rid", in: "t") == 12)
        #expect(try OMEMOWire.id("2147483647", "rid", in: "t") == 2_147_483_647)
        for bad in ["", " ", "0", "+5", "-5", "1 2", "2147483648", "4294967296", "99999999999", "0x10", "١٢"] {
            #expect(throws: OMEMOElementError.self) { try OMEMOWire.id(bad, "rid", in: "t") }
        }
    }
}
