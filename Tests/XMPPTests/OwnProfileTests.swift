import Foundation
import Testing

@testable import XMPP

/// The account's nick and avatar (issue 25) as the XEPs carry them, without a server:
/// the avatar checked from its bytes (XEP-0084), the vCard merged and compared (XEP-0054),
/// the PEP publishes in order, the presence hash (XEP-0153) and the message nick (XEP-0172).
@Suite("nick and avatar")
struct OwnProfileTests {
    /// A 3×2 PNG and its SHA-1 as Python's hashlib computes it.
    static let png = Array(Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGP4z8AAQQxwFgBB0gX7h/C5SAAAAABJRU5ErkJggg==")!)
    static let pngSHA1 = "5e4f1cab6e8994cef0cf614bcfd9b2eef5e18b85"
    /// The start of a baseline JPEG: SOI, an APP0 segment, then SOF0 with 16×9 pixels.
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x4A, 0x46, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0x09, 0x00, 0x10, 0x03, 0x01, 0x22, 0x00]

    @Test("PNG and JPEG are read with their size and SHA-1; empty, too large or another format is refused with the reason")
    func avatars() throws {
        let png = try Avatar(bytes: Self.png)
        #expect(png.type == "image/png" && png.width == 3 && png.height == 2 && png.id == Self.pngSHA1)
        let jpeg = try Avatar(bytes: Self.jpeg)
        #expect(jpeg.type == "image/jpeg" && jpeg.width == 16 && jpeg.height == 9)
        #expect(try Avatar(bytes: [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00] + [UInt8](repeating: 0, count: 10)).width == nil, "a broken segment length gives no size, never a trap")
        #expect(try Avatar(bytes: [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x40] + [UInt8](repeating: 0, count: 10)).width == nil, "a segment past the end: no size")
        #expect(throws: Avatar.Problem.empty) { try Avatar(bytes: []) }
        #expect(throws: Avatar.Problem.notPNGOrJPEG) { try Avatar(bytes: Array("GIF89a".utf8)) }
        #expect(throws: Avatar.Problem.tooLarge(bytes: 65_537, limit: 65_536)) { try Avatar(bytes: Self.png + [UInt8](repeating: 0, count: 65_537 - Self.png.count)) }
        #expect("\(Avatar.Problem.tooLarge(bytes: 70_000, limit: 65_536))".contains("64 KiB"))
    }

    @Test("the vCard keeps its other fields, gets FN, NICKNAME and PHOTO, and then shows the profile; another avatar or nick does not")
    func vCardMerge() throws {
        let profile = OwnProfile(nick: "Ops bridge", avatar: try Avatar(bytes: Self.png))
        var existing = XMLElement(name: "vCard", namespace: "vcard-temp")
        var email = XMLElement(name: "EMAIL", namespace: "vcard-temp")
        email.append(text: "ops@example.org")
        existing.append(email)
        var oldName = XMLElement(name: "FN", namespace: "vcard-temp")
        oldName.append(text: "Old")
        existing.append(oldName)
        #expect(!profile.isShown(in: existing) && !profile.isShown(in: nil))
        let card = profile.vCard(updating: existing)
        #expect(card.elements.map(\.name) == ["EMAIL", "FN", "NICKNAME", "PHOTO"])
        #expect(profile.isShown(in: card))
        #expect(VCardSummary(card) == VCardSummary(nick: "Ops bridge", fullName: "Ops bridge", photoType: "image/png", photoHash: Self.pngSHA1))
        #expect(!OwnProfile(nick: "Other").isShown(in: card))
        #expect(!OwnProfile(avatar: try Avatar(bytes: Self.jpeg)).isShown(in: card))
        #expect(OwnProfile(nick: "Ops bridge").isShown(in: card), "only what is configured is compared")
    }

    @Test("PEP: avatar data, then metadata with id, type, bytes and size, then the nick; presence carries the hash; messages the nick")
    func publishes() throws {
        let profile = OwnProfile(nick: "Ops bridge", avatar: try Avatar(bytes: Self.png))
        let nodes = profile.pepPublishes.compactMap { $0.firstChild(named: "publish")?[attribute: "node"] }
        #expect(nodes == ["urn:xmpp:avatar:data", "urn:xmpp:avatar:metadata", "http://jabber.org/protocol/nick"])
        let info = profile.pepPublishes[1].firstChild(named: "publish")?.firstChild(named: "item")?.firstChild(named: "metadata")?.firstChild(named: "info")
        #expect(info?[attribute: "id"] == Self.pngSHA1 && info?[attribute: "bytes"] == "\(Self.png.count)" && info?[attribute: "width"] == "3")
        let data = profile.pepPublishes[0].firstChild(named: "publish")?.firstChild(named: "item")?.firstChild(named: "data")?.text
        #expect(data.flatMap { Data(base64Encoded: $0) }.map(Array.init) == Self.png)
        #expect(profile.presenceUpdate?.firstChild(named: "photo")?.text == Self.pngSHA1)
        #expect(OwnProfile(nick: "x").presenceUpdate == nil, "no avatar configured: nothing said about the photo")
        #expect(OwnProfile.nick(in: [try #require(profile.nickElement)]) == "Ops bridge")
        #expect(OwnProfile.nick(in: [XMLElement(name: "nick", namespace: OwnProfile.nickNamespace)]) == nil)
        #expect(OwnProfile().pepPublishes.isEmpty && OwnProfile().isEmpty)
    }

    @Test("a peer's vCard: whitespace in BINVAL is allowed; bad base64, missing fields and empty values read as nothing")
    func summaries() {
        func card(_ fields: [(String, String)], photo: [(String, String)]? = nil) -> XMLElement {
            var card = XMLElement(name: "vCard", namespace: "vcard-temp")
            for (name, value) in fields {
                var field = XMLElement(name: name, namespace: "vcard-temp")
                field.append(text: value)
                card.append(field)
            }
            if let photo {
                var element = XMLElement(name: "PHOTO", namespace: "vcard-temp")
                for (name, value) in photo {
                    var field = XMLElement(name: name, namespace: "vcard-temp")
                    field.append(text: value)
                    element.append(field)
                }
                card.append(element)
            }
            return card
        }
        let wrapped = Data(Self.png).base64EncodedString(options: .lineLength64Characters)
        #expect(VCardSummary(card([("NICKNAME", " Caz ")], photo: [("TYPE", "image/png"), ("BINVAL", "\n" + wrapped + "\n")])).photoHash == Self.pngSHA1)
        #expect(VCardSummary(card([("NICKNAME", " Caz ")])).nick == "Caz")
        #expect(VCardSummary(card([("NICKNAME", "  ")], photo: [("BINVAL", "%%%not base64")])) == VCardSummary(photoType: nil))
        #expect(VCardSummary(XMLElement(name: "vCard", namespace: "vcard-temp")) == VCardSummary())
    }
}
