import TransportCore

/// How a local transport reads its input lines and names what it sends.
public struct LocalInputOptions: Sendable {
    /// Longest input line in bytes (default 64 KiB); longer lines are dropped and logged.
    public var maxLineBytes: Int
    public var invalidUTF8: LineSplitter.InvalidUTF8Policy
    /// The display name messages from this input carry (`{nick}` in formats).
    public var nick: String

    public init(maxLineBytes: Int = 64 * 1024, invalidUTF8: LineSplitter.InvalidUTF8Policy = .replace, nick: String) {
        self.maxLineBytes = maxLineBytes
        self.invalidUTF8 = invalidUTF8
        self.nick = nick
    }
}
