import ArgumentParser
import Bridge
import Foundation

/// `xmpp-bridge omemo fingerprints|trust|distrust` (issue 41): an OMEMO account's device and
/// its contacts' devices, and trust decided by hand, through the running daemon's control
/// socket, or on the state when none runs.
struct OMEMOCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "omemo",
        abstract: "Show OMEMO fingerprints; trust or distrust a contact's device.",
        subcommands: [Fingerprints.self, Trust.self, Distrust.self]
    )

    struct Fingerprints: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The account's own device and fingerprint, then each contact device with its fingerprint and trust.")
        @Option(help: "The configuration file.") var config: String?
        @Argument(help: "An account with omemo = true.") var account: String
        @Flag(help: "JSON output.") var json = false

        func run() async throws {
            let response = try await RouteCommand.send(ControlRequest(op: .omemoFingerprints, transport: self.account), config: self.config)
            guard let listing = response.omemo else {
                CommandLineOutput.error("the bridge's answer has no OMEMO listing")
                throw ExitStatus.protocolError.exitCode
            }
            if self.json {
                try CommandLineOutput.json(listing)
                return
            }
            CommandLineOutput.line("\(listing.account)  device \(listing.device)  \(listing.fingerprint)  (this bridge)")
            if listing.devices.isEmpty { CommandLineOutput.line("no contact devices known yet") }
            for device in listing.devices {
                let id = device.device.map(String.init) ?? "-"
                CommandLineOutput.line("\(device.jid)  device \(id)  \(device.fingerprint ?? "(key not seen yet)")  \(device.trust ?? "-")")
            }
        }
    }

    struct Decision: ParsableArguments {
        @Option(help: "The configuration file.") var config: String?
        @Argument(help: "An account with omemo = true.") var account: String
        @Argument(help: "The contact's bare JID.") var jid: String
        @Argument(parsing: .remaining, help: "The fingerprint as clients show it (spaces, colons, a leading 05 accepted).") var fingerprint: [String]

        func send(_ op: ControlRequest.Operation) async throws -> Int {
            var request = ControlRequest(op: op, transport: self.account, address: self.jid)
            request.fingerprint = self.fingerprint.joined()
            return try await RouteCommand.send(request, config: self.config).count ?? 0
        }
    }

    struct Trust: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Verify a contact's device by its fingerprint: messages are encrypted to it and its messages relayed.")
        @OptionGroup var decision: Decision

        func run() async throws {
            let changed = try await self.decision.send(.omemoTrust)
            CommandLineOutput.line(changed > 0 ? "verified" : "already verified")
        }
    }

    struct Distrust: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Refuse a contact's device by its fingerprint: nothing is encrypted to it, its messages are not relayed.")
        @OptionGroup var decision: Decision

        func run() async throws {
            let changed = try await self.decision.send(.omemoDistrust)
            CommandLineOutput.line(changed > 0 ? "distrusted" : "already distrusted")
        }
    }
}
