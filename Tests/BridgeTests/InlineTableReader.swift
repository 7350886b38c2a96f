/// Reads the keys of TOML inline tables (`{ a = 1, b = { c = "}" } }`, arrays of them) for
/// ``ConfigurationKeysTests``: each key under the key that holds its table. Strings are
/// skipped whole, so braces and commas in them do not count; anything else is a scalar.
struct InlineTableReader {
    var keys: [String: Set<String>] = [:]
    private var characters: [Character] = []
    private var index = 0

    /// Every value in `text` (one, or a comma-separated run of them), held by `holder`.
    mutating func read(_ text: Substring, holder: String) {
        self.characters = Array(text)
        self.index = 0
        while self.skipSpaces(), self.index < self.characters.count {
            if self.characters[self.index] == "," || self.characters[self.index] == "#" {
                if self.characters[self.index] == "#" { return }
                self.index += 1
                continue
            }
            let before = self.index
            self.value(holder: holder)
            if self.index == before { self.index += 1 }
        }
    }

    /// Skips blanks; always true (for use in a `while` condition).
    private mutating func skipSpaces() -> Bool {
        while self.index < self.characters.count, self.characters[self.index] == " " { self.index += 1 }
        return true
    }

    private mutating func value(holder: String) {
        guard self.index < self.characters.count else { return }
        switch self.characters[self.index] {
        case "{": self.table(holder: holder)
        case "[": self.array(holder: holder)
        case "\"", "'": self.string()
        default:
            while self.index < self.characters.count, !",}] ".contains(self.characters[self.index]) { self.index += 1 }
        }
    }

    private mutating func table(holder: String) {
        self.index += 1
        while self.skipSpaces(), self.index < self.characters.count {
            if self.characters[self.index] == "}" {
                self.index += 1
                return
            }
            if self.characters[self.index] == "," {
                self.index += 1
                continue
            }
            var key = ""
            while self.index < self.characters.count, self.characters[self.index].isLetter || self.characters[self.index].isNumber || self.characters[self.index] == "_" {
                key.append(self.characters[self.index])
                self.index += 1
            }
            guard !key.isEmpty else {
                self.index += 1
                continue
            }
            self.keys[holder, default: []].insert(key)
            _ = self.skipSpaces()
            if self.index < self.characters.count, self.characters[self.index] == "=" { self.index += 1 }
            _ = self.skipSpaces()
            self.value(holder: key)
        }
    }

    private mutating func array(holder: String) {
        self.index += 1
        while self.skipSpaces(), self.index < self.characters.count {
            switch self.characters[self.index] {
            case "]":
                self.index += 1
                return
            case ",":
                self.index += 1
            default:
                let before = self.index
                self.value(holder: holder)
                if self.index == before { self.index += 1 }
            }
        }
    }

    private mutating func string() {
        let quote = self.characters[self.index]
        self.index += 1
        while self.index < self.characters.count, self.characters[self.index] != quote {
            if quote == "\"" && self.characters[self.index] == "\\" { self.index += 1 }
            self.index += 1
        }
        self.index += 1
    }
}
