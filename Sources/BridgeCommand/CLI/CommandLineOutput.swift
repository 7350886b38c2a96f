import Bridge
import Foundation

/// Standard output and error for commands: unbuffered, one line at a time.
enum CommandLineOutput {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// One JSON document on one line, keys sorted so scripts can diff runs.
    static func json(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        self.line(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("xmpp-bridge: " + text + "\n").utf8))
    }
}
