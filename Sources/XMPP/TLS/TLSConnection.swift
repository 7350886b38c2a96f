import COpenSSL
import CXMPPShims
import NIOCore

/// One TLS session over two memory BIOs: ciphertext in from the network, ciphertext
/// out to the network, plaintext through `SSL_read`/`SSL_write` (RFC 6120 §5.4.3).
///
/// This file is the only owner of the `SSL` object and its BIOs and frees them.
/// Not thread-safe; used by one ``TLSHandler`` on its event loop.
final class TLSConnection {
    enum Outcome {
        case complete
        case incomplete
        case closed
        case failed(TLSError)
    }

    private let ssl: OpaquePointer
    /// Ciphertext from the network, read by OpenSSL (owned by `ssl`; replaced by
    /// ``trimBuffers()``).
    private var networkToSSL: OpaquePointer
    /// Ciphertext written by OpenSSL, for the network (owned by `ssl`, like the other).
    private var sslToNetwork: OpaquePointer
    let context: TLSContext

    /// - Parameter expectedHost: the JID domain: SNI and the name the certificate must carry.
    init(context: TLSContext, expectedHost: String?) throws(TLSError) {
        OpenSSLErrorStack.clear()
        guard let ssl = SSL_new(context.context) else {
            throw TLSError(.configuration, openSSLErrors: OpenSSLErrorStack.drain())
        }
        guard let readBIO = Self.makeMemoryBIO() else {
            SSL_free(ssl)
            throw TLSError(.configuration, openSSLErrors: OpenSSLErrorStack.drain())
        }
        guard let writeBIO = Self.makeMemoryBIO() else {
            BIO_free(readBIO)
            SSL_free(ssl)
            throw TLSError(.configuration, openSSLErrors: OpenSSLErrorStack.drain())
        }
        SSL_set_bio(ssl, readBIO, writeBIO)  // ssl now owns both BIOs.
        self.ssl = ssl
        self.networkToSSL = readBIO
        self.sslToNetwork = writeBIO
        self.context = context

        switch context.role {
        case .client:
            SSL_set_connect_state(ssl)
            if let expectedHost {
                let isIPAddress = expectedHost.contains(":") || expectedHost.allSatisfy { $0.isNumber || $0 == "." }
                if isIPAddress {
                    // RFC 6066 §3: no IP literals in SNI; check the certificate's IP SAN instead.
                    let host = expectedHost.trimmingCharacters(in: "[]")
                    guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else {
                        throw TLSError(.configuration, openSSLErrors: ["not an IP address: \(host)"] + OpenSSLErrorStack.drain())
                    }
                } else {
                    _ = CXMPPShims_SSL_set_tlsext_host_name(ssl, expectedHost)
                    SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
                    guard SSL_set1_host(ssl, expectedHost) == 1 else {
                        throw TLSError(.configuration, openSSLErrors: OpenSSLErrorStack.drain())
                    }
                }
            }
        case .server:
            SSL_set_accept_state(ssl)
        }
    }

    deinit {
        SSL_free(self.ssl)
    }

