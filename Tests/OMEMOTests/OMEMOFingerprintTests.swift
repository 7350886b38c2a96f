import Testing

@testable import OMEMO

/// Fingerprints as clients show them and users type them (issue 41's interface).
@Suite("OMEMO fingerprint")
struct OMEMOFingerprintTests {
    static let hex = "05b7a4e61f0c2d3e4f5a6b7c8d9eafb0c1d2e3f405162738495a6b7c8d9eaf10"

    @Test("shown as 64 lower-case hex characters in groups of 8, without the key's leading 05")
    func shown() throws {
        let fingerprint = try #require(OMEMOFingerprint(parsing: Self.hex))
        #expect(fingerprint.hex == Self.hex)
        #expect(fingerprint.description == "05b7a4e6 1f0c2d3e 4f5a6b7c 8d9eafb0 c1d2e3f4 05162738 495a6b7c 8d9eaf10")
        #expect(OMEMOFingerprint(publicKey: [0x05] + fingerprint.key) == fingerprint)
        #expect(OMEMOFingerprint(publicKey: fingerprint.key) == fingerprint)
    }

    @Test("read as users paste it: spaces, colons, upper case and a leading 05 are accepted")
    func parsed() throws {
        let fingerprint = try #require(OMEMOFingerprint(parsing: Self.hex))
        let grouped = stride(from: 0, to: 64, by: 8).map { start in
            String(Self.hex.dropFirst(start).prefix(8))
        }
        for text in [grouped.joined(separator: " "), grouped.joined(separator: ":").uppercased(), "05" + Self.hex, " 05 " + grouped.joined(separator: "  ") + "\n"] {
            #expect(OMEMOFingerprint(parsing: text) == fingerprint, "\(text)")
        }
    }

    @Test("anything else is refused: too short, too long, not hex, empty; a public key of the wrong size or type byte")
    func refused() {
        for text in ["", String(Self.hex.dropLast()), Self.hex + "0", String(Self.hex.dropLast()) + "g", "06" + Self.hex] {
            #expect(OMEMOFingerprint(parsing: text) == nil, "\(text)")
        }
        #expect(OMEMOFingerprint(publicKey: [0x06] + Array(repeating: 1, count: 32)) == nil)
        #expect(OMEMOFingerprint(publicKey: Array(repeating: 1, count: 31)) == nil)
    }
}
