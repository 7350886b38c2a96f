import Bridge
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
        let (configuration, password, _) = try self.account.load()
        do throws(XMPPClientError) {
            try await XMPPClient(logger: logger).register(configuration: configuration, password: password)
            CommandLineOutput.line("registered \(configuration.jid.bare)")
        } catch {
            if case .registrationFailed(let condition, _) = error, condition == "conflict" {
                CommandLineOutput.error("\(configuration.jid.bare) already exists")
            } else if case .registrationFailed(let condition, _) = error, condition == "not-offered" || condition == "not-allowed" {
                CommandLineOutput.error("\(configuration.jid.domainpart) does not allow in-band registration")
            } else {
                CommandLineOutput.error("\(error)")
            }
            throw ExitStatus(error).exitCode
        }
    }
}
