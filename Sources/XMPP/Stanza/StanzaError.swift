/// A stanza error (RFC 6120 §8.3): a type saying what the sender may do next, a
/// defined condition, and optional human-readable text.
public struct StanzaError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the sender should do (RFC 6120 §8.3.2).
    public enum ErrorType: String, Hashable, Sendable, CaseIterable {
        case auth
        case cancel
        case `continue`
        case modify
        case wait
    }

    /// The defined conditions of RFC 6120 §8.3.3.
    public enum Condition: String, Hashable, Sendable, CaseIterable {
        case badRequest = "bad-request"
        case conflict = "conflict"
        case featureNotImplemented = "feature-not-implemented"
        case forbidden = "forbidden"
        case gone = "gone"
        case internalServerError = "internal-server-error"
        case itemNotFound = "item-not-found"
        case jidMalformed = "jid-malformed"
        case notAcceptable = "not-acceptable"
        case notAllowed = "not-allowed"
        case notAuthorized = "not-authorized"
        case policyViolation = "policy-violation"
        case recipientUnavailable = "recipient-unavailable"
        case redirect = "redirect"
        case registrationRequired = "registration-required"
        case remoteServerNotFound = "remote-server-not-found"
        case remoteServerTimeout = "remote-server-timeout"
        case resourceConstraint = "resource-constraint"
        case serviceUnavailable = "service-unavailable"
        case subscriptionRequired = "subscription-required"
        case undefinedCondition = "undefined-condition"
        case unexpectedRequest = "unexpected-request"

        /// The type RFC 6120 §8.3.3 gives in its example for this condition.
        public var defaultType: ErrorType {
            switch self {
            case .badRequest, .jidMalformed, .notAcceptable, .policyViolation, .redirect, .gone: .modify
            case .forbidden, .notAuthorized, .registrationRequired, .subscriptionRequired: .auth
            case .conflict, .featureNotImplemented, .internalServerError, .itemNotFound, .notAllowed,
                .remoteServerNotFound, .serviceUnavailable, .undefinedCondition:
                .cancel
            case .recipientUnavailable, .remoteServerTimeout, .resourceConstraint, .unexpectedRequest: .wait
            }
        }
    }

    public var type: ErrorType
    public var condition: Condition
    public var text: String?
    /// The entity that generated the error, if it said.
    public var by: String?
    /// An application-specific condition (RFC 6120 §8.3.2): a child of `<error/>` in a
    /// namespace other than the stanza errors', e.g. XEP-0363's `<file-too-large/>`.
    public var applicationCondition: XMLElement?

    public init(
        _ condition: Condition, type: ErrorType? = nil, text: String? = nil, by: String? = nil, applicationCondition: XMLElement? = nil
    ) {
        self.condition = condition
        self.type = type ?? condition.defaultType
        self.text = text
        self.by = by
        self.applicationCondition = applicationCondition
    }

    /// Whether sending the same stanza again later may succeed (RFC 6120 §8.3.2): errors of
    /// type `wait`, and conditions that name a passing state of the network or a server
    /// (`remote-server-timeout`, `remote-server-not-found`, `recipient-unavailable`,
    /// `resource-constraint`, `internal-server-error`). Everything else is permanent.
    public var isTransient: Bool {
        if self.type == .wait { return true }
        switch self.condition {
        case .remoteServerTimeout, .remoteServerNotFound, .recipientUnavailable, .resourceConstraint, .internalServerError:
            return true
        case .badRequest, .conflict, .featureNotImplemented, .forbidden, .gone, .itemNotFound, .jidMalformed, .notAcceptable,
            .notAllowed, .notAuthorized, .policyViolation, .redirect, .registrationRequired, .serviceUnavailable,
            .subscriptionRequired, .undefinedCondition, .unexpectedRequest:
            return false
        }
    }

    /// Reads the `<error/>` child of a stanza; unknown conditions become `undefined-condition`.
    public init?(stanza: XMLElement) {
        guard let error = stanza.firstChild(named: "error") else { return nil }
        let conditionElement = error.elements.first { $0.namespace == XMPPNamespace.stanzas && $0.name != "text" }
        self.condition = conditionElement.flatMap { Condition(rawValue: $0.name) } ?? .undefinedCondition
        self.type = error[attribute: "type"].flatMap(ErrorType.init(rawValue:)) ?? self.condition.defaultType
        self.text = error.firstChild(named: "text", namespace: XMPPNamespace.stanzas)?.text
        self.by = error[attribute: "by"]
        self.applicationCondition = error.elements.first { $0.namespace != XMPPNamespace.stanzas && $0.namespace != XMPPNamespace.client }
    }

    /// The `<error/>` element (RFC 6120 §8.3.2).
    public var element: XMLElement {
        var error = XMLElement(
            name: "error", namespace: XMPPNamespace.client, attributes: [XMLAttribute(name: "type", value: self.type.rawValue)]
        )
        if let by { error[attribute: "by"] = by }
        error.append(XMLElement(name: self.condition.rawValue, namespace: XMPPNamespace.stanzas))
        if let text {
            var textElement = XMLElement(name: "text", namespace: XMPPNamespace.stanzas)
            textElement.append(text: text)
            error.append(textElement)
        }
        if let applicationCondition { error.append(applicationCondition) }
        return error
    }

    public var description: String {
        "\(self.type.rawValue)/\(self.condition.rawValue)" + (self.text.map { " (\($0))" } ?? "")
    }
}
