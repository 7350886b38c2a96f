import AccountTransport
import Foundation
import TOMLKit
import TransportCore
import XMPP

extension ConfigurationLoader {
    /// What channel members may name: every declared account and local (so a member of a
    /// broken one is not also reported as dangling), and the parsed ones for cross-checks.
    package struct MemberReferences {
        package var accountNames: Set<String>
        package var localNames: Set<String>
        package var accounts: [String: AccountConfiguration]
        package var locals: [String: LocalConfiguration]
        /// Locals that some member names, filled while channels are read.
        package var referencedLocals: Set<String> = []
        /// Each account's contacts' `encryption` (issue 41), the strictest of their
        /// memberships, filled while channels are read.
        package var encryption: [String: [String: ContactEncryption]] = [:]

        package init(accountNames: Set<String>, localNames: Set<String>, accounts: [String: AccountConfiguration], locals: [String: LocalConfiguration], referencedLocals: Set<String> = []) {
            self.accountNames = accountNames
            self.localNames = localNames
            self.accounts = accounts
            self.locals = locals
            self.referencedLocals = referencedLocals
        }
    }

    package static let channelKeys = [
        "members", "format", "type", "presence", "subject", "occupant_events", "template_file", "receipts", "reupload", "reupload_max_bytes", "archive",
        "archive_days",
    ]
        + Self.pagingKeys + Self.filterKeys
    package static let memberKeys = ["account", "jid", "room", "nick", "password_file", "password_env", "local", "direction", "quiet", "encryption"]
    private static let membersExample = "members = [ { account = \"work\", jid = \"alice@example.org\" }, { local = \"ops\", direction = \"in\" } ]"

    /// One `[channels.NAME]` table, or nil when it has a problem.
    package mutating func channel(_ name: String, _ table: TOMLTable, references: inout MemberReferences) -> RelayChannel? {
        let path = Self.path("channels", name)
        self.rejectUnknownKeys(in: table, at: path, allowed: Self.channelKeys)
        var valid = true
        var members: [ChannelMember] = []
        var firstIndex: [Endpoint: Int] = [:]
        if let value = table["members"] {
            if let array = value.array {
                if array.isEmpty {
                    self.problem("\(path).members", "is empty", "a channel joins endpoints: \(Self.membersExample)")
                    valid = false
                }
                for (index, element) in array.enumerated() {
                    let memberPath = "\(path).members[\(index)]"
                    guard let member = self.member(element.tomlValue, at: memberPath, references: &references) else {
                        valid = false
                        continue
                    }
                    if let first = firstIndex[member.endpoint] {
                        self.problem(memberPath, "repeats members[\(first)] (\(member.endpoint))", "list each endpoint once; direction = \"inout\" covers both ways")
                        valid = false
                        continue
                    }
                    firstIndex[member.endpoint] = index
                    members.append(member)
                }
            } else {
                self.problem("\(path).members", "must be an array of members", Self.membersExample)
                valid = false
            }
        } else {
            self.problem("\(path).members", "is missing", Self.membersExample)
            valid = false
        }
        let format = self.string(table, "format", path) ?? RelayChannel.defaultFormat
        var deliveryType = RelayChannel.DeliveryType.chat
        if table["type"] != nil {
            if let parsed: RelayChannel.DeliveryType = self.choice(table, "type", path, what: "message type") {
                deliveryType = parsed
            } else {
                valid = false
            }
        }
        let subject = self.flag(table, "subject", path) ?? false
        let occupants = self.flag(table, "occupant_events", path) ?? false
        var reupload: Int?
        if self.flag(table, "reupload", path) == true {
            reupload = self.integer(table, "reupload_max_bytes", path, in: 1...(1 << 40), hint: "a size in bytes, e.g. 104857600 (100 MiB)")
                ?? RelayChannel.defaultReuploadMaxBytes
        }
        guard valid else { return nil }
        var channel = RelayChannel(
            name: name, members: members, format: format, deliveryType: deliveryType, relaysSubject: subject, relaysOccupants: occupants
        )
        channel.reuploadMaxBytes = reupload
        channel.archives = self.flag(table, "archive", path) ?? true
        if let days = self.integer(table, "archive_days", path, in: 0...36_500, hint: "days to keep the archive, e.g. 90; 0 keeps it for ever") {
            channel.archiveDays = days
        }
        return channel
    }

    /// Whether `channel` relays presence: its `presence` key, else on for a 1:1 link.
    package mutating func relaysPresence(_ channel: RelayChannel, _ table: TOMLTable, accounts: Set<String>) -> Bool {
        self.flag(table, "presence", Self.path("channels", channel.name)) ?? Self.isOneToOneLink(channel, accounts: accounts)
    }

