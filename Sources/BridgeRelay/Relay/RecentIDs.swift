/// The most recent stanza ids sent, bounded so a long-running `send --lines` does not
/// grow without end (bounces refer to recent messages).
package struct RecentIDs {
    private var members: Set<String> = []
    private var order: [String] = []
    private var head = 0
    package let capacity: Int

    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    package mutating func insert(_ id: String) {
        guard self.members.insert(id).inserted else { return }
        if self.order.count < self.capacity {
            self.order.append(id)
        } else {
            self.members.remove(self.order[self.head])
            self.order[self.head] = id
            self.head = (self.head + 1) % self.capacity
        }
    }

    /// Forgets `id` (its slot in the ring is reused later; it no longer counts).
    package mutating func remove(_ id: String) {
        self.members.remove(id)
    }

    package func contains(_ id: String) -> Bool {
        self.members.contains(id)
    }
}
