import Foundation

/// Runs helper commands (openssl, prosodyctl) to completion; output goes to a log file
/// or is captured for the error message.
public enum Subprocess {
    public struct Failure: Error, CustomStringConvertible {
        public let command: String
        public let status: Int32
        public let output: String
        public var description: String { "`\(command)` exited with \(status): \(output)" }

        public init(command: String, status: Int32, output: String) {
            self.command = command
            self.status = status
            self.output = output
        }
    }

    /// Finds `name` on `PATH` (or in the usual sbin folders); a path is taken as it is.
    public static func which(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/bin"] {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs `name` with `arguments`, throwing with its output on a non-zero exit;
    /// `environment` adds to (or replaces) variables of this process's environment.
    @discardableResult
    public static func run(_ name: String, _ arguments: [String], input: String? = nil, environment: [String: String] = [:]) throws -> String {
        guard let executable = self.which(name) else {
            throw Failure(command: name, status: 127, output: "\(name) not found on PATH")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        if let input {
            let pipe = Pipe()
            process.standardInput = pipe
            try process.run()
            pipe.fileHandleForWriting.write(Data(input.utf8))
            try pipe.fileHandleForWriting.close()
        } else {
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw Failure(command: ([name] + arguments).joined(separator: " "), status: process.terminationStatus, output: text)
        }
        return text
    }

    /// Runs blocking `work` (a command, a server's start-up) on a thread of its own and
    /// answers when it ends: an async caller never holds a thread of the shared pool
    /// (two on a 2-core machine) while it waits.
    public static func offThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.start()
        }
    }
}
