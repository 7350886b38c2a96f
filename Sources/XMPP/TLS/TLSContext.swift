import COpenSSL
import CXMPPShims

#if canImport(Glibc)
import Glibc
#endif

/// An OpenSSL `SSL_CTX` set up from a ``TLSConfiguration`` (RFC 7590: TLS ≥ 1.2,
/// verified chain). This file is its only owner and frees it.
///
/// Immutable after creation; OpenSSL allows one context to create connections on many
/// threads, hence `@unchecked Sendable`.
public final class TLSContext: @unchecked Sendable {
    /// Which side of the handshake connections made from this context take.
    public enum Role: Sendable {
        case client
        /// Server role, for in-memory tests: certificate chain and key as PEM files.
        case server(certificateChainFile: String, privateKeyFile: String)
    }

    let context: OpaquePointer
    public let configuration: TLSConfiguration
    public let role: Role

    public init(configuration: TLSConfiguration, role: Role = .client) throws(TLSError) {
        OpenSSLErrorStack.clear()
        let method: OpaquePointer?
        switch role {
        case .client: method = TLS_client_method()
        case .server: method = TLS_server_method()
        }
        guard let method, let context = SSL_CTX_new(method) else {
            throw TLSError(.configuration, openSSLErrors: OpenSSLErrorStack.drain())
        }
        self.context = context
        self.configuration = configuration
        self.role = role

        _ = CXMPPShims_SSL_CTX_set_mode(context, CXMPPShims_SSL_default_modes())
        // No TLS 1.2 renegotiation: it would let a peer stall writes mid-buffer.
        SSL_CTX_set_options(context, UInt64(CXMPPShims_SSL_OP_NO_RENEGOTIATION()))
        guard CXMPPShims_SSL_CTX_set_min_proto_version(context, CXMPPShims_TLS1_2_VERSION()) == 1 else {
            throw TLSError(.configuration, openSSLErrors: OpenSSLErrorStack.drain())
        }
        if configuration.useSystemTrustStore {
            // The hashed certificate directory is searched lazily per issuer; the bundle file
            // is parsed whole (~140 certificates, tens of milliseconds) on every connect.
            let loaded = Self.systemCertificateDirectoryIsHashed()
                ? SSL_CTX_set_default_verify_dir(context)
                : SSL_CTX_set_default_verify_paths(context)
            guard loaded == 1 else {
                throw TLSError(.configuration, openSSLErrors: OpenSSLErrorStack.drain())
            }
        }
        if let file = configuration.additionalTrustRootsFile {
            guard SSL_CTX_load_verify_locations(context, file, nil) == 1 else {
                throw TLSError(.configuration, openSSLErrors: ["cannot load CA file \(file)"] + OpenSSLErrorStack.drain())
            }
        }
        switch role {
        case .client:
            switch configuration.certificateVerification {
            case .full:
                SSL_CTX_set_verify(context, SSL_VERIFY_PEER, configuration.acceptsXMPPIdentities ? XMPPCertificateIdentity.verifyCallback : nil)
            case .insecureNoVerification: SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            }
        case .server(let chain, let key):
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            guard SSL_CTX_use_certificate_chain_file(context, chain) == 1,
                SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1,
                SSL_CTX_check_private_key(context) == 1
            else {
                throw TLSError(.configuration, openSSLErrors: OpenSSLErrorStack.drain())
            }
        }
    }

    deinit {
        SSL_CTX_free(self.context)
    }

    /// Whether OpenSSL's default certificate directory holds `c_rehash` links (as on
    /// Debian) and no `SSL_CERT_FILE` override asks for a bundle instead.
    private static func systemCertificateDirectoryIsHashed() -> Bool {
        guard getenv("SSL_CERT_FILE") == nil, let raw = X509_get_default_cert_dir() else { return false }
        let directory = getenv("SSL_CERT_DIR").map { String(cString: $0) } ?? String(cString: raw)
        guard let handle = opendir(directory) else { return false }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name.count == 10, name.hasSuffix(".0"), name.prefix(8).allSatisfy({ $0.isHexDigit }) { return true }
        }
        return false
    }
}
