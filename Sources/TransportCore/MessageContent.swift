/// What a relayed message carries besides its text, in the bridge's own terms: a shared
/// file, a correction, a reply, reactions, a retraction, the encryption it is under, a
/// receipt or displayed marker to pass back. Each transport maps its protocol's form to
/// and from this: the XMPP transport from and to the XEPs' elements (`MessageContent`, XEP-0066,
/// XEP-0308, XEP-0461, XEP-0444, XEP-0424, XEP-0380, XEP-0184, XEP-0333), the local and HTTP
/// transports from and to JSON fields (``LocalRichFields``).
///
/// The ids are those of the side the message is on: from a source they are the sender's;
/// before delivery the router replaces them with the ids the target knows.
public struct MessageContent: Hashable, Sendable, Codable {
    /// The URL of a shared file, when the message is a file.
    public var url: String?
    /// The id of the message this one corrects.
    public var replaceID: String?
    /// The id of the message this one answers.
    public var replyTo: String?
    /// The quoted text the sender put before its answer; not part of the message's own text.
    public var replyFallback: String?
    /// The id of the message reacted to, and the reactions (all of the sender's: an empty
    /// list removes them).
    public var reactionTo: String?
    public var reactions: [String]?
    /// The id of the message the sender retracts.
    public var retractID: String?
    /// The encryption the message is under, by name ("OMEMO", "OpenPGP", "PGP", "OTR"); its
    /// text is only a notice for clients without it.
    public var encryption: String?
    /// Why the bridge could not decrypt a message under ``encryption`` that it reads (an
    /// account that is an OMEMO device, issue 41): the notice to its sender says so. Not
    /// stored: it only travels from the transport to the router.
    public var undecryptable: String? = nil
    /// A receipt (XEP-0184; with `receiptDisplayed`, a displayed marker, XEP-0333) for the id.
    public var receiptFor: String?
    public var receiptDisplayed: Bool?
    /// Whether someone wants a receipt of this message: true or nil (not said). From a
    /// source: its sender asked for a delivery receipt or a displayed marker (XEP-0184 §5.1
    /// `<request/>`, XEP-0333 §4 `<markable/>`). On a delivery: the router's word that the
    /// target's receipt goes back to that sender (a channel with `receipts`), so the copy
    /// asks for one (``Delivery/asksReceipt``). Not part of ``isEmpty``: it is no content.
    public var wantsReceipt: Bool?
    /// An instruction to the delivering transport: fetch the file at `url` (at most this
    /// many bytes) and share its own upload of it instead (a channel with `reupload`).
    public var reuploadMaxBytes: Int?

    public init(
        url: String? = nil, replaceID: String? = nil, replyTo: String? = nil, replyFallback: String? = nil, reactionTo: String? = nil,
        reactions: [String]? = nil, retractID: String? = nil, encryption: String? = nil, receiptFor: String? = nil, receiptDisplayed: Bool? = nil,
        wantsReceipt: Bool? = nil, reuploadMaxBytes: Int? = nil
    ) {
        self.url = url
        self.replaceID = replaceID
        self.replyTo = replyTo
        self.replyFallback = replyFallback
        self.reactionTo = reactionTo
        self.reactions = reactions
        self.retractID = retractID
        self.encryption = encryption
        self.receiptFor = receiptFor
        self.receiptDisplayed = receiptDisplayed
        self.wantsReceipt = wantsReceipt
        self.reuploadMaxBytes = reuploadMaxBytes
    }

    /// The names in the stored JSON (the queue's `content` column): fixed here so that
    /// renaming a property cannot make queued rows unreadable.
    enum CodingKeys: String, CodingKey {
        case url, replaceID, replyTo, replyFallback, reactionTo, reactions, retractID, encryption, reuploadMaxBytes, wantsReceipt
        // Stored names from before the receipt fields were named so (queue and journal rows).
        case receiptFor = "confirms"
        case receiptDisplayed = "confirmsDisplayed"
    }

    /// Nothing but text (whether a receipt is wanted aside).
    public var isEmpty: Bool { self.withoutWantsReceipt == MessageContent() }

    /// The content without ``wantsReceipt``: what is kept of a message once relayed (the
    /// local archive and its API, which show what was said, not who wanted a receipt).
    public var withoutWantsReceipt: MessageContent {
        var content = self
        content.wantsReceipt = nil
        return content
    }

    /// An operation on an earlier message (correction, reaction, retraction), or a reply.
    public var references: String? { self.replaceID ?? self.reactionTo ?? self.retractID ?? self.replyTo }
}
