import COpenSSL
import CXMPPShims

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
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
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
            case .full: SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
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
}
