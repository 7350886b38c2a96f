import COpenSSL

/// The XMPP-specific ways a server certificate may name its domain (RFC 6120 §13.7.1.2,
/// RFC 7590 §3.1, RFC 6125 §6), besides the DNS-ID OpenSSL checks itself:
/// - `id-on-xmppAddr` (1.3.6.1.5.5.7.8.5): a SAN otherName, UTF8String, equal to the domain;
/// - SRV-ID `id-on-dnsSRV` (RFC 4985, 1.3.6.1.5.5.7.8.7): a SAN otherName, IA5String,
///   `_xmpp-client.DOMAIN` (or `_xmpps-client.DOMAIN` for Direct TLS, XEP-0368).
///
/// ``verifyCallback`` is the client's certificate verify callback: it changes nothing but
/// a host name mismatch on the server's own certificate, which it forgives when one of
/// these identities names the expected domain. The chain, dates and purpose are still
/// OpenSSL's to judge. This file owns every OpenSSL object it touches and frees it.
enum XMPPCertificateIdentity {
    static let xmppAddrOID = "1.3.6.1.5.5.7.8.5"
    static let srvNameOID = "1.3.6.1.5.5.7.8.7"

    /// For `SSL_CTX_set_verify`: OpenSSL's verdict, except that a DNS-ID mismatch on the
    /// leaf passes when an XmppAddr or SRV-ID matches the host given to `SSL_set1_host`.
    static let verifyCallback: @convention(c) (Int32, OpaquePointer?) -> Int32 = { preverified, store in
        guard preverified == 0, let store else { return preverified }
        guard X509_STORE_CTX_get_error(store) == X509_V_ERR_HOSTNAME_MISMATCH, X509_STORE_CTX_get_error_depth(store) == 0,
            let certificate = X509_STORE_CTX_get_current_cert(store), let parameters = X509_STORE_CTX_get0_param(store),
            let host = X509_VERIFY_PARAM_get0_host(parameters, 0)
        else { return 0 }
        guard XMPPCertificateIdentity.names(domain: String(cString: host), in: certificate) else { return 0 }
        X509_STORE_CTX_set_error(store, X509_V_OK)
        return 1
    }

    /// Whether `certificate` (an `X509 *`) names `domain` by XmppAddr or SRV-ID.
    static func names(domain: String, in certificate: OpaquePointer) -> Bool {
        let identities = Self.otherNames(certificate)
        return Self.matches(identities, domain: domain)
    }

    /// The rule, on the SAN otherNames as (OID, text): XmppAddr equal to the domain, or an
    /// SRV-ID for the client services of it. Domains compare case-insensitively (ASCII).
    static func matches(_ identities: [(oid: String, value: String)], domain: String) -> Bool {
        let domain = domain.lowercased()
        return identities.contains { identity in
            switch identity.oid {
            case Self.xmppAddrOID:
                return identity.value.lowercased() == domain
            case Self.srvNameOID:
                let value = identity.value.lowercased()
                return value == "_xmpp-client.\(domain)" || value == "_xmpps-client.\(domain)"
            default:
                return false
            }
        }
    }

    /// The certificate's subjectAltName otherNames whose value is a string.
    static func otherNames(_ certificate: OpaquePointer) -> [(oid: String, value: String)] {
        guard let raw = X509_get_ext_d2i(certificate, NID_subject_alt_name, nil, nil) else { return [] }
        let stack = OpaquePointer(raw)
        defer { GENERAL_NAMES_free(stack) }
        var result: [(oid: String, value: String)] = []
        for index in 0..<max(0, OPENSSL_sk_num(stack)) {
            guard let element = OPENSSL_sk_value(stack, index)?.assumingMemoryBound(to: GENERAL_NAME.self),
                element.pointee.type == GEN_OTHERNAME, let otherName = element.pointee.d.otherName,
                let typeID = otherName.pointee.type_id, let value = otherName.pointee.value
            else { continue }
            var buffer = [CChar](repeating: 0, count: 80)
            let length = OBJ_obj2txt(&buffer, Int32(buffer.count), typeID, 1)
            guard length > 0, Int(length) < buffer.count else { continue }
            let oid = String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let string: UnsafeMutablePointer<ASN1_STRING>?
            switch value.pointee.type {
            case V_ASN1_UTF8STRING: string = value.pointee.value.utf8string
            case V_ASN1_IA5STRING: string = value.pointee.value.ia5string
            default: string = nil
            }
            guard let string, let bytes = ASN1_STRING_get0_data(string) else { continue }
            let count = Int(ASN1_STRING_length(string))
            result.append((oid, String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)))
        }
        return result
    }
}
