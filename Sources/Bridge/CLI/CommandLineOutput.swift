import Foundation

/// Standard output and error for commands: unbuffered, one line at a time.
enum CommandLineOutput {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("xmpp-bridge: " + text + "\n").utf8))
    }
}
