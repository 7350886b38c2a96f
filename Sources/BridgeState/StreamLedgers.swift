#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers

/// The folder of ``StreamLedgerFile``s beside the state database, one per account, each
/// opened once per process and shared by the account's successive sessions.
package final class StreamLedgers: Sendable {
    package let folder: String
    private let bootID: BootID
    private let files = NIOLockedValueBox<[String: StreamLedgerFile]>([:])

    /// Creates the folder (mode 0700) if needed. Opening and creating are file-system
    /// calls: done at start and when an account is added, never on an event loop.
    package init(folder: String, bootID: BootID = .current()) throws(StreamLedgerError) {
        self.folder = folder
        self.bootID = bootID
        if mkdir(folder, 0o700) != 0, errno != EEXIST {
            throw StreamLedgerError(path: folder, operation: "create the folder of", errno: errno)
        }
    }

    /// The account's ledger, opened on first use.
    package func ledger(for account: String) throws(StreamLedgerError) -> StreamLedgerFile {
        if let file = self.files.withLockedValue({ $0[account] }) { return file }
        let file = try StreamLedgerFile(path: self.path(for: account), bootID: self.bootID)
        return self.files.withLockedValue { files in
            if let existing = files[account] { return existing }
            files[account] = file
            return file
        }
    }

    /// Joins the stored session (its id, location, JID and the handled count committed with
    /// the messages) with the ledger's positions. Nil when the ledger does not describe that
    /// session (another boot, a window larger than it holds, a session begun but not yet
    /// stored): it is then not resumed, and what was unacknowledged is sent again.
    package static func resumable(
        _ stored: StoredStreamSession?, ledger: StreamLedgerSnapshot
    ) -> StoredStreamSession? {
        guard var stored, ledger.resumes(sessionID: stored.id), let current = ledger.current else { return nil }
        stored.acknowledged = current.acknowledged
        stored.unacknowledgedIDs = ledger.unacknowledgedIDs
        // Never report less than the server heard: an acknowledgement may have gone out
        // for stanzas that were not messages (and so not committed with a number).
        if current.reported &- stored.handled < UInt32(1) << 31 { stored.handled = current.reported }
        return stored
    }

    /// `account`'s file: its name in hexadecimal, so any account name is a safe file name.
    private func path(for account: String) -> String {
        let hex = account.utf8.map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xf)]], as: UTF8.self)
        }.joined()
        return "\(self.folder)/\(hex).ledger"
    }
}
