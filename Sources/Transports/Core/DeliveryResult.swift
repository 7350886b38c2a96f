/// What a transport says about a delivery attempt.
public enum DeliveryResult: Hashable, Sendable {
    /// Handed over and confirmed (for XMPP: written and acknowledged by a server round trip).
    case delivered
    /// Not now (offline, reconnecting); keep it queued and try again in order.
    case retryLater(String)
    /// Never deliverable (invalid target, refused); drop it and log why.
    case failed(String)
}
