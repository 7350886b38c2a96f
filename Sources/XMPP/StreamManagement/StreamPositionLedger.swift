/// Where a session writes its stream management positions (XEP-0198 §4, §5) at the moment
/// they change, so that a process killed at any instant can resume its stream knowing which
/// stanzas the server may hold and what it last reported as handled.
///
/// The session calls these from its own executor, synchronously, right before the write
/// they describe: an implementation must not block or do I/O (the bridge's stores to a
/// memory-mapped file; no commit, no thread hop sits between a batch and its write).
public protocol StreamPositionLedger: Sendable {
    /// A resumable session begins: `<enabled/>` (nothing acknowledged yet), or a
    /// resumption whose server acknowledged `acknowledged` of our stanzas.
    func begin(sessionID: String, acknowledged: UInt32)
    /// Outbound stanza `number` is about to be written; `id` is its `id` attribute.
    func sent(_ number: UInt32, id: String?)
    /// The server acknowledged our stanzas through `number` (`<a h/>`, `<resumed h/>`).
    func acknowledged(through number: UInt32)
    /// We are about to tell the server we handled its stanzas through `number` (`<a h/>`).
    func reported(handled number: UInt32)
    /// There is no resumable session any more.
    func end()
    /// Outbound stanza `number` is about to be handed to the kernel, and is recorded as sent
    /// only by ``written(through:)`` once it is there (a component link, which has no
    /// acknowledgement to lean on): a process killed between the two leaves it in doubt,
    /// and the next process knows which.
    func writing(_ number: UInt32, id: String?)
    /// The stanzas marked by ``writing(_:id:)`` through `number` are in the kernel.
    func written(through number: UInt32)
}
