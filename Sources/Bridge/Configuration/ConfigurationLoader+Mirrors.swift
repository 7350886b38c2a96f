import BridgeFeatures
import TOMLKit

extension ConfigurationLoader {
    /// `[[presence_mirror]]` entries; each `from` and `to` must be a different account, and an
    /// account can follow only one other.
    package mutating func presenceMirrors(_ value: TOMLValue?, accounts: Set<String>) -> [PresenceMirrorConfiguration] {
        var mirrors: [PresenceMirrorConfiguration] = []
        var targets: Set<String> = []
        for (path, table) in self.tableArray(value, section: "presence_mirror", example: "[[presence_mirror]]\nfrom = \"work\"\nto = \"home\"") {
            self.rejectUnknownKeys(in: table, at: path, allowed: PresenceMirrorConfiguration.keys)
            guard let (from, to) = self.accountPair(table, path, accounts: accounts) else { continue }
            guard targets.insert(to).inserted else {
                self.problem("\(path).to", "accounts.\(to) already follows another account's presence", "an account can mirror only one other")
                continue
            }
            mirrors.append(PresenceMirrorConfiguration(from: from, to: to))
        }
        return mirrors
    }

    /// `[[roster_mirror]]` entries.
    package mutating func rosterMirrors(_ value: TOMLValue?, accounts: Set<String>) -> [RosterMirrorConfiguration] {
        var mirrors: [RosterMirrorConfiguration] = []
        var pairs: Set<String> = []
        for (path, table) in self.tableArray(value, section: "roster_mirror", example: "[[roster_mirror]]\nfrom = \"work\"\nto = \"home\"") {
            self.rejectUnknownKeys(in: table, at: path, allowed: RosterMirrorConfiguration.keys)
            guard let (from, to) = self.accountPair(table, path, accounts: accounts) else { continue }
            var groups: Set<String>?
            if let value = table["groups"] {
                if let array = value.array, array.allSatisfy({ $0.tomlValue.string != nil }) {
                    groups = Set(array.compactMap { $0.tomlValue.string })
                } else {
                    self.problem("\(path).groups", "must be an array of group names", "e.g. groups = [\"Friends\", \"Work\"]")
                }
            }
            let twoWay = self.flag(table, "two_way", path) ?? false
            let subscribe = self.flag(table, "subscribe", path) ?? false
            let key = [from, to].sorted().joined(separator: "|")
            guard pairs.insert(key).inserted else {
                self.problem(path, "mirrors \(from) and \(to) again", "one [[roster_mirror]] per pair of accounts; use two_way = true for both directions")
                continue
            }
            mirrors.append(RosterMirrorConfiguration(from: from, to: to, groups: groups, twoWay: twoWay, subscribe: subscribe))
        }
        return mirrors
    }

    /// The tables of an array-of-tables section with their TOML paths (`roster_mirror[0]`).
    package mutating func tableArray(_ value: TOMLValue?, section: String, example: String) -> [(String, TOMLTable)] {
        guard let value else { return [] }
        guard let array = value.array else {
            self.problem(section, "must be an array of tables", "write it as:\n\(example)")
            return []
        }
        var tables: [(String, TOMLTable)] = []
        for (index, element) in array.enumerated() {
            let path = "\(section)[\(index)]"
            guard let table = element.tomlValue.table else {
                self.problem(path, "must be a table", "write it as:\n\(example)")
                continue
            }
            tables.append((path, table))
        }
        return tables
    }

    /// `from` and `to`: two different configured accounts.
    private mutating func accountPair(_ table: TOMLTable, _ path: String, accounts: Set<String>) -> (String, String)? {
        let hint = "known accounts: " + accounts.sorted().joined(separator: ", ")
        var names: [String] = []
        for key in ["from", "to"] {
            guard let name = self.nonEmptyString(table, key, path, hint: "the name of an [accounts.NAME] table") else { continue }
            guard accounts.contains(name) else {
                self.problem("\(path).\(key)", "unknown account '\(name)'", hint)
                continue
            }
            names.append(name)
        }
        guard names.count == 2 else { return nil }
        guard names[0] != names[1] else {
            self.problem(path, "from and to are the same account", "mirror between two different accounts")
            return nil
        }
        return (names[0], names[1])
    }
}
