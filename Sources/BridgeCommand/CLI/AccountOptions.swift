import Bridge
import ArgumentParser
import XMPP

/// Command-line options that describe one account to connect: `--account NAME` from
/// `bridge.toml`, or `--jid` with a password source and connection options.
struct AccountOptions: ParsableArguments {
    @Option(help: "Use this account from the configuration file ([accounts.NAME]).")
    var account: String?

    @Option(help: "The configuration file for --account (default: $XDG_CONFIG_HOME/xmpp-bridge/bridge.toml, ~/.config/xmpp-bridge/bridge.toml, /etc/xmpp-bridge/bridge.toml).")
    var config: String?

    @Option(help: "The account's JID (a resource, if given, is requested at bind time).")
    var jid: String?

    @Option(help: "Read the password from this file (its whole content, one trailing newline removed).")
    var passwordFile: String?

    @Option(help: "Read the password from this environment variable.")
    var passwordEnv: String?

    @Option(help: "Run this shell command and use its output as the password.")
    var passwordCommand: String?

    @Option(help: "Connect to this host instead of looking up SRV records.")
    var host: String?

    @Option(help: "Port for --host (default 5222, or 5223 with --tls-mode direct).")
    var port: Int?

    @Option(help: "starttls (default), direct (XEP-0368), or plaintext-loopback (test servers on 127.0.0.1 only).")
    var tlsMode: String = TLSMode.startTLS.rawValue

    @Option(help: "Trust the CA certificates in this PEM file as well as the system store.")
    var caFile: String?

    @Flag(help: "Do not verify the server certificate (logged as a warning on every connect).")
    var insecure = false

    /// The account and its password, read now; an unreadable password exits with status 2.
    func load() throws -> (client: XMPPClientConfiguration, password: String, policy: SessionStateMachine<ContinuousClock.Instant>.SubscriptionPolicy) {
        let (client, source, policy) = try self.resolve()
        do {
            return (client, try source.read(), policy)
        } catch {
            CommandLineOutput.error("\(error)")
            throw ExitStatus.configuration.exitCode
        }
    }

    /// The account to use: from the configuration file, or from the command line.
    func resolve() throws -> (client: XMPPClientConfiguration, password: PasswordSource, policy: SessionStateMachine<ContinuousClock.Instant>.SubscriptionPolicy) {
        if let name = self.account {
            guard self.jid == nil else { throw ValidationError("give either --account or --jid, not both") }
            var loader = ConfigurationLoader(file: self.config ?? ConfigurationLoader.defaultFile())
            let accounts: [String: AccountConfiguration]
            do {
                accounts = try loader.load()
            } catch {
                CommandLineOutput.error("\(error)")
                throw ExitStatus.configuration.exitCode
            }
            guard let account = accounts[name] else {
                CommandLineOutput.error("no account '\(name)' in \(loader.file); known: \(accounts.keys.sorted().joined(separator: ", "))")
                throw ExitStatus.configuration.exitCode
            }
            return (account.client, account.password, account.subscriptionPolicy)
        }
        guard self.jid != nil else { throw ValidationError("give --account NAME or --jid JID") }
        return (try self.clientConfiguration(), try self.passwordSource(), .acceptKnown)
    }

    private func passwordSource() throws(ValidationError) -> PasswordSource {
        let sources: [PasswordSource] =
            [passwordFile.map(PasswordSource.file), passwordEnv.map(PasswordSource.environment), passwordCommand.map(PasswordSource.command)]
            .compactMap { $0 }
        guard sources.count == 1, let source = sources.first else {
            throw ValidationError("give exactly one of --password-file, --password-env, --password-command")
        }
        return source
    }

    private func clientConfiguration() throws(ValidationError) -> XMPPClientConfiguration {
        let text = self.jid ?? ""
        let parsed: JID
        do {
            parsed = try JID(text)
        } catch {
            throw ValidationError("invalid --jid \(text): \(error)")
        }
        guard parsed.localpart != nil else { throw ValidationError("--jid needs a localpart (user@domain)") }
        guard let mode = TLSMode(rawValue: self.tlsMode) else {
            throw ValidationError("--tls-mode must be one of: " + TLSMode.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return XMPPClientConfiguration(
            jid: parsed,
            tlsMode: mode,
            tls: TLSConfiguration(
                certificateVerification: self.insecure ? .insecureNoVerification : .full,
                additionalTrustRootsFile: self.caFile
            ),
            host: self.host,
            port: self.port
        )
    }
}
