import Bridge
import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import TransportCore
import XMPP

/// `xmpp-bridge run`: the daemon. Every account and local transport, its delivery worker
/// and the control socket run as Services under one ServiceGroup. SIGTERM/SIGINT stop
/// input and close cleanly (queued deliveries stay in the state database); SIGHUP reloads
/// the configuration, keeping connections whose settings did not change.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the bridge: all accounts, local transports and channels of the configuration file.",
        discussion: ExitStatus.helpText
    )

    @Option(help: "The configuration file (default: $XDG_CONFIG_HOME/xmpp-bridge/bridge.toml, ~/.config/xmpp-bridge/bridge.toml, /etc/xmpp-bridge/bridge.toml).")
    var config: String?

    @OptionGroup var log: LogOptions

    func run() async throws {
        // Files and sockets we create are private from the start (no window before chmod),
        // and a closed stdout reader is an error to handle, not a fatal signal.
        umask(0o077)
        signal(SIGPIPE, SIG_IGN)
        let logger = try self.log.makeLogger("xmpp-bridge")
        let file = self.config ?? ConfigurationLoader.defaultFile()
        let configuration = try Self.load(file)
        let process: BridgeProcess
        do {
            process = try await BridgeProcess.make(configuration: configuration, logger: logger)
        } catch {
            CommandLineOutput.error("\(error)")
            throw ExitStatus.configuration.exitCode
        }
        let runtime = process.runtime
        // Reloads run one at a time, in order, from a single consumer.
        let (reloads, requestReload) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let reloader = Task {
            for await _ in reloads {
                logger.notice("SIGHUP: reloading configuration", metadata: ["file": "\(file)"])
                var loader = ConfigurationLoader(file: file)
                do {
                    let new = try loader.loadBridge()
                    await runtime.reload(new)
                } catch {
                    logger.error("reload refused; keeping the running configuration", metadata: ["problems": "\(error)"])
                }
            }
        }
        defer { reloader.cancel() }
        let reload = SignalWatcher(signals: [SIGHUP]) {
            requestReload.yield()
        }
        defer { reload.cancel() }
        logger.info("bridge running", metadata: ["accounts": "\(configuration.accounts.count)", "locals": "\(configuration.locals.count)", "channels": "\(configuration.channels.count)"])
        try await process.run()
        logger.info("bridge stopped", metadata: ["queued": "\((try? process.store.pendingCount(transport: nil)) ?? 0)"])
    }

    static func load(_ file: String) throws -> BridgeConfiguration {
        var loader = ConfigurationLoader(file: file)
        do {
            return try loader.loadBridge()
        } catch {
            CommandLineOutput.error("\(error)")
            throw ExitStatus.configuration.exitCode
        }
    }
}
