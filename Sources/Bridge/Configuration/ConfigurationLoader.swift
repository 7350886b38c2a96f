import Foundation
import TOMLKit
import XMPP

/// Reads `bridge.toml` (TOML) into typed configuration, collecting every problem with its
/// TOML path and a hint instead of stopping at the first. Relative paths in the file are
/// taken relative to the file's folder.
struct ConfigurationLoader {
    let file: String
    private(set) var problems: [ConfigurationProblem] = []

    init(file: String) {
        self.file = file
    }

    /// The default place: `$XDG_CONFIG_HOME/xmpp-bridge/bridge.toml`, then
    /// `~/.config/xmpp-bridge/bridge.toml`, then `/etc/xmpp-bridge/bridge.toml`.
    static func defaultFile() -> String {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [String] = []
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty { candidates.append("\(xdg)/xmpp-bridge/bridge.toml") }
        if let home = environment["HOME"], !home.isEmpty { candidates.append("\(home)/.config/xmpp-bridge/bridge.toml") }
        candidates.append("/etc/xmpp-bridge/bridge.toml")
        return candidates.first { FileManager.default.fileExists(atPath: $0) } ?? candidates[0]
    }

    /// Parses the file; throws ``ConfigurationError`` listing every problem.
    mutating func load() throws(ConfigurationError) -> [String: AccountConfiguration] {
        guard let data = FileManager.default.contents(atPath: self.file) else {
            throw ConfigurationError(file: self.file, problems: [.init(path: "(file)", message: "cannot read the file", hint: "check the path and permissions")])
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: String(decoding: data, as: UTF8.self))
        } catch let error as TOMLParseError {
            throw ConfigurationError(
                file: self.file,
                problems: [.init(path: "(line \(error.source.begin.line), column \(error.source.begin.column))", message: error.description, hint: "this is not valid TOML")]
            )
        } catch {
            throw ConfigurationError(file: self.file, problems: [.init(path: "(file)", message: "\(error)", hint: nil)])
        }
        self.rejectUnknownKeys(in: table, at: "", allowed: ["accounts"])
        var accounts: [String: AccountConfiguration] = [:]
        if let value = table["accounts"] {
            if let accountTables = value.table {
                for name in accountTables.keys.sorted() {
                    guard let accountTable = accountTables[name]?.table else {
                        self.problem("accounts.\(name)", "must be a table", "write [accounts.\(name)] with jid and a password source")
                        continue
                    }
                    if let account = self.account(name, accountTable) { accounts[name] = account }
                }
            } else {
                self.problem("accounts", "must be a table of accounts", "write [accounts.NAME] sections")
            }
        }
        guard self.problems.isEmpty else { throw ConfigurationError(file: self.file, problems: self.problems) }
        return accounts
    }

    private mutating func account(_ name: String, _ table: TOMLTable) -> AccountConfiguration? {
        let path = "accounts.\(name)"
        self.rejectUnknownKeys(in: table, at: path, allowed: AccountConfiguration.keys)
        let jid: JID?
        switch self.string(table, "jid", path) {
        case .some(let text):
            do {
                let parsed = try JID(text)
                if parsed.localpart == nil {
                    self.problem("\(path).jid", "'\(text)' has no localpart", "an account JID looks like user@example.org")
                }
                jid = parsed
            } catch {
                self.problem("\(path).jid", "'\(text)' is not a valid JID: \(error)", "an account JID looks like user@example.org")
                jid = nil
            }
        case .none:
            self.problem("\(path).jid", "is missing", "add jid = \"user@example.org\"")
            jid = nil
        }
        var sources: [PasswordSource] = []
        if let file = self.string(table, "password_file", path) {
            let resolved = self.resolve(file)
            if !FileManager.default.isReadableFile(atPath: resolved) {
                self.problem("\(path).password_file", "cannot read \(resolved)", "create it with the password, mode 0600")
            }
            sources.append(.file(resolved))
        }
        if let variable = self.string(table, "password_env", path) { sources.append(.environment(variable)) }
        if let command = self.string(table, "password_command", path) { sources.append(.command(command)) }
        if sources.count != 1 {
            self.problem(path, sources.isEmpty ? "has no password source" : "has more than one password source", "set exactly one of password_file, password_env, password_command")
        }
        let host = self.string(table, "host", path)
        var port: Int?
        if let value = table["port"] {
            if let number = value.int, (1...65535).contains(number) {
                port = number
            } else {
                self.problem("\(path).port", "must be a whole number from 1 to 65535", "e.g. port = 5222")
            }
        }
        var tlsMode = TLSMode.startTLS
        if let text = self.string(table, "tls", path) {
            if let mode = TLSMode(rawValue: text) {
                tlsMode = mode
            } else {
                self.problem("\(path).tls", "unknown TLS mode '\(text)'", "one of: " + TLSMode.allCases.map(\.rawValue).joined(separator: ", "))
            }
        }
        let caFile = self.string(table, "ca_file", path).map(self.resolve)
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            self.problem("\(path).ca_file", "cannot read \(caFile)", "a PEM file with the CA certificates to trust")
        }
        var insecure = false
        if let value = table["insecure"] {
            if let flag = value.bool { insecure = flag } else { self.problem("\(path).insecure", "must be true or false", nil) }
        }
        var policy = SessionStateMachine<ContinuousClock.Instant>.SubscriptionPolicy.acceptKnown
        if let text = self.string(table, "subscription_policy", path) {
            if let parsed = SessionStateMachine<ContinuousClock.Instant>.SubscriptionPolicy(rawValue: text) {
                policy = parsed
            } else {
                self.problem("\(path).subscription_policy", "unknown policy '\(text)'", "one of: manual, accept-known, accept-all")
            }
        }
        guard let jid, let source = sources.first, sources.count == 1 else { return nil }
        let client = XMPPClientConfiguration(
            jid: jid, tlsMode: tlsMode,
            tls: TLSConfiguration(certificateVerification: insecure ? .insecureNoVerification : .full, additionalTrustRootsFile: caFile),
            host: host, port: port
        )
        return AccountConfiguration(name: name, client: client, password: source, subscriptionPolicy: policy)
    }

    private mutating func string(_ table: TOMLTable, _ key: String, _ path: String) -> String? {
        guard let value = table[key] else { return nil }
        guard let text = value.string else {
            self.problem("\(path).\(key)", "must be a string", "put the value in double quotes")
            return nil
        }
        return text
    }

    private mutating func rejectUnknownKeys(in table: TOMLTable, at path: String, allowed: [String]) {
        for key in table.keys where !allowed.contains(key) {
            let full = path.isEmpty ? key : "\(path).\(key)"
            self.problem(full, "unknown key", "known keys here: " + allowed.joined(separator: ", "))
        }
    }

    private mutating func problem(_ path: String, _ message: String, _ hint: String?) {
        self.problems.append(ConfigurationProblem(path: path, message: message, hint: hint))
    }

    private func resolve(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        if path.hasPrefix("~/"), let home = ProcessInfo.processInfo.environment["HOME"] { return home + path.dropFirst(1) }
        return URL(fileURLWithPath: self.file).deletingLastPathComponent().appendingPathComponent(path).path
    }
}