    /// An empty memory BIO that reports "retry" instead of end of file when empty.
    private static func makeMemoryBIO() -> OpaquePointer? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        _ = CXMPPShims_BIO_set_mem_eof_return(bio, -1)
        return bio
    }

    /// Gives back the memory BIOs' buffers (issue 43: an idle connection holds no TLS
    /// buffer): a memory BIO keeps the largest buffer it ever grew to, so both are replaced
    /// by new empty ones. Only when neither holds a byte; false otherwise, or when a new BIO
    /// cannot be made (nothing changes then). OpenSSL's own record buffers are given back
    /// after each record already (`SSL_MODE_RELEASE_BUFFERS`).
    func trimBuffers() -> Bool {
        guard BIO_ctrl_pending(self.networkToSSL) == 0, BIO_ctrl_pending(self.sslToNetwork) == 0 else { return false }
        guard let readBIO = Self.makeMemoryBIO() else { return false }
        guard let writeBIO = Self.makeMemoryBIO() else {
            BIO_free(readBIO)
            return false
        }
        // Each call takes the new BIO's reference and frees the one it replaces.
        SSL_set0_rbio(self.ssl, readBIO)
        SSL_set0_wbio(self.ssl, writeBIO)
        self.networkToSSL = readBIO
        self.sslToNetwork = writeBIO
        return true
    }

    /// Hands ciphertext from the network to OpenSSL.
    func consumeDataFromNetwork(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = BIO_write(
                    self.networkToSSL, bytes.baseAddress!.advanced(by: offset), Int32(min(bytes.count - offset, 1 << 30))
                )
                if written <= 0 { break }
                offset += Int(written)
            }
        }
    }

    /// Moves whatever ciphertext OpenSSL produced into a buffer for the network.
    func dataForNetwork(allocator: ByteBufferAllocator) -> ByteBuffer? {
        let pending = min(Int(BIO_ctrl_pending(self.sslToNetwork)), 1 << 30)
        guard pending > 0 else { return nil }
        var buffer = allocator.buffer(capacity: pending)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: pending) { bytes in
            Int(max(0, BIO_read(self.sslToNetwork, bytes.baseAddress, Int32(pending))))
        }
        return buffer
    }

    /// Advances the handshake.
    func doHandshake() -> Outcome {
        OpenSSLErrorStack.clear()
        let result = SSL_do_handshake(self.ssl)
        return result == 1 ? .complete : self.outcome(result, kind: .handshakeFailed)
    }

    /// Decrypts what is available into `buffer`.
    func readPlaintext(into buffer: inout ByteBuffer) -> Outcome {
        OpenSSLErrorStack.clear()
        while true {
            var read = 0
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 16 * 1024) { bytes in
                var count = 0
                let status = SSL_read_ex(self.ssl, bytes.baseAddress, bytes.count, &count)
                read = status == 1 ? count : 0
                return read
            }
            if read > 0 { continue }
            let outcome = self.outcome(0, kind: .ioFailed)
            if case .incomplete = outcome { return .complete }
            return outcome
        }
    }

    /// Encrypts `plaintext`; the ciphertext is then in ``dataForNetwork(allocator:)``.
    func writePlaintext(_ plaintext: ByteBuffer) -> Outcome {
        OpenSSLErrorStack.clear()
        var outcome = Outcome.complete
        plaintext.withUnsafeReadableBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                var written = 0
                let status = SSL_write_ex(self.ssl, bytes.baseAddress!.advanced(by: offset), bytes.count - offset, &written)
                if status != 1 {
                    outcome = self.outcome(0, kind: .ioFailed)
                    return
                }
                offset += written
            }
        }
        return outcome
    }

    /// Queues a close_notify alert.
    func shutdown() {
        OpenSSLErrorStack.clear()
        _ = SSL_shutdown(self.ssl)
    }

    /// RFC 9266 `tls-exporter` channel-binding data; only for TLS 1.3, where it is sound.
    func channelBindingTLSExporter() -> [UInt8]? {
        guard SSL_version(self.ssl) == TLS1_3_VERSION else { return nil }
        var output = [UInt8](repeating: 0, count: 32)
        let label = "EXPORTER-Channel-Binding"
        let status = label.withCString { labelPointer in
            SSL_export_keying_material(self.ssl, &output, output.count, labelPointer, label.utf8.count, nil, 0, 0)
        }
        return status == 1 ? output : nil
    }

    /// RFC 5929 §4.1 `tls-server-end-point` channel-binding data: the server certificate's
    /// hash, with the hash its signature uses (SHA-256 for MD5 and SHA-1). Nil where the
    /// signature uses no single hash (Ed25519, Ed448): the type is undefined there.
    func channelBindingServerEndPoint() -> [UInt8]? {
        guard let certificate = SSL_get0_peer_certificate(self.ssl) else { return nil }
        // What fails below leaves its reason on the thread's error queue: not ours to keep.
        defer { OpenSSLErrorStack.clear() }
        var digestNID: Int32 = 0
        guard X509_get_signature_info(certificate, &digestNID, nil, nil, nil) == 1, digestNID != NID_undef else { return nil }
        if digestNID == NID_md5 || digestNID == NID_sha1 { digestNID = NID_sha256 }
        guard let name = OBJ_nid2sn(digestNID), let digest = EVP_get_digestbyname(name) else { return nil }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, digest, &output, &length) == 1 else { return nil }
        return Array(output.prefix(Int(length)))
    }

    /// What this connection gives for channel binding (``ChannelBindingData``).
    var channelBindingData: ChannelBindingData {
        ChannelBindingData(exporter: self.channelBindingTLSExporter(), serverEndPoint: self.channelBindingServerEndPoint())
    }

    /// The negotiated protocol version, e.g. `TLSv1.3`.
    var protocolVersion: String {
        SSL_get_version(self.ssl).map { String(cString: $0) } ?? "unknown"
    }

    private func outcome(_ result: Int32, kind: TLSError.Kind) -> Outcome {
        let error = SSL_get_error(self.ssl, result)
        switch error {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .incomplete
        case SSL_ERROR_ZERO_RETURN:
            return .closed
        default:
            let verifyResult = SSL_get_verify_result(self.ssl)
            if verifyResult != X509_V_OK {
                let reason = X509_verify_cert_error_string(verifyResult).map { String(cString: $0) } ?? "code \(verifyResult)"
                return .failed(TLSError(.certificateRejected, openSSLErrors: OpenSSLErrorStack.drain(), certificateVerification: reason))
            }
            return .failed(TLSError(kind, openSSLErrors: OpenSSLErrorStack.drain()))
        }
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var result = Substring(self)
        while let first = result.first, set.contains(first) { result.removeFirst() }
        while let last = result.last, set.contains(last) { result.removeLast() }
        return String(result)
    }
}
