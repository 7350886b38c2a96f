import Bridge
import ArgumentParser

/// The `xmpp-bridge` command line.
struct XMPPBridgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "xmpp-bridge",
        abstract: "Link XMPP accounts to each other and to the local machine.",
        discussion: ExitStatus.helpText,
        version: BuildInfo.versionLine,
        subcommands: [DemoCommand.self, RunCommand.self, RouteCommand.self, RosterCommand.self, StatusCommand.self, RoomsCommand.self, GatewayCommand.self, QueueCommand.self, HistoryCommand.self, OMEMOCommand.self, VCardCommand.self, ReconnectCommand.self, StateCommand.self, SendCommand.self, ListenCommand.self, LoginCommand.self, RegisterCommand.self, CheckCommand.self]
    )
}

// A fuzzing build (`scripts/fuzz.sh`) gets its entry point from libFuzzer instead.
#if !FUZZING
@main extension XMPPBridgeCommand {}
#endif
