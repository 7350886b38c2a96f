import TOMLKit

extension ConfigurationLoader {
    static let filterKeys = ["ignore", "replace", "only_from"]
    private static let replaceExample = #"replace = [ { match = "(?i)password=\\S+", with = "password=***" } ]"#

    /// A channel's filters (issue 25); nil when it has none. Every expression is compiled
    /// here: an invalid one is a problem at its TOML path.
    mutating func channelFilter(_ table: TOMLTable, channel: String) -> ChannelFilter? {
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
                    self.rejectUnknownKeys(in: rule, at: rulePath, allowed: ["match", "with"])
                    if let pattern = self.pattern(match, at: "\(rulePath).match") { filter.replace.append((pattern, replacement)) }
                }
            } else {
                self.problem("\(path).replace", "must be an array of rules", Self.replaceExample)
            }
        }
        if table["only_from"] != nil {
            filter.onlyFrom = self.strings(table, "only_from", path, hint: #"JID globs or nicks, e.g. only_from = ["alice@work.example", "*@ops.example", "nick:bob"]"#)
                .map { ChannelFilter.Sender($0.1) }
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

    private mutating func pattern(_ text: String, at path: String) -> ChannelFilter.Pattern? {
        do {
            return try ChannelFilter.Pattern(text)
        } catch {
            self.problem(path, "\(error)", "ICU regular expression syntax, e.g. \"(?i)^debug\"; escape backslashes in TOML strings, or use 'single quotes'")
            return nil
        }
    }
}
