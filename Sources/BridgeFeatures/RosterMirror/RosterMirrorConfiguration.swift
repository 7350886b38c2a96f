/// One `[[roster_mirror]]` entry: contacts of account `from` appear in account `to`'s
/// roster (and back, when two-way), optionally only some groups.
package struct RosterMirrorConfiguration: Sendable, Equatable {
    package var from: String
    package var to: String
    /// Only items in at least one of these groups; nil mirrors everything.
    package var groups: Set<String>?
    package var twoWay: Bool
    /// Also ask mirrored contacts for their presence (subscription request) from `to`.
    package var subscribe: Bool

    /// Stable id for the mirror's stored snapshots.
    package var id: String { "\(self.from)->\(self.to)" }

    package static let keys = ["from", "to", "groups", "two_way", "subscribe"]

    package init(from: String, to: String, groups: Set<String>? = nil, twoWay: Bool, subscribe: Bool) {
        self.from = from
        self.to = to
        self.groups = groups
        self.twoWay = twoWay
        self.subscribe = subscribe
    }
}
