import Foundation

/// What this client is and supports, as announced through Entity Capabilities
/// (XEP-0115) and answered through Service Discovery (XEP-0030 §3.1).
///
/// ``ver`` is the XEP-0115 §5.1 hash: base64 of SHA-1 over the verification string
/// built from the identities and features (no XEP-0128 extended forms). The disco#info
/// answer lists exactly what was hashed, in the same order, so a peer that verifies
/// the hash (XEP-0115 §5.4) gets the same value. Duplicate identities and features
/// are dropped from both; XEP-0030 forbids them. `features` should include
/// `http://jabber.org/protocol/disco#info` and `http://jabber.org/protocol/caps`.
public struct EntityCapabilities: Hashable, Sendable {
    /// The caps namespace (XEP-0115 §4).
    public static let namespace = "http://jabber.org/protocol/caps"
    /// The service discovery information namespace (XEP-0030 §3).
    public static let discoInfoNamespace = "http://jabber.org/protocol/disco#info"

    /// A disco identity (XEP-0030 §3.1), e.g. category `client`, type `pc`.
    public struct Identity: Hashable, Sendable {
        public var category: String
        public var type: String
        /// `xml:lang` of the name, if the name is in a particular language.
        public var lang: String?
        public var name: String?

        public init(category: String, type: String, lang: String? = nil, name: String? = nil) {
            self.category = category
            self.type = type
            self.lang = lang
            self.name = name
        }
    }

    public var identities: [Identity]
    public var features: [String]

    public init(identities: [Identity], features: [String]) {
        self.identities = identities
        self.features = features
    }

    /// The string S of XEP-0115 §5.1: each identity as `category/type/lang/name<`,
    /// sorted by category, type and lang, then each feature followed by `<`, sorted,
    /// all with octet ordering (XEP-0115 §5.1 steps 2–4).
    public var verificationString: String {
        var result = ""
        for identity in self.sortedIdentities {
            result += "\(identity.category)/\(identity.type)/\(identity.lang ?? "")/\(identity.name ?? "")<"
        }
        for feature in self.sortedFeatures {
            result += feature + "<"
        }
        return result
    }

    /// The `ver` attribute: base64(SHA-1(``verificationString``)) (XEP-0115 §5.1 steps 7–8).
    public var ver: String {
        Data(OpenSSLCrypto.digest(.sha1, Array(self.verificationString.utf8))).base64EncodedString()
    }

    /// The `<c xmlns='http://jabber.org/protocol/caps' hash='sha-1' node=… ver=…/>`
    /// element to put in outgoing presence (XEP-0115 §4). `node` names the software,
    /// e.g. a project URL.
    public func capsElement(node: String) -> XMLElement {
        XMLElement(
            name: "c", namespace: Self.namespace,
            attributes: [
                XMLAttribute(name: "hash", value: "sha-1"),
                XMLAttribute(name: "node", value: node),
                XMLAttribute(name: "ver", value: self.ver),
            ]
        )
    }

    /// The `<query xmlns='http://jabber.org/protocol/disco#info'/>` payload answering a
    /// disco#info request (XEP-0030 §3.1). When the request named a node (for caps,
    /// `node#ver`, XEP-0115 §6.2), pass it back as `node`.
    public func discoInfoResult(node: String?) -> XMLElement {
        var query = XMLElement(name: "query", namespace: Self.discoInfoNamespace)
        query[attribute: "node"] = node
        for identity in self.sortedIdentities {
            var element = XMLElement(
                name: "identity", namespace: Self.discoInfoNamespace,
                attributes: [
                    XMLAttribute(name: "category", value: identity.category),
                    XMLAttribute(name: "type", value: identity.type),
                ]
            )
            element[attribute: "xml:lang"] = identity.lang
            element[attribute: "name"] = identity.name
            query.append(element)
        }
        for feature in self.sortedFeatures {
            query.append(
                XMLElement(name: "feature", namespace: Self.discoInfoNamespace, attributes: [XMLAttribute(name: "var", value: feature)])
            )
        }
        return query
    }

    /// Identities without duplicates, sorted by category, type, lang, then name.
    private var sortedIdentities: [Identity] {
        Array(Set(self.identities)).sorted { lhs, rhs in
            for (left, right) in [
                (lhs.category, rhs.category), (lhs.type, rhs.type), (lhs.lang ?? "", rhs.lang ?? ""), (lhs.name ?? "", rhs.name ?? ""),
            ] where !left.utf8.elementsEqual(right.utf8) {
                return Self.octetPrecedes(left, right)
            }
            return false
        }
    }

    /// Features without duplicates, sorted.
    private var sortedFeatures: [String] {
        Array(Set(self.features)).sorted(by: Self.octetPrecedes)
    }

    /// The `i;octet` collation (RFC 4790 §9.3) that XEP-0115 §5.1 requires.
    private static func octetPrecedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}
