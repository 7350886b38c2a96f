import Foundation

/// A throwaway self-signed certificate (P-256, SAN `DNS:name`) made with the `openssl`
/// command at test time, so no key material is ever committed.
public struct SelfSignedCertificate: Sendable {
    public let name: String
    public let certificateFile: String
    public let privateKeyFile: String

    /// Creates `name.crt` and `name.key` in `directory` (reuses them if present).
    public static func make(name: String, in directory: String) throws -> SelfSignedCertificate {
        let certificate = "\(directory)/\(name).crt"
        let key = "\(directory)/\(name).key"
        if !FileManager.default.fileExists(atPath: certificate) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Subprocess.run(
                "openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", key, "-out", certificate, "-days", "30", "-subj", "/CN=\(name)",
                    "-addext", "subjectAltName=DNS:\(name)", "-addext", "extendedKeyUsage=serverAuth",
                ]
            )
        }
        return SelfSignedCertificate(name: name, certificateFile: certificate, privateKeyFile: key)
    }
}
