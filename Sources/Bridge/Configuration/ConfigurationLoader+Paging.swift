import BridgeRelay
import Foundation
import TOMLKit
import TransportCore
import XMPP

extension ConfigurationLoader {
    package static let pagingKeys = ["alertmanager_url", "ack", "repeat", "escalate", "escalate_min_priority", "dedupe_window", "severity_priority", "max_per_minute"]
    /// A member's `quiet = { … }`, an escalation tier, and a tier's person.
    package static let quietKeys = ["hours", "tz", "min_priority"]
    package static let tierKeys = ["after", "to"]
    package static let personKeys = ["account", "jid"]
    private static let quietExample = "quiet = { hours = \"22:00-07:00\", tz = \"Europe/Berlin\", min_priority = 5 }"
    private static let escalateExample = "escalate = [ { after = \"5m\", to = [ { account = \"work\", jid = \"bob@work.example\" } ] } ]"

    /// A channel's paging settings (issue 24); every channel has them (the de-duplication
    /// window and severities apply to all), and paging is on when any paging key is set.
    package mutating func pagingPolicy(_ table: TOMLTable, channel: String, accounts: [String: AccountConfiguration]) -> PagingPolicy {
        let path = Self.path("channels", channel)
        var policy = PagingPolicy()
        policy.isPaging = ["alertmanager_url", "ack", "repeat", "escalate", "escalate_min_priority"].contains { table[$0] != nil }
        if let url = self.nonEmptyString(table, "alertmanager_url", path, hint: "Alertmanager's base URL, e.g. \"http://127.0.0.1:9093\"") {
            do {
                _ = try HTTPURL(url, allowInsecureHTTP: true)
                policy.alertmanagerURL = url.hasSuffix("/") ? String(url.dropLast()) : url
            } catch {
                self.problem("\(path).alertmanager_url", "'\(url)' is not an http(s) URL: \(error)", "Alertmanager's base URL, e.g. \"http://127.0.0.1:9093\"")
            }
        }
        if let value = table["ack"] {
            let hint = "a list of: " + PagingPolicy.AckKind.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            if let array = value.array {
                var kinds: Set<PagingPolicy.AckKind> = []
                for (index, element) in array.enumerated() {
                    guard let kind = element.string.flatMap(PagingPolicy.AckKind.init(rawValue:)) else {
                        self.problem("\(path).ack[\(index)]", "is not a way to acknowledge", hint)
                        continue
                    }
                    kinds.insert(kind)
                }
                policy.ackKinds = kinds
            } else {
                self.problem("\(path).ack", "must be an array", hint)
            }
        }
        if table["repeat"] != nil, let repeatInterval = self.age(table, "repeat", path) {
            if repeatInterval < .seconds(1) {
                self.problem("\(path).repeat", "must be a period of at least 1s", "e.g. repeat = \"10m\"")
            } else {
                policy.repeatInterval = repeatInterval
            }
        }
        if let minimum = self.integer(table, "escalate_min_priority", path, in: 1...5, hint: "1 (every alert) to 5 (urgent only); default 4") {
            policy.escalationMinimumPriority = minimum
        }
        if table["dedupe_window"] != nil, let window = self.age(table, "dedupe_window", path) {
            if window > .seconds(Int64(NotificationDedupe.longestWindow)) {
                self.problem("\(path).dedupe_window", "is longer than a day", "e.g. dedupe_window = \"5m\" (the default)")
            } else {
                policy.dedupeWindow = window
            }
        }
        if let value = table["severity_priority"] {
            if let mapping = value.table {
                var severities: [String: Int] = [:]
                for key in mapping.keys {
                    if let priority = self.integer(mapping, key, "\(path).severity_priority", in: 1...5, hint: "a priority from 1 to 5") {
                        severities[key.lowercased()] = priority
                    }
                }
                policy.severityPriority = severities
            } else {
                self.problem("\(path).severity_priority", "must be a table", "severity_priority = { critical = 5, warning = 3, info = 2 }")
            }
        }
        policy.maxPerMinute = self.integer(table, "max_per_minute", path, in: 1...100_000, hint: "messages a minute to each target, e.g. 20; the rest go as one digest")
        for (index, element) in (table["members"]?.array ?? []).enumerated() {
            guard let member = element.table, let value = member["quiet"] else { continue }
            let memberPath = "\(path).members[\(index)]"
            guard let account = member["account"]?.string, let jid = member["jid"]?.string else {
                self.problem("\(memberPath).quiet", "applies only to a contact member", "quiet hours are for people: { account = …, jid = …, \(Self.quietExample) }")
                continue
            }
            if let quiet = self.quietHours(value, at: "\(memberPath).quiet") {
                policy.quiet[Endpoint(transport: account, address: jid.lowercased())] = quiet
            }
        }
        if let value = table["escalate"] {
            if let array = value.array {
                for (index, element) in array.enumerated() {
                    if let tier = self.escalationTier(element.tomlValue, at: "\(path).escalate[\(index)]", accounts: accounts) { policy.tiers.append(tier) }
                }
            } else {
                self.problem("\(path).escalate", "must be an array of tiers", Self.escalateExample)
            }
        }
        return policy
    }

