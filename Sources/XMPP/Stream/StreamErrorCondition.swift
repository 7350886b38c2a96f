/// The defined stream error conditions of RFC 6120 §4.9.3.
///
/// Used both for errors we raise (and send before closing) and for errors the
/// server sends us. Unknown conditions from a peer map to ``undefinedCondition``.
public enum StreamErrorCondition: String, Hashable, Sendable, CaseIterable {
    case badFormat = "bad-format"
    case badNamespacePrefix = "bad-namespace-prefix"
    case conflict = "conflict"
    case connectionTimeout = "connection-timeout"
    case hostGone = "host-gone"
    case hostUnknown = "host-unknown"
    case improperAddressing = "improper-addressing"
    case internalServerError = "internal-server-error"
    case invalidFrom = "invalid-from"
    case invalidNamespace = "invalid-namespace"
    case invalidXML = "invalid-xml"
    case notAuthorized = "not-authorized"
    case notWellFormed = "not-well-formed"
    case policyViolation = "policy-violation"
    case remoteConnectionFailed = "remote-connection-failed"
    case reset = "reset"
    case resourceConstraint = "resource-constraint"
    case restrictedXML = "restricted-xml"
    case seeOtherHost = "see-other-host"
    case systemShutdown = "system-shutdown"
    case undefinedCondition = "undefined-condition"
    case unsupportedEncoding = "unsupported-encoding"
    case unsupportedFeature = "unsupported-feature"
    case unsupportedStanzaType = "unsupported-stanza-type"
    case unsupportedVersion = "unsupported-version"

    /// The namespace of stream error conditions (RFC 6120 §4.9.2).
    public static let namespace = "urn:ietf:params:xml:ns:xmpp-streams"
}
