import Foundation
import XMPP

/// A file shared encrypted alongside OMEMO (XEP-0454): the upload's HTTPS URL with the
/// scheme `aesgcm`, and a fragment of the hex IV (12 bytes; 16 from early clients) then the
/// AES-256-GCM key (32 bytes). The file at the URL is the ciphertext followed by the tag.
/// The key never reaches the server: only the URL's holder can read the file.
public struct EncryptedFileLink: Hashable, Sendable {
    /// Where the encrypted file is, as `https`.
    public var url: URL
    public var iv: [UInt8]
    public var key: [UInt8]

    /// Reads an `aesgcm://` URL; nil when it is not one (another scheme, no fragment, a
    /// fragment that is not 88 or 96 hex digits).
    public init?(_ text: String) {
        guard var components = URLComponents(string: text), components.scheme?.lowercased() == "aesgcm", let fragment = components.fragment else { return nil }
        guard fragment.count == 88 || fragment.count == 96, let bytes = Hex.bytes(fragment) else { return nil }
        let ivSize = bytes.count - 32
        components.scheme = "https"
        components.fragment = nil
        guard let url = components.url else { return nil }
        self.url = url
        self.iv = Array(bytes[..<ivSize])
        self.key = Array(bytes[ivSize...])
    }

    /// Encrypts `file` for an upload to `url` (https) under a fresh key and IV: the bytes to
    /// upload and the link to send.
    public static func seal(_ file: [UInt8], for url: URL) throws(OMEMOError) -> (upload: [UInt8], link: EncryptedFileLink) {
        let iv: [UInt8], key: [UInt8]
        do {
            (iv, key) = (try OpenSSLCrypto.randomBytes(count: 12), try OpenSSLCrypto.randomBytes(count: 32))
        } catch {
            throw OMEMOError("encrypt a file", reason: "\(error)")
        }
        let (ciphertext, tag) = try AESGCM().seal(file, key: key, iv: iv)
        return (ciphertext + tag, EncryptedFileLink(url: url, iv: iv, key: key))
    }

    private init(url: URL, iv: [UInt8], key: [UInt8]) {
        self.url = url
        self.iv = iv
        self.key = key
    }

    /// The file, from what was downloaded; throws when it does not authenticate.
    public func open(_ downloaded: [UInt8]) throws(OMEMOError) -> [UInt8] {
        guard downloaded.count >= AESGCM.tagSize else { throw OMEMOError("decrypt a file", reason: "\(downloaded.count) bytes, shorter than the tag") }
        return try AESGCM().open(Array(downloaded.dropLast(AESGCM.tagSize)), tag: Array(downloaded.suffix(AESGCM.tagSize)), key: self.key, iv: self.iv)
    }

    /// How many more bytes the file at ``url`` holds than the file itself: the tag after it.
    public static var overhead: Int { AESGCM.tagSize }

    /// The same file, key and IV, uploaded again at `url` (https): a copy of the encrypted
    /// bytes keeps the link's key.
    public func moved(to url: URL) -> EncryptedFileLink {
        EncryptedFileLink(url: url, iv: self.iv, key: self.key)
    }

    /// The `aesgcm://` URL to send.
    public var text: String {
        var components = URLComponents(url: self.url, resolvingAgainstBaseURL: false)
        components?.scheme = "aesgcm"
        components?.fragment = Hex.string(self.iv + self.key)
        return components?.string ?? ""
    }
}
