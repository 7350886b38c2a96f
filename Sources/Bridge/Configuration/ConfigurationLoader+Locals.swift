import LocalTransport
import TOMLKit
import TransportCore

extension ConfigurationLoader {
    /// Longest input line a local may allow: 16 MiB.
    package static let maximumLineBytes = 16 * 1024 * 1024

    /// One `[local.NAME]` table, or nil when it has a problem.
    ///
    /// - Parameters:
    ///   - accountNames: every declared account; locals and accounts share one namespace,
    ///     since channel members and endpoints name them alike.
    ///   - stdio: the stdio local already read, if any (there is one standard input).
    ///   - claimedPaths: files already taken (state, control socket, earlier locals), by the
    ///     TOML path that took them; this local's path is added.
    package mutating func local(
        _ name: String, _ table: TOMLTable, accountNames: Set<String>, stdio: String?, claimedPaths: inout [String: String]
    ) -> LocalConfiguration? {
        let path = Self.path("local", name)
        if accountNames.contains(name) {
            self.problem(path, "name already used by \(Self.path("accounts", name))", "accounts and locals share one set of names, since channel members refer to both; rename one")
        }
        self.rejectUnknownKeys(in: table, at: path, allowed: LocalConfiguration.keys)

        let kindNames = LocalConfiguration.Kind.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        var kind: LocalConfiguration.Kind?
        if table["kind"] == nil {
            self.problem("\(path).kind", "is missing", "add kind = one of \(kindNames)")
        } else {
            kind = self.choice(table, "kind", path, what: "kind")
        }
        if kind == .stdio, let stdio {
            self.problem("\(path).kind", "only one stdio local is allowed; \(Self.path("local", stdio)) is already stdio", "there is one standard input; use a fifo or socket local for more inputs")
        }

        var filePath: String?
        if kind == .http, table["path"] != nil {
            self.problem("\(path).path", "does not apply to an http local", "an http local listens where listen says, e.g. listen = \"127.0.0.1:8080\" or listen = \"/run/xmpp-bridge/http.sock\"")
        } else if let text = self.nonEmptyString(table, "path", path, hint: "the file to create, e.g. path = \"/run/xmpp-bridge/\(name)\"") {
            if kind == .stdio {
                self.problem("\(path).path", "does not apply to a stdio local", "stdio reads standard input and writes standard output; remove path, or use kind = \"fifo\" or \"socket\"")
            } else {
                let resolved = self.resolve(text)
                if let owner = claimedPaths[resolved] {
                    self.problem("\(path).path", "\(resolved) is already used by \(owner)", "each FIFO and socket needs its own path")
                } else {
                    claimedPaths[resolved] = path
                }
                if kind == .socket { self.checkSocketPath(resolved, at: "\(path).path") }
                filePath = resolved
            }
        } else if table["path"] == nil, let kind, kind != .stdio, kind != .http {
            self.problem("\(path).path", "is missing", "a \(kind.rawValue) local needs a file path, e.g. path = \"/run/xmpp-bridge/\(name)\"")
        }

        var mode: UInt32 = 0o600
        if let text = self.string(table, "mode", path) {
            if kind == .stdio {
                self.problem("\(path).mode", "does not apply to a stdio local", "mode sets the permissions of a FIFO or socket file")
            } else if let parsed = Self.fileMode(text) {
                mode = parsed
            } else {
                self.problem("\(path).mode", "'\(text)' is not a file mode from 0000 to 0777", "write the permission bits in octal, e.g. mode = \"0600\"")
            }
        }

        var http: HTTPLocalSettings?
        if kind == .http {
            http = self.httpSettings(table, at: path, name: name, claimedPaths: &claimedPaths)
        } else {
            for key in HTTPLocalSettings.keys where table[key] != nil {
                self.problem("\(path).\(key)", "applies only to an http local", "remove \(key), or set kind = \"http\"")
            }
        }

        var output = StdioTransport.OutputFormat.text
        if table["output"] != nil, kind != nil, kind != .stdio {
            self.problem("\(path).output", "does not apply to \(kind == .http ? "an" : "a") \(kind?.rawValue ?? "") local", "output sets how a stdio local writes relayed messages")
        } else if let parsed: StdioTransport.OutputFormat = self.choice(table, "output", path, what: "output") {
            output = parsed
        }
        var exitOnEndOfInput = true
        if table["exit_on_eof"] != nil, kind != nil, kind != .stdio {
            self.problem("\(path).exit_on_eof", "does not apply to \(kind == .http ? "an" : "a") \(kind?.rawValue ?? "") local", "only standard input ends; a FIFO or socket waits for the next writer")
        } else if let flag = self.flag(table, "exit_on_eof", path) {
            exitOnEndOfInput = flag
        }

        let maxLineBytes =
            self.integer(table, "max_line_bytes", path, in: 1...Self.maximumLineBytes, hint: "the longest input line in bytes, e.g. 65536") ?? 64 * 1024
        let invalidUTF8: LineSplitter.InvalidUTF8Policy = self.choice(table, "invalid_utf8", path, what: "invalid_utf8 policy") ?? .replace
        let nick = self.nonEmptyString(table, "nick", path, hint: "the name messages from this input carry, e.g. nick = \"\(name)\"") ?? name

        if kind == .http {
            for key in ["max_line_bytes", "invalid_utf8"] where table[key] != nil {
                self.problem("\(path).\(key)", "does not apply to an http local", "an http local takes one message per request; remove \(key)")
            }
        }
        guard let kind, kind != .http || http != nil else { return nil }
        return LocalConfiguration(
            name: name, kind: kind, path: filePath, mode: mode, output: output.rawValue, maxLineBytes: maxLineBytes,
            invalidUTF8: invalidUTF8.rawValue, nick: nick, exitOnEndOfInput: exitOnEndOfInput, http: http
        )
    }

    /// Permission bits written in octal ("0600" or "600"), at most 0777.
    package static func fileMode(_ text: String) -> UInt32? {
        guard !text.isEmpty, text.count <= 4, text.allSatisfy({ ("0"..."7").contains($0) }), let mode = UInt32(text, radix: 8), mode <= 0o777 else {
            return nil
        }
        return mode
    }

    /// A stdio local that no channel member names would read standard input only to drop it.
    package mutating func checkStdioIsUsed(locals: [String: LocalConfiguration], referenced: Set<String>) {
        for local in locals.values.sorted(by: { $0.name < $1.name }) where local.kind == .stdio {
            if !referenced.contains(local.name) {
                let path = Self.path("local", local.name)
                self.problem(path, "is in no channel", "add { local = \"\(local.name)\" } to a channel's members, or remove [\(path)]")
            }
        }
    }
}
