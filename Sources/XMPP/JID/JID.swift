/// An XMPP address (Jabber ID) as defined by RFC 7622.
///
/// A JID has the form `[localpart@]domainpart[/resourcepart]` (RFC 7622 §3.1).
/// Every part is prepared and enforced when the value is created, so a `JID`
/// always holds a valid address in canonical form:
///
/// - the localpart (RFC 7622 §3.3) follows the PRECIS `UsernameCaseMapped`
///   profile: it is lowercased and NFC-normalised, and may not contain
///   symbols, spaces, compatibility characters or `" & ' / : < > @`;
/// - the domainpart (RFC 7622 §3.2) is lowercased, NFC-normalised, stripped of
///   one trailing dot, and is a domain name, an IPv4 address or a bracketed
///   IPv6 literal; it never carries a port;
/// - the resourcepart (RFC 7622 §3.4) follows the PRECIS `OpaqueString`
///   profile: NFC-normalised, case preserved, spaces and symbols allowed.
///
/// Each part is at most 1023 octets of UTF-8. Because the parts are stored in
/// prepared form, equality and hashing compare localpart and domainpart
/// case-insensitively and the resourcepart case-sensitively (RFC 7622 §3.3,
/// §3.4). See `JIDPartPreparation` for what is approximated.
///
/// A JID encodes and decodes as its string form.
public struct JID: Hashable, Sendable {
    /// The prepared localpart (the part before `@`), if any (RFC 7622 §3.3).
    public let localpart: String?
    /// The prepared domainpart; never empty (RFC 7622 §3.2).
    public let domainpart: String
    /// The prepared resourcepart (the part after `/`), if any (RFC 7622 §3.4).
    public let resourcepart: String?

    /// Parses and prepares a JID string (RFC 7622 §3.1).
    ///
    /// The resourcepart starts after the first `/`; the localpart is whatever
    /// precedes the first `@` before that `/`. So `a.example.com/b@example.net`
    /// has the domainpart `a.example.com` and the resourcepart `b@example.net`.
    public init(_ string: String) throws(JIDError) {
        var rest = string.unicodeScalars[...]
        var rawResource: Substring.UnicodeScalarView?
        if let slash = rest.firstIndex(of: "/") {
            rawResource = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var rawLocal: Substring.UnicodeScalarView?
        if let at = rest.firstIndex(of: "@") {
            rawLocal = rest[..<at]
            rest = rest[rest.index(after: at)...]
        }
        let local = try rawLocal.map { (raw) throws(JIDError) in try JIDPartPreparation.prepareLocalpart(raw) }
        let domain = try JIDPartPreparation.prepareDomainpart(rest)
        let resource = try rawResource.map { (raw) throws(JIDError) in try JIDPartPreparation.prepareResourcepart(raw) }
        self.init(preparedLocalpart: local, domainpart: domain, resourcepart: resource)
    }

    /// Builds a JID from its parts, preparing and enforcing each one.
    ///
    /// Unlike ``init(_:)`` no splitting happens: a resourcepart may contain
    /// `/` and `@`, while `@` or `/` in the localpart or domainpart is an error.
    public init(localpart: String? = nil, domainpart: String, resourcepart: String? = nil) throws(JIDError) {
        let local = try localpart.map { (raw) throws(JIDError) in try JIDPartPreparation.prepareLocalpart(raw.unicodeScalars) }
        let domain = try JIDPartPreparation.prepareDomainpart(domainpart.unicodeScalars)
        let resource = try resourcepart.map { (raw) throws(JIDError) in try JIDPartPreparation.prepareResourcepart(raw.unicodeScalars) }
        self.init(preparedLocalpart: local, domainpart: domain, resourcepart: resource)
    }

    /// Stores parts that are already prepared.
    private init(preparedLocalpart: String?, domainpart: String, resourcepart: String?) {
        self.localpart = preparedLocalpart
        self.domainpart = domainpart
        self.resourcepart = resourcepart
    }

    /// This JID without its resourcepart (RFC 7622 §1.4 "bare JID").
    public var bare: JID {
        JID(preparedLocalpart: localpart, domainpart: domainpart, resourcepart: nil)
    }

    /// True when there is no resourcepart.
    public var isBare: Bool { resourcepart == nil }

    /// True when there is a resourcepart (RFC 7622 §1.4 "full JID").
    public var isFull: Bool { resourcepart != nil }

    /// This JID with its resourcepart replaced by `resource`, prepared per RFC 7622 §3.4.
    public func withResource(_ resource: String) throws(JIDError) -> JID {
        let prepared = try JIDPartPreparation.prepareResourcepart(resource.unicodeScalars)
        return JID(preparedLocalpart: localpart, domainpart: domainpart, resourcepart: prepared)
    }
}

extension JID: CustomStringConvertible {
    /// The string form `[localpart@]domainpart[/resourcepart]` (RFC 7622 §3.1).
    public var description: String {
        var result = ""
        if let localpart {
            result += localpart
            result += "@"
        }
        result += domainpart
        if let resourcepart {
            result += "/"
            result += resourcepart
        }
        return result
    }
}

extension JID: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        do {
            try self.init(string)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
