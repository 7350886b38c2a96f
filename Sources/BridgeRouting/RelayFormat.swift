/// A channel's relay format template (issue 4, "Configuration"), e.g.
/// `[{account}] {nick}: {body}`, parsed once into literal text and placeholders.
///
/// Known placeholders are `{account}`, `{channel}`, `{nick}`, `{sender}` and `{body}`;
/// anything else in braces stays as written. Substitution is single-pass: a value that
/// itself contains `{nick}` is copied verbatim, never expanded again.
package struct RelayFormat: Hashable, Sendable {
    /// A value the template can name.
    package enum Placeholder: String, Hashable, Sendable, CaseIterable {
        /// The source transport's name (account or local transport).
        case account
        case channel
        /// The sender's display name.
        case nick
        /// The sender's full address as received.
        case sender
        /// The body as the sender wrote it.
        case body
    }

    package enum Segment: Hashable, Sendable {
        case literal(String)
        case placeholder(Placeholder)
    }

    package let template: String
    package let segments: [Segment]

    package init(_ template: String) {
        self.template = template
        self.segments = Self.parse(template)
    }

    /// The template with every placeholder replaced by `value(placeholder)`.
    /// The template is `{body}` alone: it adds nothing to what the sender wrote.
    package var isBodyOnly: Bool { self.segments == [.placeholder(.body)] }

    package func render(_ value: (Placeholder) -> String) -> String {
        var result = ""
        for segment in self.segments {
            switch segment {
            case .literal(let text):
                result += text
            case .placeholder(let placeholder):
                result += value(placeholder)
            }
        }
        return result
    }

    /// Splits a template at its known placeholders; an unknown or unclosed `{…` is literal
    /// text, and scanning resumes right after its `{` (so `{{nick}` is `{` + nick).
    package static func parse(_ template: String) -> [Segment] {
        var segments: [Segment] = []
        var literal = ""
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            literal += rest[..<open]
            let nameStart = rest.index(after: open)
            if let close = rest[nameStart...].firstIndex(where: { $0 == "}" || $0 == "{" }),
                rest[close] == "}",
                let placeholder = Placeholder(rawValue: String(rest[nameStart..<close]))
            {
                if !literal.isEmpty {
                    segments.append(.literal(literal))
                    literal = ""
                }
                segments.append(.placeholder(placeholder))
                rest = rest[rest.index(after: close)...]
            } else {
                literal.append("{")
                rest = rest[nameStart...]
            }
        }
        literal += rest
        if !literal.isEmpty {
            segments.append(.literal(literal))
        }
        return segments
    }
}
