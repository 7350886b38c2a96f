import BridgeRelay
import BridgeRouting
import Foundation
import TOMLKit
import TransportCore
import XMPP

/// Reads `bridge.toml` (TOML) into typed configuration, collecting every problem with its
/// TOML path and a hint instead of stopping at the first. Relative paths in the file are
/// taken relative to the file's folder.
///
/// The sections are `[bridge]`, `[accounts.NAME]`, `[local.NAME]`, `[channels.NAME]`, `[[presence_mirror]]`, `[[roster_mirror]]` and `[gateway.NAME]`,
/// each optional; the per-section parsing lives in `ConfigurationLoader+Settings.swift`,
/// `+Accounts`, `+Locals` and `+Channels`. Sections are read in name order (TOMLKit's
/// tables are sorted maps and do not keep the file's order), so problems and channels
/// come out sorted by name.
package struct ConfigurationLoader {
    package let file: String
    package private(set) var problems: [ConfigurationProblem] = []

    /// The top-level tables of `bridge.toml`.
    package static let sections = ["bridge", "accounts", "local", "channels", "presence_mirror", "roster_mirror", "gateway"]

    /// The process environment: systemd's `STATE_DIRECTORY` and `RUNTIME_DIRECTORY` move
    /// the default state file and control socket there.
    package let environment: [String: String]

    package init(file: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.file = file
        self.environment = environment
    }

    /// The default place: `$XDG_CONFIG_HOME/xmpp-bridge/bridge.toml`, then
    /// `~/.config/xmpp-bridge/bridge.toml`, then `/etc/xmpp-bridge/bridge.toml`.
    package static func defaultFile() -> String {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [String] = []
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty { candidates.append("\(xdg)/xmpp-bridge/bridge.toml") }
        if let home = environment["HOME"], !home.isEmpty { candidates.append("\(home)/.config/xmpp-bridge/bridge.toml") }
        candidates.append("/etc/xmpp-bridge/bridge.toml")
        return candidates.first { FileManager.default.fileExists(atPath: $0) } ?? candidates[0]
    }

    /// Parses the whole file; throws ``ConfigurationError`` listing every problem, including
    /// those only visible across sections (dangling member references, duplicate names).
    package mutating func loadBridge() throws(ConfigurationError) -> BridgeConfiguration {
        self.problems = []
        let table = try self.parse()
        // TOMLKit never frees a parsed document (LebJe/TOMLKit#26): emptied here, its nodes
        // go, about 1.5 KB an account that every load, SIGHUP's included, otherwise kept.
        // Nothing read from it outlives this call.
        defer { table.clear() }
        self.rejectUnknownKeys(in: table, at: "", allowed: Self.sections)
        let settings = self.settings(table["bridge"])

        var accounts: [String: AccountConfiguration] = [:]
        let accountTables = self.namedTables(
            in: table, section: "accounts", what: "accounts", hint: "write [accounts.NAME] with jid and a password source"
        )
        for (name, accountTable) in accountTables {
            if let account = self.account(name, accountTable) { accounts[name] = account }
        }

        var locals: [String: LocalConfiguration] = [:]
        var claimedPaths = [settings.statePath: "bridge.state", settings.controlSocketPath: "bridge.control_socket"]
        if case .unixSocket(let socket) = settings.metricsListen {
            if let owner = claimedPaths[socket] {
                self.problem("bridge.metrics_listen", "\(socket) is already used by \(owner)", "give the metrics socket its own path")
            } else {
                claimedPaths[socket] = "bridge.metrics_listen"
            }
        }
        let localTables = self.namedTables(
            in: table, section: "local", what: "local transports", hint: "write [local.NAME] with kind = \"stdio\", \"fifo\" or \"socket\""
        )
        var stdio: String?
        for (name, localTable) in localTables {
            guard let local = self.local(name, localTable, accountNames: Set(accountTables.map(\.name)), stdio: stdio, claimedPaths: &claimedPaths)
            else { continue }
            locals[name] = local
            if local.kind == .stdio, stdio == nil { stdio = name }
        }

        var references = MemberReferences(
            accountNames: Set(accountTables.map(\.name)), localNames: Set(localTables.map(\.name)), accounts: accounts, locals: locals
        )
        var channels: [RelayChannel] = []
        let channelTables = self.namedTables(
            in: table, section: "channels", what: "channels", hint: "write [channels.NAME] with members = [ … ]"
        )
        var presenceChannels: Set<String> = []
        var webhookTemplates: [String: String] = [:]
        var paging: [String: PagingPolicy] = [:]
        var filters: [String: ChannelFilter] = [:]
        for (name, channelTable) in channelTables {
            guard var channel = self.channel(name, channelTable, references: &references) else { continue }
            channel.passesReceipts = self.passesReceipts(channel, channelTable, accounts: Set(accounts.keys))
            channels.append(channel)
            if self.relaysPresence(channel, channelTable, accounts: Set(accounts.keys)) { presenceChannels.insert(name) }
            if let template = self.webhookTemplate(channelTable, at: Self.path("channels", name)) { webhookTemplates[name] = template }
            paging[name] = self.pagingPolicy(channelTable, channel: name, accounts: accounts)
            filters[name] = self.channelFilter(channelTable, channel: name)
        }
        let accountNames = Set(accountTables.map(\.name))
        let presenceMirrors = self.presenceMirrors(table["presence_mirror"], accounts: accountNames)
        let rosterMirrors = self.rosterMirrors(table["roster_mirror"], accounts: accountNames)
        self.checkStdioIsUsed(locals: locals, referenced: references.referencedLocals)
        var gateways: [String: GatewayConfiguration] = [:]
        var domains: [String: String] = [:]
        for (name, gatewayTable) in self.namedTables(in: table, section: "gateway", what: "gateways", hint: "write [gateway.NAME] with component, port and a secret") {
            guard let gateway = self.gateway(name, gatewayTable, accounts: accounts) else { continue }
            if let other = domains.updateValue(name, forKey: gateway.domain) {
                self.problem("\(Self.path("gateway", name)).component", "\(gateway.domain) is also gateway.\(other)'s", "one gateway per component domain")
            }
            gateways[name] = gateway
        }

        guard self.problems.isEmpty else { throw ConfigurationError(file: self.file, problems: self.problems) }
        return BridgeConfiguration(
            file: self.file, settings: settings, accounts: accounts, locals: locals, channels: channels,
            presenceChannels: presenceChannels, presenceMirrors: presenceMirrors, rosterMirrors: rosterMirrors,
            webhookTemplates: webhookTemplates, gateways: gateways, paging: paging, filters: filters, encryption: references.encryption
        )
    }

    /// Parses the file and returns its accounts (for `send`, `listen`, `login`, `register`);
    /// a problem anywhere in the file is still reported.
    package mutating func load() throws(ConfigurationError) -> [String: AccountConfiguration] {
        try self.loadBridge().accounts
    }

    /// The file as a TOML table, or the one problem that stops everything else.
    private func parse() throws(ConfigurationError) -> TOMLTable {
        guard let data = FileManager.default.contents(atPath: self.file) else {
            throw ConfigurationError(file: self.file, problems: [.init(path: "(file)", message: "cannot read the file", hint: "check the path and permissions")])
        }
        if let problem = TOMLPrecheck.problem(in: Array(data)) {
            throw ConfigurationError(file: self.file, problems: [problem])
        }
        do {
            return try TOMLTable(string: String(decoding: data, as: UTF8.self))
        } catch let error as TOMLParseError {
            throw ConfigurationError(
                file: self.file,
                problems: [.init(path: "(line \(error.source.begin.line), column \(error.source.begin.column))", message: error.description, hint: "this is not valid TOML")]
            )
        } catch {
            throw ConfigurationError(file: self.file, problems: [.init(path: "(file)", message: "\(error)", hint: nil)])
        }
    }

    /// The `[section.NAME]` tables in name order. Every declared name is returned as long
    /// as it is a table, so a bad entry is reported once, not again by each reference to it.
    private mutating func namedTables(in root: TOMLTable, section: String, what: String, hint: String) -> [(name: String, table: TOMLTable)] {
        guard let value = root[section] else { return [] }
        guard let tables = value.table else {
            self.problem(section, "must be a table of \(what)", hint)
            return []
        }
        var result: [(name: String, table: TOMLTable)] = []
        for name in tables.keys.sorted() {
            let path = Self.path(section, name)
            if !Self.isValidName(name) {
                self.problem(path, "'\(name)' is not a valid name", "names use only ASCII letters, digits, '-' and '_'")
            }
            guard let table = tables[name]?.table else {
                self.problem(path, "must be a table", hint)
                continue
            }
            result.append((name, table))
        }
        return result
    }

    /// A TOML path `section.name`, quoting a name that is not a bare key.
    package static func path(_ section: String, _ name: String) -> String {
        "\(section)." + (Self.isValidName(name) ? name : "\"\(name)\"")
    }

    /// Whether a name is a TOML bare key (letters, digits, `-`, `_`), so TOML paths and
    /// `NAME:JID` endpoints stay unambiguous.
    package static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
    }
}

