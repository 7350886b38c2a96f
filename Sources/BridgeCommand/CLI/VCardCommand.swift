import Bridge
import ArgumentParser
import Foundation
import XMPP

/// `xmpp-bridge vcard ACCOUNT [JID]`: the account's own vCard, or a contact's, as the
/// account reads it (XEP-0054 §3.1, §3.2): nick, full name, avatar hash and type.
struct VCardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vcard",
        abstract: "Show an account's own vCard or a contact's: nick, full name, avatar hash and type.",
        discussion: ExitStatus.helpText
    )

    @Argument(help: "The account ([accounts.NAME]) that reads it.")
    var account: String
    @Argument(help: "Whose vCard (a bare JID); default: the account's own.")
    var jid: String?
    @Option(help: "The configuration file.")
    var config: String?
    @Flag(help: "One JSON object.")
    var json = false
    @OptionGroup var log: LogOptions

    /// What `--json` prints.
    struct Output: Encodable {
        var jid: String
        var found: Bool
        var nick: String?
        var fullName: String?
        var avatarType: String?
        var avatarHash: String?
    }

    func validate() throws {
        if let jid { guard (try? JID(jid)) != nil else { throw ValidationError("'\(jid)' is not a JID") } }
    }

    func run() async throws {
        let logger = try self.log.makeLogger("xmpp-bridge.vcard")
        let options = try AccountOptions.parse(["--account", self.account] + (self.config.map { ["--config", $0] } ?? []))
        let session = try SessionRunner.makeSession(options, presence: nil, fetchRoster: false, reconnects: false, logger: logger)
        var events = session.events.makeAsyncIterator()
        let runner = try await SessionRunner.start(session, events: &events)
        let target = try self.jid.map { try JID($0).bare }
        let card: XMLElement?
        switch await session.vCard(of: target, timeout: .seconds(15)) {
        case .card(let found): card = found
        case .none: card = nil
        case .failed(let error):
            await runner.stop()
            CommandLineOutput.error("no vCard: \(error)")
            throw ExitStatus.connect.exitCode
        }
        let own = await session.boundJID?.bare.description ?? self.account
        await runner.stop()
        let summary = card.map(VCardSummary.init) ?? VCardSummary()
        let who = target?.description ?? own
        let found = card.map { !$0.elements.isEmpty } ?? false
        if self.json {
            try CommandLineOutput.json(
                Output(jid: who, found: found, nick: summary.nick, fullName: summary.fullName, avatarType: summary.photoType, avatarHash: summary.photoHash)
            )
            return
        }
        guard found else {
            CommandLineOutput.line("\(VisibleText.escaped(who)): no vCard")
            return
        }
        CommandLineOutput.line(VisibleText.escaped(who))
        CommandLineOutput.line("  nick       \(summary.nick.map { VisibleText.escaped($0) } ?? "-")")
        CommandLineOutput.line("  full name  \(summary.fullName.map { VisibleText.escaped($0) } ?? "-")")
        let avatar = summary.photoHash.map { "\(VisibleText.escaped(summary.photoType ?? "?")) sha1 \($0)" } ?? "-"
        CommandLineOutput.line("  avatar     \(avatar)")
    }
}
