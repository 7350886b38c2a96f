import BridgeState
import XMPP

/// The snapshot's entries read from and compared with XMPP roster items (RFC 6121 §2).
extension RosterMirrorSnapshot.Entry {
    /// An entry recording `item` as the source has it now.
    package init(_ item: RosterItem, ownership: RosterMirrorSnapshot.Ownership) {
        self.init(name: item.name, groups: item.groups, ownership: ownership)
    }

    /// Whether `item` has the name and groups recorded here (groups compared as a set,
    /// since their order carries no meaning, RFC 6121 §2.1.2.6).
    package func matches(_ item: RosterItem) -> Bool {
        self.name == item.name && Set(self.groups) == Set(item.groups)
    }
}

extension RosterMirrorSnapshot {
    /// The key of `jid` in `entries`.
    package static func key(_ jid: JID) -> String {
        jid.bare.description
    }
}
