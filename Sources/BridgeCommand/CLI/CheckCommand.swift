import Bridge
import ArgumentParser
import Foundation

/// `xmpp-bridge check`: read `bridge.toml` and report every problem at once, or summarise
/// what the bridge would run.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check the configuration file and report every problem at once.",
        discussion: """
            Each problem is one line on standard error: its TOML path, what is wrong and a hint. \
            Without problems, a summary of the accounts, local transports and channels goes to \
            standard output. Nothing is contacted: password files are checked for being readable; \
            password commands and environment variables are not read.

            Exit status: 0 when the file is valid, 2 when it has problems.
            """
    )

    @Option(help: "The configuration file (default: $XDG_CONFIG_HOME/xmpp-bridge/bridge.toml, ~/.config/xmpp-bridge/bridge.toml, /etc/xmpp-bridge/bridge.toml).")
    var config: String?

    func run() throws {
        var loader = ConfigurationLoader(file: self.config ?? ConfigurationLoader.defaultFile())
        let configuration: BridgeConfiguration
        do {
            configuration = try loader.loadBridge()
        } catch {
            CommandLineOutput.error("\(error.file): \(error.problems.count) problem\(error.problems.count == 1 ? "" : "s")")
            FileHandle.standardError.write(Data(error.problems.map { "\($0)\n" }.joined().utf8))
            throw ExitStatus.configuration.exitCode
        }
        for line in Self.summary(configuration) { CommandLineOutput.line(line) }
        for warning in Self.warnings(configuration) { CommandLineOutput.error("warning: \(warning)") }
    }

    /// What is valid but unsafe or surprising: password files other users can read;
    /// headlines to XMPP contacts (RFC 6121 §8.5.2.2: dropped when no client is online).
    static func warnings(_ configuration: BridgeConfiguration) -> [String] {
        let passwords = configuration.accounts.keys.sorted().compactMap { name in
            configuration.accounts[name]?.password.exposure().map { "accounts.\(name): \($0)" }
        }
        let headlines = configuration.channels.filter { channel in
            channel.deliveryType == .headline
                && channel.members.contains { $0.room == nil && $0.direction.receives && configuration.accounts[$0.endpoint.transport] != nil }
        }.map { channel in
            "channels.\(channel.name): type = \"headline\" to XMPP contacts: offline phones will not get these (a headline is dropped when no client of the recipient is online); use \"chat\""
        }
        return passwords + headlines
    }

    /// What `check` prints for a valid file: the settings, then each account, local and
    /// channel on its own line.
    static func summary(_ configuration: BridgeConfiguration) -> [String] {
        let settings = configuration.settings
        var lines = [
            "\(configuration.file): ok",
            "bridge: id \(settings.bridgeID), state \(settings.statePath), control socket \(settings.controlSocketPath), batch \(settings.deliveryBatchSize)"
                + (settings.metricsListen.map { ", metrics \($0)" } ?? ""),
            "accounts: \(configuration.accounts.count)",
        ]
        for name in configuration.accounts.keys.sorted() {
            guard let account = configuration.accounts[name] else { continue }
            lines.append("  \(name): \(account.client.jid)")
        }
        lines.append("locals: \(configuration.locals.count)")
        for name in configuration.locals.keys.sorted() {
            guard let local = configuration.locals[name] else { continue }
            let http = local.http.map { " \($0.listen), token: \($0.token.map { "\($0)" } ?? "none (local only)")" } ?? ""
            lines.append("  \(name): \(local.kind.rawValue)" + (local.path.map { " \($0)" } ?? "") + http)
        }
        lines.append("channels: \(configuration.channels.count)")
        for channel in configuration.channels {
            let members = channel.members.map { "\($0.endpoint) (\($0.direction.rawValue))" }.joined(separator: ", ")
            lines.append("  \(channel.name): \(channel.members.count) member\(channel.members.count == 1 ? "" : "s"), \(channel.deliveryType.rawValue): \(members)")
        }
        return lines
    }
}