    /// Whether `channel` passes receipts and displayed markers back (issue 12): its
    /// `receipts` key, else on for a 1:1 link.
    package mutating func passesReceipts(_ channel: RelayChannel, _ table: TOMLTable, accounts: Set<String>) -> Bool {
        self.flag(table, "receipts", Self.path("channels", channel.name)) ?? Self.isOneToOneLink(channel, accounts: accounts)
    }

    /// Exactly two members, both accounts' contacts (no room, no local endpoint).
    package static func isOneToOneLink(_ channel: RelayChannel, accounts: Set<String>) -> Bool {
        channel.members.count == 2 && channel.members.allSatisfy { accounts.contains($0.endpoint.transport) && $0.room == nil }
    }

    /// One member: `{ account = "work", jid = "alice@example.org", direction = "inout" }` or
    /// `{ local = "ops", direction = "in" }`; nil when it has a problem.
    private mutating func member(_ value: TOMLValue, at path: String, references: inout MemberReferences) -> ChannelMember? {
        guard let table = value.table else {
            self.problem(path, "must be a table", "write { account = \"work\", jid = \"alice@example.org\" } or { local = \"ops\" }")
            return nil
        }
        let problemsBefore = self.problems.count
        self.rejectUnknownKeys(in: table, at: path, allowed: Self.memberKeys)
        let account = self.string(table, "account", path)
        let local = self.string(table, "local", path)
        // nil when written but not understood (already reported).
        // An input-only local (FIFO, HTTP) sends; everything else defaults to both ways.
        let inputOnly = local.flatMap { references.locals[$0]?.kind }.map { $0 == .fifo || $0 == .http } ?? false
        let direction: ChannelMember.Direction? =
            table["direction"] == nil ? (inputOnly ? .in : .inout) : self.choice(table, "direction", path, what: "direction")

        let endpoint: Endpoint?
        var room: RoomMembership?
        switch (table["account"] != nil, table["local"] != nil) {
        case (true, true):
            self.problem(path, "has both account and local", "a member is either an account's contact { account = …, jid = … } or a local { local = … }")
            endpoint = nil
        case (false, false):
            self.problem(path, "has neither account nor local", "a member is either an account's contact { account = …, jid = … } or a local { local = … }")
            endpoint = nil
        case (true, false) where table["room"] != nil:
            if table["jid"] != nil {
                self.problem(path, "has both jid and room", "a member is a contact { account = …, jid = … } or a room { account = …, room = … }")
            }
            if table["encryption"] != nil {
                self.problem("\(path).encryption", "does not apply to a room", "OMEMO in rooms is not supported; messages to rooms go unencrypted")
            }
            (endpoint, room) = account.map { self.roomEndpoint(account: $0, table, at: path, references: references) } ?? (nil, nil)
        case (true, false):
            for key in ["nick", "password_file", "password_env"] where table[key] != nil {
                self.problem("\(path).\(key)", "applies only to a room member", "remove \(key), or name the room: room = \"dev@muc.example.org\"")
            }
            endpoint = account.flatMap { self.accountEndpoint(account: $0, table, at: path, references: references) }
            if let account, let endpoint, let address = endpoint.address, let encryption = self.encryption(table, at: path, account: references.accounts[account]) {
                references.encryption[account, default: [:]][address] = max(references.encryption[account]?[address] ?? .none, encryption)
            }
        case (false, true):
            for key in ["jid", "room", "nick", "password_file", "password_env", "encryption"] where table[key] != nil {
                self.problem("\(path).\(key)", "does not apply to a local member", "only account members name a contact or room; remove \(key)")
            }
            if let local {
                references.referencedLocals.insert(local)
                endpoint = self.localEndpoint(local: local, direction: direction, at: path, references: references)
            } else {
                endpoint = nil
            }
        }
        guard let endpoint, let direction, self.problems.count == problemsBefore else { return nil }
        return ChannelMember(endpoint: endpoint, direction: direction, room: room)
    }

    /// A contact member's `encryption` (issue 41): `omemo`, `required` or `none`, the
    /// default `omemo` on an account with `omemo = true`; OMEMO needs such an account.
    private mutating func encryption(_ table: TOMLTable, at path: String, account: AccountConfiguration?) -> ContactEncryption? {
        guard let text = self.string(table, "encryption", path) else { return account?.omemo == true ? .omemo : nil }
        guard let encryption = ContactEncryption(rawValue: text) else {
            self.problem("\(path).encryption", "unknown encryption '\(text)'", "one of: omemo, required, none")
            return nil
        }
        if encryption != .none, let account, !account.omemo {
            self.problem("\(path).encryption", "is \(text), but \(Self.path("accounts", account.name)) is no OMEMO device", "set omemo = true on \(Self.path("accounts", account.name)), or remove encryption")
            return nil
        }
        return encryption
    }

