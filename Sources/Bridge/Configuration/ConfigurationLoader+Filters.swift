import BridgeRouting
import TOMLKit

extension ConfigurationLoader {
    package static let filterKeys = ["ignore", "replace", "only_from"]
    /// One `replace` rule.
    package static let ruleKeys = ["match", "with"]
    private static let replaceExample = #"replace = [ { match = "(?i)password=\\S+", with = "password=***" } ]"#

    /// A channel's filters (issue 25); nil when it has none. Every expression is compiled
    /// here: an invalid one is a problem at its TOML path.
    package mutating func channelFilter(_ table: TOMLTable, channel: String) -> ChannelFilter? {
        guard Self.filterKeys.contains(where: { table[$0] != nil }) else { return nil }
        let path = Self.path("channels", channel)
        var filter = ChannelFilter()
        for (index, text) in self.strings(table, "ignore", path, hint: #"regular expressions, e.g. ignore = ["^DEBUG ", "healthcheck ok$"]"#) {
            if let pattern = self.pattern(text, at: "\(path).ignore[\(index)]") { filter.ignore.append(pattern) }
        }
        if let value = table["replace"] {
            if let rules = value.array {
                for (index, element) in rules.enumerated() {
                    let rulePath = "\(path).replace[\(index)]"
                    guard let rule = element.table, let match = rule["match"]?.string, let replacement = rule["with"]?.string else {
                        self.problem(rulePath, "must be a table with match and with (strings)", Self.replaceExample)
                        continue
                    }
                    self.rejectUnknownKeys(in: rule, at: rulePath, allowed: Self.ruleKeys)
                    guard let pattern = self.pattern(match, at: "\(rulePath).match") else { continue }
                    if let group = Self.groupReferences(replacement).first(where: { $0 > pattern.groups }) {
                        self.problem("\(rulePath).with", "names group $\(group), but match has \(pattern.groups)", "$1… name match's groups; write \\$ for a literal $")
                        continue
                    }
                    filter.replace.append((pattern, replacement))
                }
            } else {
                self.problem("\(path).replace", "must be an array of rules", Self.replaceExample)
            }
        }
        if table["only_from"] != nil {
            let hint = #"JID globs or nicks, e.g. only_from = ["alice@work.example", "*@ops.example", "nick:bob"]"#
            let senders = self.strings(table, "only_from", path, hint: hint)
            for (index, text) in senders where text == "nick:" {
                self.problem("\(path).only_from[\(index)]", "names no nick", "nick:NAME, e.g. nick:bob")
            }
            if table["only_from"]?.array?.isEmpty == true {
                self.problem("\(path).only_from", "is empty: nobody could relay", "name who may, or remove only_from (every sending member may)")
            }
            filter.onlyFrom = senders.map { ChannelFilter.AllowedSender($0.1) }
        }
        return filter
    }

    /// The strings of the array at `key`, with their indices; problems for other values.
    private mutating func strings(_ table: TOMLTable, _ key: String, _ path: String, hint: String) -> [(Int, String)] {
        guard let value = table[key] else { return [] }
        guard let array = value.array else {
            self.problem("\(path).\(key)", "must be an array of strings", hint)
            return []
        }
        var result: [(Int, String)] = []
        for (index, element) in array.enumerated() {
            guard let text = element.string, !text.isEmpty else {
                self.problem("\(path).\(key)[\(index)]", "must be a non-empty string", hint)
                continue
            }
            result.append((index, text))
        }
        return result
    }

    /// The group numbers `$1`… a replacement template names (`\$` is a literal `$`).
    package static func groupReferences(_ template: String) -> [Int] {
        var groups: [Int] = []
        var characters = template.makeIterator()
        var escaped = false
        var pending: String?
        func flush() {
            if let digits = pending, let number = Int(digits) { groups.append(number) }
            pending = nil
        }
        while let character = characters.next() {
            if pending != nil, character.isASCII, character.isNumber {
                pending! += String(character)
                continue
            }
            flush()
            if escaped {
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "$" {
                pending = ""
            }
        }
        flush()
        return groups
    }

    private mutating func pattern(_ text: String, at path: String) -> ChannelFilter.Pattern? {
        do {
            return try ChannelFilter.Pattern(text)
        } catch {
            self.problem(path, "\(error)", "ICU regular expression syntax, e.g. \"(?i)^debug\"; escape backslashes in TOML strings, or use 'single quotes'")
            return nil
        }
    }
}
