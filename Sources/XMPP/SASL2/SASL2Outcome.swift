import Foundation

/// How a SASL2 exchange ended (XEP-0388 §2.6): `<success>` with what it carries inline, or
/// `<failure>` with its condition. Read from the server's element; a `<success>` that
/// breaks the rules of §2.6.1 is refused, since a login built on it could not be trusted.
public enum SASL2Outcome: Hashable, Sendable {
    case success(Success)
    case failure(condition: SASLFailureCondition, text: String?)

    /// A `<success>` (XEP-0388 §2.6.1), and the results of what was inlined.
    public struct Success: Hashable, Sendable {
        /// The mechanism's last data (SCRAM's `v=`, a hashed token's responder value).
        public var additionalData: [UInt8]?
        /// Who we are now: the bare JID, or the full JID once bound or resumed.
        public var authorizationIdentifier: JID
        /// XEP-0198's answer to an inline `<resume/>`: `<resumed/>` or `<failed/>`.
        public var resumeAnswer: XMLElement?
        /// XEP-0386's answer to an inline bind: `<bound/>` (holding the answers of what it
        /// enabled) or `<failed xmlns='urn:xmpp:bind:0'/>` (Prosody).
        public var bindAnswer: XMLElement?
        /// A FAST token (XEP-0484 §3.3), asked for or rotated in by the server.
        public var token: XMLElement?
    }

    /// Reads `<success>` or `<failure>` in the SASL2 namespace; anything else is no outcome.
    public init(_ element: XMLElement) throws(SASLError) {
        guard element.namespace == XMPPNamespace.sasl2 else {
            throw SASLError.unexpectedEvent("<\(SASLError.excerpt(element.name))> in \(SASLError.excerpt(element.namespace))")
        }
        switch element.name {
        case "success":
            self = .success(try Self.success(element))
        case "failure":
            // The condition by its local name: Prosody sends some without RFC 6120's
            // namespace. An unknown or missing one is the generic not-authorized.
            let condition = element.elements.lazy.compactMap { SASLFailureCondition(elementName: $0.name) }.first ?? .notAuthorized
            let text = element.firstChild(named: "text")?.text
            self = .failure(condition: condition, text: text.map { SASLError.excerpt($0) })
        default:
            throw SASLError.unexpectedEvent("<\(SASLError.excerpt(element.name))> where SASL2's outcome belongs")
        }
    }

    private static func success(_ element: XMLElement) throws(SASLError) -> Success {
        let identifiers = element.elements.filter { $0.name == "authorization-identifier" && $0.namespace == XMPPNamespace.sasl2 }
        guard identifiers.count == 1 else {
            throw SASLError.malformedOutcome("\(identifiers.count) <authorization-identifier> elements in <success>")
        }
        let jid: JID
        do {
            jid = try JID(identifiers[0].text.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            throw SASLError.malformedOutcome("<authorization-identifier> is no JID: \(SASLError.excerpt(identifiers[0].text))")
        }
        let data = element.firstChild(named: "additional-data", namespace: XMPPNamespace.sasl2)
        let resume = element.elements.first { $0.namespace == StreamManagementStateMachine.namespace && ($0.name == "resumed" || $0.name == "failed") }
        let bind = element.elements.first { $0.namespace == XMPPNamespace.bind2 && ($0.name == "bound" || $0.name == "failed") }
        if resume?.name == "resumed" || bind?.name == "bound" {
            guard jid.resourcepart != nil else {
                throw SASLError.malformedOutcome("bound or resumed, but <authorization-identifier> is the bare JID \(jid)")
            }
        }
        var additionalData: [UInt8]?
        if let data { additionalData = try SASL2Base64.decode(data.text) }
        return Success(
            additionalData: additionalData,
            authorizationIdentifier: jid, resumeAnswer: resume, bindAnswer: bind,
            token: element.firstChild(named: "token", namespace: XMPPNamespace.fast)
        )
    }
}
