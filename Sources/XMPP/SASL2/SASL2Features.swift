import Foundation

/// What a server offers for SASL2 login (XEP-0388 §2.1): the `<authentication
/// xmlns='urn:xmpp:sasl:2'>` stream feature, its mechanisms, and what may be inlined in
/// the `<authenticate>` request: a Bind 2 bind (XEP-0386 §3) with the features it can
/// enable on the way, a stream management resumption (XEP-0198 §"SASL2 and Bind2"), and
/// FAST tokens (XEP-0484 §3) with their mechanisms.
public struct SASL2Features: Hashable, Sendable {
    /// SASL mechanism names, in the server's order.
    public var mechanisms: [String]
    /// Bind 2 offered inline; the `var`s of the features it can enable in the same round
    /// trip (`urn:xmpp:sm:3`, `urn:xmpp:carbons:2`, …). Nil when Bind 2 is not offered.
    public var bind2Features: Set<String>?
    /// A stream management session may be resumed inline (`<sm xmlns='urn:xmpp:sm:3'/>`).
    public var inlineResumption: Bool
    /// FAST offered inline: its hashed-token mechanisms (`HT-SHA-256-EXPR`, …), in the
    /// server's order. Nil when FAST is not offered.
    public var fastMechanisms: [String]?

    /// Reads the feature; nil when `features` holds no SASL2 `<authentication>`.
    public init?(_ features: XMLElement) {
        guard let authentication = features.firstChild(named: "authentication", namespace: XMPPNamespace.sasl2) else { return nil }
        self.mechanisms = authentication.elements.filter { $0.name == "mechanism" && $0.namespace == XMPPNamespace.sasl2 }.map {
            $0.text.trimmingCharacters(in: .whitespacesAndNewlines)
        }.filter { !$0.isEmpty }
        let inline = authentication.firstChild(named: "inline", namespace: XMPPNamespace.sasl2)
        if let bind = inline?.firstChild(named: "bind", namespace: XMPPNamespace.bind2) {
            let offered = bind.firstChild(named: "inline", namespace: XMPPNamespace.bind2)?.elements.filter { $0.name == "feature" }
            self.bind2Features = Set(offered?.compactMap { $0[attribute: "var"] } ?? [])
        } else {
            self.bind2Features = nil
        }
        self.inlineResumption = inline?.firstChild(named: "sm", namespace: StreamManagementStateMachine.namespace) != nil
        self.fastMechanisms = inline?.firstChild(named: "fast", namespace: XMPPNamespace.fast).map { fast in
            fast.elements.filter { $0.name == "mechanism" }.map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        }
    }
}