    /// `{ hours = "22:00-07:00", tz = "Europe/Berlin", min_priority = 5 }`.
    private mutating func quietHours(_ value: TOMLValueConvertible, at path: String) -> QuietHours? {
        guard let table = value.tomlValue.table else {
            self.problem(path, "must be a table", Self.quietExample)
            return nil
        }
        self.rejectUnknownKeys(in: table, at: path, allowed: Self.quietKeys)
        guard let text = self.string(table, "hours", path) else {
            self.problem("\(path).hours", "is missing", Self.quietExample)
            return nil
        }
        guard let hours = QuietHours.parse(hours: text) else {
            self.problem("\(path).hours", "'\(text)' is not a span of hours", "two 24-hour times, e.g. hours = \"22:00-07:00\"")
            return nil
        }
        let zoneName = self.string(table, "tz", path) ?? "UTC"
        guard let zone = TimeZone(identifier: zoneName) else {
            self.problem("\(path).tz", "unknown time zone '\(zoneName)'", "an IANA name, e.g. tz = \"Europe/Berlin\" (default UTC)")
            return nil
        }
        let minimum = self.integer(table, "min_priority", path, in: 1...5, hint: "deliveries below it wait; default 5") ?? 5
        return QuietHours(start: hours.start, end: hours.end, timeZone: zone, minimumPriority: minimum)
    }

    /// `{ after = "5m", to = [ { account = "work", jid = "bob@work.example" } ] }`.
    private mutating func escalationTier(_ value: TOMLValue, at path: String, accounts: [String: AccountConfiguration]) -> PagingPolicy.Tier? {
        guard let table = value.table else {
            self.problem(path, "must be a table", Self.escalateExample)
            return nil
        }
        self.rejectUnknownKeys(in: table, at: path, allowed: Self.tierKeys)
        guard table["after"] != nil else {
            self.problem("\(path).after", "is missing", "how long nobody acknowledged before this tier is paged, e.g. after = \"5m\"")
            return nil
        }
        guard let after = self.age(table, "after", path) else { return nil }
        guard let people = table["to"]?.array, !people.isEmpty else {
            self.problem("\(path).to", "must be a non-empty array of contacts", Self.escalateExample)
            return nil
        }
        var targets: [Endpoint] = []
        for (index, element) in people.enumerated() {
            let personPath = "\(path).to[\(index)]"
            guard let person = element.table else {
                self.problem(personPath, "must be a table", "{ account = \"work\", jid = \"bob@work.example\" }")
                continue
            }
            self.rejectUnknownKeys(in: person, at: personPath, allowed: Self.personKeys)
            guard let account = self.string(person, "account", personPath), let text = self.string(person, "jid", personPath) else {
                self.problem(personPath, "needs account and jid", "{ account = \"work\", jid = \"bob@work.example\" }")
                continue
            }
            guard accounts[account] != nil else {
                self.problem("\(personPath).account", "no account '\(account)'", "known accounts: " + accounts.keys.sorted().joined(separator: ", "))
                continue
            }
            guard let jid = try? JID(text), !jid.isFull, jid.localpart != nil else {
                self.problem("\(personPath).jid", "'\(text)' is not a bare JID", "a contact's bare JID, e.g. bob@work.example")
                continue
            }
            targets.append(Endpoint(transport: account, address: "\(jid)".lowercased()))
        }
        return targets.isEmpty ? nil : PagingPolicy.Tier(after: after, to: targets)
    }
}
