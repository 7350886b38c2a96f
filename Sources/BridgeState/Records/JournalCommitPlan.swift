/// What of a group of ``JournalEntry`` values a store writes (both stores follow it): of
/// several session states or resume points for one key, only the last; a delivery queued
/// and completed in the same group never touches the queue table (its row would be
/// inserted and deleted in one transaction), though its id map row is kept.
package struct JournalCommitPlan {
    private var lastSession: [String: Int] = [:]
    private var lastResumePoint: [String: Int] = [:]
    private var passing: Set<Int> = []

    package init(_ entries: [JournalEntry]) {
        var queuedAt: [Int64: Int] = [:]
        for (index, entry) in entries.enumerated() {
            switch entry {
            case .streamSession(let transport, _): self.lastSession[transport] = index
            case .resumePoint(let key, _): self.lastResumePoint[key] = index
            case .enqueue(let delivery, _, _): queuedAt[delivery.sequence] = index
            case .complete(let sequence):
                if let queued = queuedAt.removeValue(forKey: sequence) {
                    self.passing.insert(queued)
                    self.passing.insert(index)
                }
            default: break
            }
        }
    }

    /// Whether the `.enqueue` or `.complete` at `index` reads or writes the queue table.
    package func touchesQueue(at index: Int) -> Bool { !self.passing.contains(index) }

    /// Whether the `.streamSession` at `index` is the last of `transport`'s in the group.
    package func writesSession(_ transport: String, at index: Int) -> Bool { self.lastSession[transport] == index }

    /// Whether the `.resumePoint` at `index` is the last for `key` in the group.
    package func writesResumePoint(_ key: String, at index: Int) -> Bool { self.lastResumePoint[key] == index }
}
