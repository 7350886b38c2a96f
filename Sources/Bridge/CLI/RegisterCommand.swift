import ArgumentParser
import Foundation
import XMPP

/// `xmpp-bridge register`: create an account with in-band registration (XEP-0077).
struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Create the account on its server with in-band registration, where the server allows it.",
        discussion: ExitStatus.helpText
    )

    @OptionGroup var account: AccountOptions
    @OptionGroup var log: LogOptions

    func run() async throws {
        let logger = try self.log.makeLogger("xmpp-bridge.register")
        let (configuration, source) = try self.account.resolve()
        let password: String
        do {
            password = try source.read()
        } catch {
            CommandLineOutput.error("\(error)")
            throw ExitStatus.configuration.exitCode
        }
        do throws(XMPPClientError) {
            try await XMPPClient(logger: logger).register(configuration: configuration, password: password)
            CommandLineOutput.line("registered \(configuration.jid.bare)")
        } catch {
            switch error {
            case .registrationFailed(let condition, _) where condition == "conflict":
                CommandLineOutput.error("\(configuration.jid.bare) already exists")
            case .registrationFailed(let condition, _) where condition == "not-offered" || condition == "not-allowed":
                CommandLineOutput.error("\(configuration.jid.domainpart) does not allow in-band registration")
            default:
                CommandLineOutput.error("\(error)")
            }
            throw ExitStatus(error).exitCode
        }
    }
}
