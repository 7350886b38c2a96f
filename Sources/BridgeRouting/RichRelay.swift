import BridgeState
import Foundation
import TransportCore
import XMPP

/// How one message crosses to one target (issue 12), without I/O: the text, rendered through
/// the channel's format, and what it carries besides, with the ids that target knows.
///
/// - A file (XEP-0066 OOB, or a body that is only an upload URL) goes to an XMPP target as
///   its own message whose body is the URL alone (Conversations shows a file only then),
///   after the caption as a message of its own; with no caption, a channel whose format
///   adds more than the body gets the file's name in that format, so readers see who sent it.
/// - A correction (XEP-0308) of a message the target got becomes a correction of its copy;
///   of an unknown message, a new message marked "[correction]".
/// - A reply (XEP-0461) points to the target's copy, with the quoted fallback kept (and
///   marked, XEP-0428); without a copy, the quote stays as plain text.
/// - Reactions (XEP-0444) and retractions (XEP-0424) go only to targets that have a copy
///   (reactions elsewhere as the text "reacted 👍").
/// - An encrypted message reaches only local targets, as an event; XMPP targets never get
///   its fallback body.
///
/// Local targets get one line per message: the text (or a short description) and the
/// fields, with the ids they were given.
package struct RichRelay {
    /// One delivery's content.
    package struct Piece: Hashable, Sendable {
        package var body: String
        package var originalBody: String
        package var content = MessageContent()
        /// The message's subject goes with this piece.
        package var carriesSubject = false
    }

    /// The message's text (nil when it has none), its extras, and the referenced message's ids.
    package let text: String?
    package let content: MessageContent
    package let references: ReferenceMap

    /// The pieces for `target`, in order; none when it gets nothing.
    /// - Parameters:
    ///   - render: the channel's format applied to a text.
    ///   - plainFormat: the format is `{body}` alone (adds no attribution).
    ///   - room: the target is a room (references use the room's stanza-ids).
    ///   - reuploadMaxBytes: the channel re-uploads files for XMPP targets, up to this size.
    package func pieces(for target: Endpoint, room: Bool = false, render: (String) -> String, plainFormat: Bool, reuploadMaxBytes: Int? = nil) -> [Piece] {
        let local = target.address == nil
        let mapped = self.references.id(for: target, room: room, correction: self.content.replaceID != nil)
        if let encryption = self.content.encryption {
            guard local else { return [] }
            let note = "sent a message encrypted with \(encryption), which the bridge cannot read"
            return [Piece(body: render(note), originalBody: note, content: MessageContent(encryption: encryption))]
        }
        if self.content.retractID != nil {
            // Every copy the target holds: a caption and its file, or a split message's parts.
            let note = "retracted an earlier message"
            return self.references.ids(for: target, room: room).map { Piece(body: render(note), originalBody: note, content: MessageContent(retractID: $0)) }
        }
        if self.content.reactionTo != nil {
            let reactions = self.content.reactions ?? []
            let note = reactions.isEmpty ? "removed a reaction" : "reacted " + reactions.joined(separator: " ")
            guard let mapped else {
                return reactions.isEmpty ? [] : [Piece(body: render(note), originalBody: note)]
            }
            return [Piece(body: local ? render(note) : "", originalBody: note, content: MessageContent(reactionTo: mapped, reactions: reactions))]
        }
        if let url = self.content.url {
            var pieces = self.file(url, local: local, render: render, plainFormat: plainFormat)
            if !local, let limit = reuploadMaxBytes { pieces[pieces.count - 1].content.reuploadMaxBytes = limit }
            return pieces
        }
        guard var text = self.text else { return [] }
        var content = MessageContent()
        if self.content.replaceID != nil {
            if let mapped {
                content.replaceID = mapped
            } else {
                text = "[correction] " + text
            }
        }
        var quote = ""
        if self.content.replyTo != nil, let fallback = self.content.replyFallback {
            if self.content.replaceID == nil, let mapped {
                content.replyTo = mapped
                content.replyFallback = fallback
            } else {
                quote = fallback
            }
        } else if self.content.replyTo != nil, self.content.replaceID == nil, let mapped {
            content.replyTo = mapped
        }
        return [Piece(body: quote + render(text), originalBody: quote + text, content: content, carriesSubject: true)]
    }

    private func file(_ url: String, local: Bool, render: (String) -> String, plainFormat: Bool) -> [Piece] {
        // A caption that carries the file's URL too ("look at this\nURL") would show the
        // link twice, before the file: a line, first or last word that is the URL goes.
        let caption = self.text.flatMap { text -> String? in
            var trimmed = text.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { $0.trimmingCharacters(in: .whitespaces) != url }.joined(separator: "\n")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.hasSuffix(" " + url) { trimmed = String(trimmed.dropLast(url.count)).trimmingCharacters(in: .whitespaces) }
            if trimmed.hasPrefix(url + " ") { trimmed = String(trimmed.dropFirst(url.count)).trimmingCharacters(in: .whitespaces) }
            return trimmed.isEmpty ? nil : trimmed
        }
        let file = MessageContent(url: url)
        if local {
            let line = caption.map { "\($0) \(url)" } ?? url
            return [Piece(body: render(line), originalBody: line, content: file, carriesSubject: true)]
        }
        var pieces: [Piece] = []
        if let caption {
            pieces.append(Piece(body: render(caption), originalBody: caption, carriesSubject: true))
        } else if !plainFormat {
            let name = RichContent.fileName(of: url) ?? url
            pieces.append(Piece(body: render(name), originalBody: name, carriesSubject: true))
        }
        pieces.append(Piece(body: url, originalBody: url, content: file))
        return pieces
    }

    package init(text: String? = nil, content: MessageContent, references: ReferenceMap) {
        self.text = text
        self.content = content
        self.references = references
    }
}
