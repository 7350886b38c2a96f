import Foundation

/// Where a password comes from: a file, an environment variable or a command's output.
/// Never a bare command-line argument, which other users can read from the process list.
package enum PasswordSource: Sendable, Equatable, CustomStringConvertible {
    case file(String)
    case environment(String)
    case command(String)
    /// Given by a gateway user's in-band registration (XEP-0077) and kept in the state
    /// database (mode 0600); never shown.
    case registered(String)

    package struct Failure: Error, CustomStringConvertible {
        package let description: String

        package init(description: String) {
            self.description = description
        }
    }

    /// The password, with one trailing newline removed.
    package func read() throws -> String {
        let raw: String
        switch self {
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw Failure(description: "cannot read password file \(path)")
            }
            raw = String(decoding: data, as: UTF8.self)
        case .environment(let name):
            guard let value = ProcessInfo.processInfo.environment[name] else {
                throw Failure(description: "environment variable \(name) is not set")
            }
            raw = value
        case .command(let command):
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw Failure(description: "password command exited with \(process.terminationStatus)")
            }
            raw = String(decoding: data, as: UTF8.self)
        case .registered(let password):
            raw = password
        }
        var password = raw
        if password.hasSuffix("\r\n") {
            password.removeLast(1)
        } else if password.hasSuffix("\n") {
            password.removeLast()
        }
        guard !password.isEmpty else { throw Failure(description: "\(self) gave an empty password") }
        return password
    }

    /// A warning when the secret is exposed to other users: a password file that its group
    /// or others may read (or write). Nil when it is private or not a file.
    package func exposure() -> String? {
        guard case .file(let path) = self else { return nil }
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 != 0 else { return nil }
        return "password file \(path) has mode \(String(mode, radix: 8)): other users can read it; chmod 600 it"
    }

    /// Names the source, never the password.
    package var description: String {
        switch self {
        case .file(let path): "password file \(path)"
        case .environment(let name): "environment variable \(name)"
        case .command: "password command"
        case .registered: "password given at registration"
        }
    }
}
