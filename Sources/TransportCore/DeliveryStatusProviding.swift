/// Answers where a message a local input handed over has got to (``MessageDeliveryStatus``),
/// and waits for it to be sent. Given to the HTTP ingress by the bridge, which keeps the
/// queue, the id map and the receipts.
public protocol DeliveryStatusProviding: Sendable {
    /// The status of message `id` from transport `source`; nil if the bridge has no record
    /// of it (never accepted, or older than the id map keeps).
    func status(ofMessage id: String, from source: String) async -> MessageDeliveryStatus?

    /// Returns once no target of message `id` is queued any more (each was sent or failed),
    /// or after `timeout`; then its status.
    func waitUntilSent(message id: String, from source: String, timeout: Duration) async -> MessageDeliveryStatus?
}
