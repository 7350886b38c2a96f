import Logging

extension Logger {
    /// Logs under `jid`'s bare JID as `account`; leaves the metadata alone when it says so
    /// already, so loggers handed down share one copy of it (issue 43: each copy is a
    /// dictionary, and its printed form, that an account keeps for life).
    public mutating func tagAccount(_ jid: JID) {
        let value = Logger.MetadataValue.string("\(jid.bare)")
        if self[metadataKey: "account"] != value { self[metadataKey: "account"] = value }
    }
}
