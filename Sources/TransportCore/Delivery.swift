
/// One message to hand to one endpoint: what the router decides and the durable queue
/// stores until the target transport has taken it.
public struct Delivery: Hashable, Sendable, Codable {
    /// Queue position, assigned when stored (0 before).
    public var sequence: Int64
    public var channel: String
    public var target: Endpoint
    /// The text to send to an XMPP target: the channel's format applied.
    public var body: String
    /// The body as the sender wrote it, and the sender's display name, for local outputs
    /// that format their own lines (`{sender}: {body}` or JSON).
    public var originalBody: String
    public var nick: String
    public var subject: String?
    public var type: RelayChannel.DeliveryType
    /// The source endpoint and stanza id, for the id map (receipts, corrections later).
    public var source: Endpoint
    public var sourceID: String
    /// The stanza id to send with; recorded so an echo of it is recognised (no loops).
    public var relayID: String
    /// What crosses besides text, with the ids this target knows (mapped through the id map).
    public var content: MessageContent

    public init(
        sequence: Int64 = 0, channel: String, target: Endpoint, body: String, originalBody: String, nick: String,
        subject: String? = nil, type: RelayChannel.DeliveryType, source: Endpoint, sourceID: String, relayID: String,
        content: MessageContent = MessageContent()
    ) {
        self.content = content
        self.sequence = sequence
        self.channel = channel
        self.target = target
        self.body = body
        self.originalBody = originalBody
        self.nick = nick
        self.subject = subject
        self.type = type
        self.source = source
        self.sourceID = sourceID
        self.relayID = relayID
    }
}

extension Delivery {
    /// Whether this copy asks its target for a receipt: a copy of a local input or a page
    /// (a source without an address: its delivery status is kept, and alerts ask for
    /// phones), or a copy whose receipt goes back to a sender who asked
    /// (``MessageContent/wantsReceipt``). Nobody reads the receipt of any other message (an
    /// encryption or occupant notice, a copy for a sender who asked for none), and every
    /// element costs the server, and its archive, on every message (issue 43).
    public var asksReceipt: Bool {
        self.source.address == nil || self.content.wantsReceipt == true
    }
}
