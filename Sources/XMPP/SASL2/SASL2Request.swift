/// The `<authenticate>` request of a SASL2 login (XEP-0388 §2.3), with what rides along
/// inline: who is logging in (`<user-agent>`, §2.3), a stream management resumption
/// (XEP-0198 §"SASL2 and Bind2"), a Bind 2 bind that enables features on the way
/// (XEP-0386 §3), and FAST: asking for a token, or logging in with one (XEP-0484 §3.2,
/// §3.4). Children go in that order.
public struct SASL2Request: Hashable, Sendable {
    /// The software and the installation logging in (XEP-0388 §2.3): the `id` is a UUID
    /// v4, the same on every login of the account, so that the server can tie its Bind 2
    /// resource and its FAST tokens to it.
    public struct UserAgent: Hashable, Sendable {
        public var id: String
        public var software: String?
        public var device: String?

        public init(id: String, software: String? = nil, device: String? = nil) {
            self.id = id
            self.software = software
            self.device = device
        }
    }

    /// A Bind 2 bind (XEP-0386 §3): the resource's prefix (`tag`), and the features to
    /// enable in the same round trip, each only if the server listed it.
    public struct Bind: Hashable, Sendable {
        public var tag: String?
        /// Stream management (XEP-0198 §3).
        public var enableStreamManagement: Bool
        /// Asked to be resumable (XEP-0198 §5), when stream management is enabled.
        public var resumable: Bool
        /// Message carbons (XEP-0280 §4).
        public var enableCarbons: Bool

        public init(tag: String?, enableStreamManagement: Bool, resumable: Bool = true, enableCarbons: Bool) {
            self.tag = tag
            self.enableStreamManagement = enableStreamManagement
            self.resumable = resumable
            self.enableCarbons = enableCarbons
        }
    }

    public var mechanism: String
    /// The mechanism's first message; nil when it has none (an empty one is sent empty).
    public var initialResponse: [UInt8]?
    public var userAgent: UserAgent?
    /// An inline `<resume/>`: the previous session's id and our inbound count.
    public var resume: StreamNegotiationStateMachine.ResumeRequest?
    public var bind: Bind?
    /// Ask for a FAST token for this hashed-token mechanism.
    public var requestToken: String?
    /// This login uses a FAST token (`<fast/>`, XEP-0484 §3.4).
    public var usesToken: Bool

    public init(
        mechanism: String, initialResponse: [UInt8]?, userAgent: UserAgent? = nil, resume: StreamNegotiationStateMachine.ResumeRequest? = nil,
        bind: Bind? = nil, requestToken: String? = nil, usesToken: Bool = false
    ) {
        self.mechanism = mechanism
        self.initialResponse = initialResponse
        self.userAgent = userAgent
        self.resume = resume
        self.bind = bind
        self.requestToken = requestToken
        self.usesToken = usesToken
    }

    /// The element to send.
    public var element: XMLElement {
        var element = XMLElement(name: "authenticate", namespace: XMPPNamespace.sasl2, attributes: [XMLAttribute(name: "mechanism", value: self.mechanism)])
        if let initial = self.initialResponse {
            element.append(Self.text("initial-response", XMPPNamespace.sasl2, SASL2Base64.encode(initial)))
        }
        if let agent = self.userAgent {
            var item = XMLElement(name: "user-agent", namespace: XMPPNamespace.sasl2, attributes: [XMLAttribute(name: "id", value: agent.id)])
            if let software = agent.software { item.append(Self.text("software", XMPPNamespace.sasl2, software)) }
            if let device = agent.device { item.append(Self.text("device", XMPPNamespace.sasl2, device)) }
            element.append(item)
        }
        if let resume = self.resume {
            element.append(
                XMLElement(
                    name: "resume", namespace: StreamManagementStateMachine.namespace,
                    attributes: [XMLAttribute(name: "previd", value: resume.previousID), XMLAttribute(name: "h", value: "\(resume.handled)")]
                )
            )
        }
        if let bind = self.bind {
            var item = XMLElement(name: "bind", namespace: XMPPNamespace.bind2)
            if let tag = bind.tag { item.append(Self.text("tag", XMPPNamespace.bind2, tag)) }
            if bind.enableStreamManagement {
                let resume = bind.resumable ? [XMLAttribute(name: "resume", value: "true")] : []
                item.append(XMLElement(name: "enable", namespace: StreamManagementStateMachine.namespace, attributes: resume))
            }
            if bind.enableCarbons { item.append(XMLElement(name: "enable", namespace: CarbonFilter.namespace)) }
            element.append(item)
        }
        if let mechanism = self.requestToken {
            element.append(XMLElement(name: "request-token", namespace: XMPPNamespace.fast, attributes: [XMLAttribute(name: "mechanism", value: mechanism)]))
        }
        if self.usesToken { element.append(XMLElement(name: "fast", namespace: XMPPNamespace.fast)) }
        return element
    }

    private static func text(_ name: String, _ namespace: String, _ value: String) -> XMLElement {
        XMLElement(name: name, namespace: namespace, children: [.text(value)])
    }
}
