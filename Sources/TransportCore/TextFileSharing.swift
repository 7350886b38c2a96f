/// A transport that can share a text as a file its recipients can open (XMPP: an upload
/// through the account's XEP-0363 service): a flood's digest carries its full text so.
public protocol TextFileSharing: Sendable {
    /// The file's URL, or nil when there is no upload service or the upload failed.
    func shareTextFile(_ text: String, filename: String) async -> String?
}
