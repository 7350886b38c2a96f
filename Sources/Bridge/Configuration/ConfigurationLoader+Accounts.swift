import Foundation
import OMEMO
import TOMLKit
import XMPP

extension ConfigurationLoader {
    /// One `[accounts.NAME]` table, or nil when it has a problem.
    package mutating func account(_ name: String, _ table: TOMLTable) -> AccountConfiguration? {
        let path = Self.path("accounts", name)
        self.rejectUnknownKeys(in: table, at: path, allowed: AccountConfiguration.keys)
        var jid: JID?
        switch self.string(table, "jid", path) {
        case .some(let text):
            do {
                let parsed = try JID(text)
                if parsed.localpart == nil {
                    self.problem("\(path).jid", "'\(text)' has no localpart", "an account JID looks like user@example.org")
                }
                jid = parsed
            } catch {
                self.problem("\(path).jid", "'\(text)' is not a valid JID: \(error)", "an account JID looks like user@example.org")
                jid = nil
            }
        case .none:
            self.problem("\(path).jid", "is missing", "add jid = \"user@example.org\"")
            jid = nil
        }
        if let resource = self.string(table, "resource", path) {
            jid = self.applyResource(resource, to: jid, at: "\(path).resource")
        }
        var sources: [PasswordSource] = []
        if let file = self.string(table, "password_file", path) {
            let resolved = self.resolve(file)
            if !FileManager.default.isReadableFile(atPath: resolved) {
                self.problem("\(path).password_file", "cannot read \(resolved)", "create it with the password, mode 0600")
            }
            sources.append(.file(resolved))
        }
        if let variable = self.string(table, "password_env", path) { sources.append(.environment(variable)) }
        if let command = self.string(table, "password_command", path) { sources.append(.command(command)) }
        if sources.count != 1 {
            self.problem(path, sources.isEmpty ? "has no password source" : "has more than one password source", "set exactly one of password_file, password_env, password_command")
        }
        let host = self.string(table, "host", path)
        let port = self.integer(table, "port", path, in: 1...65535, hint: "e.g. port = 5222")
        var tlsMode = TLSMode.startTLS
        if let text = self.string(table, "tls", path) {
            if let mode = TLSMode(rawValue: text) {
                tlsMode = mode
            } else {
                self.problem("\(path).tls", "unknown TLS mode '\(text)'", "one of: " + TLSMode.allCases.map(\.rawValue).joined(separator: ", "))
            }
        }
        let caFile = self.string(table, "ca_file", path).map(self.resolve)
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            self.problem("\(path).ca_file", "cannot read \(caFile)", "a PEM file with the CA certificates to trust")
        }
        let insecure = self.flag(table, "insecure", path) ?? false
        var policy = SessionStateMachine<ContinuousClock.Instant>.SubscriptionPolicy.acceptKnown
        if let text = self.string(table, "subscription_policy", path) {
            if let parsed = SessionStateMachine<ContinuousClock.Instant>.SubscriptionPolicy(rawValue: text) {
                policy = parsed
            } else {
                self.problem("\(path).subscription_policy", "unknown policy '\(text)'", "one of: manual, accept-known, accept-all")
            }
        }
        let streamManagement = self.flag(table, "stream_management", path)
        let maxStanzaBytes = self.integer(table, "max_stanza_bytes", path, in: 4_096...16_777_216, hint: "the server's stanza size limit in bytes, e.g. 65536")
        var catchUp: Bool?
        if let text = self.string(table, "catch_up", path) {
            switch text {
            case "mam": catchUp = true
            case "off": catchUp = false
            default: self.problem("\(path).catch_up", "unknown catch-up '\(text)'", "one of: mam, off")
            }
        }
        let maxAge = self.age(table, "catch_up_max_age", path)
        let roomPing = self.age(table, "room_ping_interval", path)
        let roomRejoin = self.age(table, "room_rejoin_delay", path)
        let ackTimeout = self.age(table, "ack_timeout", path)
        let profile = self.profile(table, path)
        let omemo = self.flag(table, "omemo", path)
        var omemoTrust: OMEMOTrust.Policy?
        if let text = self.string(table, "omemo_trust", path) {
            omemoTrust = OMEMOTrust.Policy(rawValue: text)
            if omemoTrust == nil { self.problem("\(path).omemo_trust", "unknown trust '\(text)'", "one of: blind, manual") }
        }
        var login: AccountConfiguration.LoginPolicy?
        if let text = self.string(table, "login", path) {
            login = AccountConfiguration.LoginPolicy(rawValue: text)
            if login == nil {
                self.problem("\(path).login", "unknown login '\(text)'", "one of: " + AccountConfiguration.LoginPolicy.allCases.map(\.rawValue).joined(separator: ", "))
            }
        }
        guard let jid, let source = sources.first, sources.count == 1 else { return nil }
        let client = XMPPClientConfiguration(
            jid: jid, tlsMode: tlsMode,
            tls: TLSConfiguration(certificateVerification: insecure ? .insecureNoVerification : .full, additionalTrustRootsFile: caFile),
            host: host, port: port
        )
        var account = AccountConfiguration(name: name, client: client, password: source, subscriptionPolicy: policy)
        if let maxStanzaBytes { account.maxStanzaBytes = maxStanzaBytes }
        if let streamManagement { account.streamManagement = streamManagement }
        if let catchUp { account.catchUp = catchUp }
        if let maxAge { account.catchUpMaxAge = maxAge == .zero ? nil : maxAge }
        if let roomPing, roomPing != .zero { account.roomTimings.pingInterval = roomPing }
        if let roomRejoin, roomRejoin != .zero { account.roomTimings.rejoinAfterKick = roomRejoin }
        if let ackTimeout { account.acknowledgementTimeout = ackTimeout }
        account.profile = profile
        if let omemo { account.omemo = omemo }
        if let omemoTrust { account.omemoTrust = omemoTrust }
        if let login { account.login = login }
        return account
    }

    /// `nick` and `avatar` (a PNG or JPEG file of at most 64 KiB, read and checked here so
    /// `check` names a bad one).
    private mutating func profile(_ table: TOMLTable, _ path: String) -> OwnProfile {
        var profile = OwnProfile()
        if let nick = self.string(table, "nick", path) {
            let trimmed = nick.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || trimmed.count > 200 || trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                self.problem("\(path).nick", "must be 1 to 200 characters without control characters", "e.g. nick = \"Ops bridge\"")
            } else {
                profile.nick = trimmed
            }
        }
        if let file = self.string(table, "avatar", path) {
            let resolved = self.resolve(file)
            let size = ((try? FileManager.default.attributesOfItem(atPath: resolved))?[.size] as? NSNumber)?.intValue
            if let size, size > Avatar.maximumBytes {
                self.problem("\(path).avatar", "\(resolved): \(Avatar.Problem.tooLarge(bytes: size, limit: Avatar.maximumBytes))", "a PNG or JPEG of at most 64 KiB, e.g. 96×96 pixels")
            } else if let data = FileManager.default.contents(atPath: resolved) {
                do {
                    profile.avatar = try Avatar(bytes: Array(data))
                } catch {
                    self.problem("\(path).avatar", "\(resolved): \(error)", "a PNG or JPEG of at most 64 KiB, e.g. 96×96 pixels")
                }
            } else {
                self.problem("\(path).avatar", "cannot read \(resolved)", "a PNG or JPEG of at most 64 KiB, readable by the bridge")
            }
        }
        return profile
    }

    /// A period such as "90s", "30m", "12h" or "7d"; "unlimited" reads as zero.
    package mutating func age(_ table: TOMLTable, _ key: String, _ path: String) -> Duration? {
        guard let text = self.string(table, key, path) else { return nil }
        if text == "unlimited" { return .zero }
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Int64(text.dropLast()), count > 0, count <= 36_500 * 86_400 / unit else {
            self.problem("\(path).\(key)", "'\(text)' is not a period", "a number with s, m, h or d, e.g. \"7d\", or \"unlimited\"")
            return nil
        }
        return .seconds(count * unit)
    }

    /// The account JID with the `resource` key's resourcepart (RFC 7622 §3.4), which must
    /// be valid and agree with a resource already written in `jid`.
    private mutating func applyResource(_ resource: String, to jid: JID?, at path: String) -> JID? {
        let prepared: String?
        do {
            prepared = try JID(domainpart: "resource.invalid", resourcepart: resource).resourcepart
        } catch {
            self.problem(path, "'\(resource)' is not a valid resource: \(error)", "a resource is a short non-empty label, e.g. resource = \"bridge\"")
            return jid
        }
        guard let jid else { return nil }
        if let existing = jid.resourcepart, existing != prepared {
            self.problem(path, "'\(resource)' conflicts with the resource '\(existing)' in jid", "set the resource in one place: in jid or in resource")
            return jid
        }
        return try? jid.withResource(resource)
    }
}
