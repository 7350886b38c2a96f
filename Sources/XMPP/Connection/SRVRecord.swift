/// A DNS SRV record (RFC 2782) as used for XMPP service discovery (RFC 6120 §3.2.1;
/// XEP-0368 for `_xmpps-client`).
public struct SRVRecord: Hashable, Sendable {
    public var priority: UInt16
    public var weight: UInt16
    public var port: UInt16
    /// Target host name without the trailing dot; `.` (empty) means "no service".
    public var target: String

    public init(priority: UInt16, weight: UInt16, port: UInt16, target: String) {
        self.priority = priority
        self.weight = weight
        self.port = port
        self.target = target
    }

    /// Orders records per RFC 2782: ascending priority; within a priority, a weighted
    /// random pick repeated until none is left (zero weights first, as the RFC says).
    /// `random(upperBound)` returns a value in `0...upperBound` and is injected for tests.
    public static func ordered(_ records: [SRVRecord], random: (Int) -> Int) -> [SRVRecord] {
        let priorities = Set(records.map(\.priority)).sorted()
        var result: [SRVRecord] = []
        result.reserveCapacity(records.count)
        for priority in priorities {
            var group = records.filter { $0.priority == priority }
            group.sort { ($0.weight == 0 ? 0 : 1) < ($1.weight == 0 ? 0 : 1) }
            while !group.isEmpty {
                let total = group.reduce(0) { $0 + Int($1.weight) }
                let pick = random(total)
                var running = 0
                var chosen = group.count - 1
                for (index, record) in group.enumerated() {
                    running += Int(record.weight)
                    if running >= pick {
                        chosen = index
                        break
                    }
                }
                result.append(group.remove(at: chosen))
            }
        }
        return result
    }
}
