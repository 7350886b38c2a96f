import Foundation
import Mustache
import TransportCore

/// A Mustache template (hummingbird-project/swift-mustache) that turns an Alertmanager or
/// Grafana webhook into the text of one message. Output is plain text: nothing is
/// HTML-escaped. The context is ``WebhookPayload/context``.
public struct WebhookTemplate: Sendable {
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    private let template: MustacheTemplate

    /// Parses `text`; throws ``Invalid`` with the parser's reason.
    public init(_ text: String) throws(Invalid) {
        do {
            self.template = try MustacheTemplate(string: Self.textPragma + text)
        } catch {
            throw Invalid(description: "not a valid Mustache template: \(error)")
        }
    }

    /// The message text for `payload`: rendered, blank lines at both ends removed.
    public func render(_ payload: WebhookPayload) -> String {
        let text = self.template.render(payload.context)
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Plain-text output: no HTML escaping of labels and annotations.
    static let textPragma = "{{% CONTENT_TYPE: TEXT}}"

    /// The default: a status line per state, one line per alert (name, summary, labels
    /// other than alertname), grouped alerts in one message, then where to look.
    public static let defaultText = """
        {{#hasFiring}}🔥 FIRING{{#multiple}} ({{firingCount}}){{/multiple}}
        {{#firing}}• {{name}}{{#summary}}: {{summary}}{{/summary}}{{#labelText}} [{{labelText}}]{{/labelText}}
        {{/firing}}{{/hasFiring}}{{#hasResolved}}✅ RESOLVED{{#multiple}} ({{resolvedCount}}){{/multiple}}
        {{#resolved}}• {{name}}{{#summary}}: {{summary}}{{/summary}}{{#labelText}} [{{labelText}}]{{/labelText}}
        {{/resolved}}{{/hasResolved}}{{#link}}{{link}}{{/link}}
        """

    /// The default template, parsed. It is a constant the tests render, so it parses.
    public static let standard: WebhookTemplate = try! WebhookTemplate(WebhookTemplate.defaultText)
}
