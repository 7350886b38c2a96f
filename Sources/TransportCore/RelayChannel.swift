/// A named set of endpoints joined by the bridge (a channel of `bridge.toml`; named so
/// it cannot be taken for NIOCore's `Channel`): a message from a member that may send
/// goes to every other member that may receive.
public struct RelayChannel: Hashable, Sendable, Codable {
    /// How relayed messages are delivered to XMPP members (RFC 6121 §5.2.2). `chat` reaches
    /// an offline or sleeping phone (stored, archived, pushed); a `headline` to an account
    /// with no online client is dropped (§8.5.2.2).
    public enum DeliveryType: String, Hashable, Sendable, Codable, CaseIterable {
        case chat
        case normal
        case headline
    }

    public var name: String
    public var members: [ChannelMember]
    /// Body template for relayed messages; placeholders `{account}`, `{channel}`,
    /// `{nick}`, `{sender}`, `{body}`.
    public var format: String
    public var deliveryType: DeliveryType
    /// Relay a room's subject changes (XEP-0045 §8.1) as text; off by default.
    public var relaysSubject: Bool
    /// Tell the other members, as text, when someone enters or leaves a room that is a
    /// member (`occupant_events`); off by default (local members get JSON events anyway).
    public var relaysOccupants: Bool
    /// Pass delivery receipts and displayed markers (XEP-0184, XEP-0333) from a target back
    /// to the original sender, under its own id (`receipts`; on by default for a 1:1 link
    /// of two XMPP contacts).
    public var passesReceipts: Bool
    /// Files shared by URL are fetched (at most this many bytes) and uploaded again through
    /// each XMPP target account's own upload service (XEP-0363; `reupload = true`,
    /// `reupload_max_bytes`); nil: the URL is passed on as it is.
    public var reuploadMaxBytes: Int?
    public static let defaultReuploadMaxBytes = 100 * 1024 * 1024
    /// What passes through the channel goes into the local archive (`archive`, on by
    /// default; issue 25), kept for `archiveDays` days (`archive_days`; 0: for ever).
    public var archives = true
    public var archiveDays = RelayChannel.defaultArchiveDays
    public static let defaultArchiveDays = 90

    public static let defaultFormat = "[{channel}] {nick}: {body}"

    public init(
        name: String, members: [ChannelMember], format: String = RelayChannel.defaultFormat, deliveryType: DeliveryType = .chat, relaysSubject: Bool = false,
        relaysOccupants: Bool = false, passesReceipts: Bool = false
    ) {
        self.passesReceipts = passesReceipts
        self.relaysSubject = relaysSubject
        self.relaysOccupants = relaysOccupants
        self.name = name
        self.members = members
        self.format = format
        self.deliveryType = deliveryType
    }
}
