import Foundation

/// A throwaway self-signed certificate (P-256, SAN `DNS:name` unless told otherwise) made with the `openssl`
/// command at test time, so no key material is ever committed.
public struct SelfSignedCertificate: Sendable {
    public let name: String
    public let certificateFile: String
    public let privateKeyFile: String

    /// The key and the hash its self-signature uses.
    public enum KeyKind: Sendable {
        /// P-256, signed with SHA-256 (the default).
        case p256
        /// P-384, signed with SHA-384.
        case p384SHA384
        /// RSA 2048, signed with SHA-1 (old, still met).
        case rsaSHA1
        /// Ed25519: a signature with no separate hash.
        case ed25519

        var arguments: [String] {
            switch self {
            case .p256: ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
            case .p384SHA384: ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:secp384r1", "-sha384"]
            case .rsaSHA1: ["-newkey", "rsa:2048", "-sha1"]
            case .ed25519: ["-newkey", "ed25519"]
            }
        }
    }

    /// Creates `STEM.crt` and `STEM.key` in `directory` (reuses them if present); the stem
    /// is `name` unless given. `subjectAltName` is in `openssl req -addext` syntax, e.g.
    /// `otherName:1.3.6.1.5.5.7.8.5;UTF8:example.test` (default `DNS:name`).
    public static func make(
        name: String, in directory: String, stem: String? = nil, subjectAltName: String? = nil, key kind: KeyKind = .p256
    ) throws -> SelfSignedCertificate {
        let certificate = "\(directory)/\(stem ?? name).crt"
        let key = "\(directory)/\(stem ?? name).key"
        if !FileManager.default.fileExists(atPath: certificate) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let arguments =
                ["req", "-x509"] + kind.arguments + [
                    "-nodes", "-keyout", key, "-out", certificate, "-days", "30", "-subj", "/CN=\(name)",
                    "-addext", "subjectAltName=\(subjectAltName ?? "DNS:\(name)")", "-addext", "extendedKeyUsage=serverAuth",
                ]
            try Subprocess.run("openssl", arguments)
        }
        return SelfSignedCertificate(name: name, certificateFile: certificate, privateKeyFile: key)
    }
}