// MARK: - Value helpers shared by the section parsers

extension ConfigurationLoader {
    /// The string at `key`, or nil when absent; any other type is a problem.
    package mutating func string(_ table: TOMLTable, _ key: String, _ path: String) -> String? {
        guard let value = table[key] else { return nil }
        guard let text = value.string else {
            self.problem("\(path).\(key)", "must be a string", "put the value in double quotes")
            return nil
        }
        return text
    }

    /// A non-empty string at `key`.
    package mutating func nonEmptyString(_ table: TOMLTable, _ key: String, _ path: String, hint: String) -> String? {
        guard let text = self.string(table, key, path) else { return nil }
        guard !text.isEmpty else {
            self.problem("\(path).\(key)", "must not be empty", hint)
            return nil
        }
        return text
    }

    /// A whole number at `key` within `range`.
    package mutating func integer(_ table: TOMLTable, _ key: String, _ path: String, in range: ClosedRange<Int>, hint: String) -> Int? {
        guard let value = table[key] else { return nil }
        guard let number = value.int, range.contains(number) else {
            self.problem("\(path).\(key)", "must be a whole number from \(range.lowerBound) to \(range.upperBound)", hint)
            return nil
        }
        return number
    }

    /// A boolean at `key`.
    package mutating func flag(_ table: TOMLTable, _ key: String, _ path: String) -> Bool? {
        guard let value = table[key] else { return nil }
        guard let flag = value.bool else {
            self.problem("\(path).\(key)", "must be true or false", nil)
            return nil
        }
        return flag
    }

