import Bridge
import ArgumentParser
import Foundation
import XMPP

/// `xmpp-bridge login`: connect, authenticate and bind one account, report how, and leave.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Check that an account can log in (DNS, TLS, SASL, resource binding).",
        discussion: ExitStatus.helpText
    )

    @OptionGroup var account: AccountOptions
    @OptionGroup var log: LogOptions

    func run() async throws {
        let logger = try self.log.makeLogger("xmpp-bridge.login")
        let (configuration, password, _) = try self.account.load()
        do throws(XMPPClientError) {
            let connection = try await XMPPClient(logger: logger).connect(configuration: configuration, password: password)
            CommandLineOutput.line("logged in as \(connection.jid) via \(connection.target) using \(connection.mechanism?.rawValue ?? "?")")
            await connection.close()
        } catch {
            CommandLineOutput.error("\(error)")
            throw ExitStatus(error).exitCode
        }
    }
}