    /// A room the account joins (XEP-0045): `room` a bare JID with a localpart, `nick` a
    /// valid resourcepart (RFC 7622 §3.4), at most one password source.
    private mutating func roomEndpoint(account: String, _ table: TOMLTable, at path: String, references: MemberReferences) -> (Endpoint?, RoomMembership?) {
        if !references.accountNames.contains(account) {
            self.problem("\(path).account", "no account '\(account)'", Self.knownNames(references.accountNames, kind: "accounts", section: "accounts", example: account))
        }
        guard let text = self.string(table, "room", path) else { return (nil, nil) }
        let jid: JID
        do {
            jid = try JID(text)
        } catch {
            self.problem("\(path).room", "'\(text)' is not a valid room JID: \(error)", "a room's bare JID, e.g. dev@muc.example.org")
            return (nil, nil)
        }
        if jid.isFull || jid.localpart == nil {
            let hint = jid.isFull ? "write room = \"\(jid.bare)\" and nick = \"\(jid.resourcepart ?? "")\"" : "a room JID is room@service, e.g. dev@muc.example.org"
            self.problem("\(path).room", "'\(text)' is not a room's bare JID", hint)
            return (nil, nil)
        }
        var membership = RoomMembership()
        if let nick = self.string(table, "nick", path) {
            if (try? JID(domainpart: "nick.invalid", resourcepart: nick)) == nil || nick.isEmpty {
                self.problem("\(path).nick", "'\(nick)' is not a valid nick", "a nick is a non-empty resourcepart (RFC 7622 §3.4), e.g. nick = \"bridge\"")
            }
            membership.nick = nick
        }
        if let file = self.string(table, "password_file", path) {
            let resolved = self.resolve(file)
            if !FileManager.default.isReadableFile(atPath: resolved) {
                self.problem("\(path).password_file", "cannot read \(resolved)", "create it with the room password, mode 0600")
            }
            membership.passwordFile = resolved
        }
        membership.passwordEnvironment = self.string(table, "password_env", path)
        if membership.passwordFile != nil, membership.passwordEnvironment != nil {
            self.problem(path, "has two room password sources", "set one of password_file, password_env")
        }
        return (Endpoint(transport: account, address: "\(jid)"), membership)
    }

    /// An account's contact: the account must exist and `jid` must be a bare JID other than
    /// the account's own.
    private mutating func accountEndpoint(account: String, _ table: TOMLTable, at path: String, references: MemberReferences) -> Endpoint? {
        if !references.accountNames.contains(account) {
            let hint =
                references.localNames.contains(account)
                ? "'\(account)' is a local; write local = \"\(account)\""
                : Self.knownNames(references.accountNames, kind: "accounts", section: "accounts", example: account)
            self.problem("\(path).account", "no account '\(account)'", hint)
        }
        guard let text = self.string(table, "jid", path) else {
            if table["jid"] == nil {
                self.problem("\(path).jid", "is missing", "an account member names the contact, e.g. jid = \"alice@example.org\"")
            }
            return nil
        }
        let jid: JID
        do {
            jid = try JID(text)
        } catch {
            self.problem("\(path).jid", "'\(text)' is not a valid JID: \(error)", "a contact's bare JID, e.g. alice@example.org")
            return nil
        }
        if jid.isFull {
            self.problem("\(path).jid", "'\(text)' is a full JID", "members are bare JIDs: write jid = \"\(jid.bare)\"")
            return nil
        }
        if let configuration = references.accounts[account], configuration.client.jid.bare == jid {
            self.problem("\(path).jid", "is \(Self.path("accounts", account))'s own JID", "an account cannot relay to itself; name a contact of the account")
            return nil
        }
        return Endpoint(transport: account, address: "\(jid)")
    }

    /// A local transport: it must exist, and a FIFO (input only) may only send.
    private mutating func localEndpoint(local: String, direction: ChannelMember.Direction?, at path: String, references: MemberReferences) -> Endpoint? {
        guard references.localNames.contains(local) else {
            let hint =
                references.accountNames.contains(local)
                ? "'\(local)' is an account; write account = \"\(local)\" with the contact's jid"
                : Self.knownNames(references.localNames, kind: "locals", section: "local", example: local)
            self.problem("\(path).local", "no local '\(local)'", hint)
            return nil
        }
        if let kind = references.locals[local]?.kind, kind == .fifo || kind == .http, let direction, direction != .in {
            let what = kind == .fifo ? "a FIFO" : "an http local"
            self.problem("\(path).direction", "\(Self.path("local", local)) is \(what), which is input only", "use direction = \"in\" (the default for it)")
            return nil
        }
        return Endpoint(transport: local)
    }

    /// A hint listing what a reference could have named.
    private static func knownNames(_ names: Set<String>, kind: String, section: String, example: String) -> String {
        names.isEmpty
            ? "no \(kind) are defined; add [\(Self.path(section, example))]"
            : "known \(kind): " + names.sorted().joined(separator: ", ")
    }
}
