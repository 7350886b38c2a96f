import Foundation

/// A throwaway self-signed certificate (P-256, SAN `DNS:name` unless told otherwise) made with the `openssl`
/// command at test time, so no key material is ever committed.
public struct SelfSignedCertificate: Sendable {
    public let name: String
    public let certificateFile: String
    public let privateKeyFile: String

    /// Creates `STEM.crt` and `STEM.key` in `directory` (reuses them if present); the stem
    /// is `name` unless given. `subjectAltName` is in `openssl req -addext` syntax, e.g.
    /// `otherName:1.3.6.1.5.5.7.8.5;UTF8:example.test` (default `DNS:name`).
    public static func make(name: String, in directory: String, stem: String? = nil, subjectAltName: String? = nil) throws -> SelfSignedCertificate {
        let certificate = "\(directory)/\(stem ?? name).crt"
        let key = "\(directory)/\(stem ?? name).key"
        if !FileManager.default.fileExists(atPath: certificate) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Subprocess.run(
                "openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", key, "-out", certificate, "-days", "30", "-subj", "/CN=\(name)",
                    "-addext", "subjectAltName=\(subjectAltName ?? "DNS:\(name)")", "-addext", "extendedKeyUsage=serverAuth",
                ]
            )
        }
        return SelfSignedCertificate(name: name, certificateFile: certificate, privateKeyFile: key)
    }
}
