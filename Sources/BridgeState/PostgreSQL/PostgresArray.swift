/// A PostgreSQL array literal as text (`{"a","b\\"c"}`), for a parameter cast to `text[]`
/// or `bigint[]` (PostgreSQL's array input syntax, "8.15.2. Array Value Input"): every
/// element in double quotes, with backslashes and double quotes escaped.
package enum PostgresArray {
    package static func text(_ elements: [String]) -> String {
        var text = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { text += "," }
            text += "\""
            for character in element.unicodeScalars {
                if character == "\\" || character == "\"" { text += "\\" }
                text.unicodeScalars.append(character)
            }
            text += "\""
        }
        return text + "}"
    }
}
