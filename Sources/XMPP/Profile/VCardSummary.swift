import Foundation

/// What a vCard (XEP-0054 §3) says that the bridge shows or uses: the nickname, the
/// full name, and the photo's type and hash (the SHA-1 of its decoded bytes, as XEP-0153
/// §4.1 computes it). Pure: read from the element, never trapping on what a peer sent.
public struct VCardSummary: Hashable, Sendable, Codable {
    public var nick: String?
    public var fullName: String?
    public var photoType: String?
    public var photoHash: String?

    public init(nick: String? = nil, fullName: String? = nil, photoType: String? = nil, photoHash: String? = nil) {
        self.nick = nick
        self.fullName = fullName
        self.photoType = photoType
        self.photoHash = photoHash
    }

    public init(_ vCard: XMLElement) {
        func text(_ name: String, in element: XMLElement) -> String? {
            let value = element.firstChild(named: name)?.text.trimmingCharacters(in: .whitespacesAndNewlines)
            return value?.isEmpty == false ? value : nil
        }
        self.nick = text("NICKNAME", in: vCard)
        self.fullName = text("FN", in: vCard)
        if let photo = vCard.firstChild(named: "PHOTO") {
            self.photoType = text("TYPE", in: photo)
            // Base64 as vCards carry it: line breaks and spaces allowed.
            if let binary = text("BINVAL", in: photo),
                let bytes = Data(base64Encoded: binary.filter { !$0.isWhitespace }), !bytes.isEmpty
            {
                self.photoHash = Avatar.id(of: bytes)
            }
        }
    }
}
