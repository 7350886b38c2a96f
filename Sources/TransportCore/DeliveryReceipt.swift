/// A recipient's client received (or displayed) one of our relayed copies: a delivery receipt
/// (XEP-0184 §5.2, `<received id=…/>`) or a displayed marker (XEP-0333 §4,
/// `<displayed id=…/>`). The transport fills what it saw; the bridge adds where the copy
/// came from before it tells local subscribers.
public struct DeliveryReceipt: Hashable, Sendable {
    /// The id we sent the copy with.
    public var relayID: String
    /// Who sent the receipt: the transport and their bare JID.
    public var from: Endpoint
    /// A displayed marker (else a delivery receipt).
    public var displayed: Bool
    /// Filled by the bridge from its id map: the channel, the source and the source's id.
    public var channel: String?
    public var source: Endpoint?
    public var sourceID: String?

    public init(relayID: String, from: Endpoint, displayed: Bool, channel: String? = nil, source: Endpoint? = nil, sourceID: String? = nil) {
        self.relayID = relayID
        self.from = from
        self.displayed = displayed
        self.channel = channel
        self.source = source
        self.sourceID = sourceID
    }

    /// `{"event":"receipt","channel":…,"id":…,"target":…,"status":"received"|"displayed"}`
    /// for a local subscriber: `id` is the id the local side knows (the source's).
    public var jsonLine: String {
        struct Record: Encodable {
            var event = "receipt"
            var channel: String
            var id: String
            var target: String
            var status: String
        }
        return PresenceEventLine.encode(
            Record(channel: self.channel ?? "", id: self.sourceID ?? self.relayID, target: self.from.description, status: self.displayed ? "displayed" : "received")
        )
    }
}