    /// One of an enumeration's raw values at `key`; `what` names it in the problem.
    package mutating func choice<Value: RawRepresentable & CaseIterable>(_ table: TOMLTable, _ key: String, _ path: String, what: String) -> Value?
    where Value.RawValue == String {
        guard let text = self.string(table, key, path) else { return nil }
        guard let value = Value(rawValue: text) else {
            self.problem("\(path).\(key)", "unknown \(what) '\(text)'", "one of: " + Value.allCases.map(\.rawValue).joined(separator: ", "))
            return nil
        }
        return value
    }

    package mutating func rejectUnknownKeys(in table: TOMLTable, at path: String, allowed: [String]) {
        for key in table.keys where !allowed.contains(key) {
            let full = path.isEmpty ? key : "\(path).\(key)"
            self.problem(full, "unknown key", "known keys here: " + allowed.joined(separator: ", "))
        }
    }

    package mutating func problem(_ path: String, _ message: String, _ hint: String?) {
        self.problems.append(ConfigurationProblem(path: path, message: message, hint: hint))
    }

    /// An absolute path: `~/` is the home folder, anything else relative is beside the file.
    /// `path` made absolute (relative to the file's folder, `~/` to HOME) with `.` and `..`
    /// folded, so two spellings of one file compare equal (symlinks are not followed).
    package func resolve(_ path: String) -> String {
        let absolute: String
        if path.hasPrefix("/") {
            absolute = path
        } else if path.hasPrefix("~/"), let home = ProcessInfo.processInfo.environment["HOME"] {
            absolute = home + path.dropFirst(1)
        } else {
            absolute = URL(fileURLWithPath: self.file).deletingLastPathComponent().appendingPathComponent(path).path
        }
        return URL(fileURLWithPath: absolute).standardized.path
    }

    /// Longest path a Unix-domain socket can bind on Linux (`sun_path` is 108 bytes with the NUL).
    package static let maximumSocketPathBytes = 107

    /// Reports a socket path too long to bind.
    package mutating func checkSocketPath(_ resolved: String, at path: String) {
        let bytes = resolved.utf8.count
        if bytes > Self.maximumSocketPathBytes {
            self.problem(path, "\(resolved) is \(bytes) bytes, longer than a Unix socket path may be (\(Self.maximumSocketPathBytes))", "choose a shorter path")
        }
    }
}
