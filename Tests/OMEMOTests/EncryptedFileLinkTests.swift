import Foundation
import Testing

@testable import OMEMO

/// Files shared encrypted (XEP-0454): the `aesgcm://` link read and written, the file sealed
/// and opened.
@Suite("encrypted file links (XEP-0454)")
struct EncryptedFileLinkTests {
    static let iv = String(repeating: "0a", count: 12)
    static let key = String(repeating: "b1", count: 32)

    @Test("a link: https in its place, the IV (12 bytes, or 16 from early clients) and the key from the fragment; written back the same")
    func read() throws {
        let link = try #require(EncryptedFileLink("aesgcm://upload.example.org/slot/abc/photo.jpg#\(Self.iv)\(Self.key)"))
        #expect(link.url.absoluteString == "https://upload.example.org/slot/abc/photo.jpg")
        #expect(link.iv == Array(repeating: 0x0a, count: 12))
        #expect(link.key == Array(repeating: 0xb1, count: 32))
        #expect(link.text == "aesgcm://upload.example.org/slot/abc/photo.jpg#\(Self.iv)\(Self.key)")
        #expect(EncryptedFileLink(link.text) == link)
        let early = try #require(EncryptedFileLink("AESGCM://h.example/f#" + String(repeating: "0A", count: 16) + Self.key.uppercased()))
        #expect(early.iv.count == 16 && early.key == Array(repeating: 0xb1, count: 32))
    }

    @Test("not a link: another scheme, no fragment, a fragment of another length or not hex")
    func refused() {
        for text in [
            "https://h.example/f#\(Self.iv)\(Self.key)", "aesgcm://h.example/f", "aesgcm://h.example/f#\(Self.iv)",
            "aesgcm://h.example/f#\(Self.iv)\(Self.key)00", "aesgcm://h.example/f#\(Self.iv)\(String(Self.key.dropLast()))g", "not a url at all",
        ] {
            #expect(EncryptedFileLink(text) == nil, "\(text)")
        }
    }

    @Test("a file sealed for an upload opens from what is downloaded; one changed byte, or a cut one, does not")
    func sealAndOpen() throws {
        let file = Array((0..<1_000).map { UInt8($0 % 251) })
        let (upload, link) = try EncryptedFileLink.seal(file, for: try #require(URL(string: "https://h.example/slot/f.bin")))
        #expect(upload.count == file.count + 16)
        #expect(link.text.hasPrefix("aesgcm://h.example/slot/f.bin#"))
        let received = try #require(EncryptedFileLink(link.text))
        #expect(try received.open(upload) == file)
        var damaged = upload
        damaged[0] ^= 0x80
        #expect(throws: OMEMOError.self) { try received.open(damaged) }
        #expect(throws: OMEMOError("decrypt a file", reason: "10 bytes, shorter than the tag")) { try received.open(Array(upload.prefix(10))) }
    }

    @Test("a link moved to another upload keeps its key and IV: the copied bytes open under it")
    func moved() throws {
        let file = Array("the phone's file".utf8)
        let (upload, link) = try EncryptedFileLink.seal(file, for: try #require(URL(string: "https://a.example/slot/f.txt")))
        let moved = link.moved(to: try #require(URL(string: "https://b.example:5281/share/x/f.txt")))
        #expect(moved.text.hasPrefix("aesgcm://b.example:5281/share/x/f.txt#"))
        #expect(moved.text.split(separator: "#").last == link.text.split(separator: "#").last)
        let read = try #require(EncryptedFileLink(moved.text))
        #expect(read.url.absoluteString == "https://b.example:5281/share/x/f.txt")
        #expect(try read.open(upload) == file)
        #expect(upload.count == file.count + EncryptedFileLink.overhead)
    }
}
