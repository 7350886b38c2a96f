/// What a transport says about a delivery attempt.
public enum DeliveryResult: Hashable, Sendable {
    /// Handed over and taken (for XMPP: written and acknowledged, XEP-0198, or answered by a ping's round trip).
    case delivered
    /// Not now (offline, reconnecting); keep it queued and try again in order.
    case retryLater(String)
    /// The target cannot take deliveries now, through no fault of the delivery (a room we
    /// are not in at the moment): keep it queued without counting an attempt, until the
    /// transport reports ``TransportEvent/targetReady(_:)``.
    case waitForTarget(String)
    /// Never deliverable (invalid target, refused); drop it and log why.
    case failed(String)
}
