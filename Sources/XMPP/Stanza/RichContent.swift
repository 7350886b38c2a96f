/// What a message carries besides its text that a bridge must carry across, read from and
/// written as the message's extension elements:
/// - a file shared by URL (XEP-0066 §3, `jabber:x:oob`);
/// - a correction of an earlier message (XEP-0308 §3, `<replace id/>`);
/// - a reply (XEP-0461 §2, `<reply id/>`) and the quoted fallback text marked for it
///   (XEP-0428 §3, `<fallback for='urn:xmpp:reply:0'><body start end/></fallback>`);
/// - reactions (XEP-0444 §3, `<reactions id><reaction/>…</reactions>`);
/// - a retraction (XEP-0424 §4, `<retract id/>` of `urn:xmpp:message-retract:1`, and the
///   older `<apply-to id><retract/></apply-to>` of version 0, still sent by Conversations);
/// - end-to-end encryption (OMEMO XEP-0384, OX XEP-0373, legacy PGP XEP-0027, OTR; the
///   name announced by XEP-0380 when present), whose body is only a fallback notice;
/// - a delivery receipt or displayed marker to pass back (XEP-0184 §5.2, XEP-0333 §4);
/// - whether the sender wants one (XEP-0184 §5.1 `<request/>`, XEP-0333 §4 `<markable/>`).
///
/// The ids are those of the side the message is on: read from a received stanza they are
/// the sender's; before sending, a bridge replaces them with the ids the target knows.
public struct RichContent: Hashable, Sendable {
    /// The URL of a shared file (OOB), when the message is a file.
    public var url: String?
    /// The id of the message this one corrects.
    public var replaceID: String?
    /// The id of the message this one answers.
    public var replyTo: String?
    /// The quoted text the sender put before its answer for clients without replies; not
    /// part of the message's own text.
    public var replyFallback: String?
    /// The id of the message reacted to, and the reactions (all of the sender's, XEP-0444
    /// §3: an empty list removes them).
    public var reactionTo: String?
    public var reactions: [String]?
    /// The id of the message the sender retracts.
    public var retractID: String?
    /// The encryption the message is under, by name ("OMEMO", "OpenPGP", "PGP", "OTR");
    /// its body is only a notice for clients without it.
    public var encryption: String?
    /// A receipt (XEP-0184; with `receiptDisplayed`, a displayed marker, XEP-0333) for the id.
    public var receiptFor: String?
    public var receiptDisplayed: Bool?
    /// Read: the sender asked for a receipt or a displayed marker. Written: nothing (the
    /// sending transport adds ``MessageReceipt/requests`` when it asks).
    public var wantsReceipt: Bool?

    public init(
        url: String? = nil, replaceID: String? = nil, replyTo: String? = nil, replyFallback: String? = nil, reactionTo: String? = nil,
        reactions: [String]? = nil, retractID: String? = nil, encryption: String? = nil, receiptFor: String? = nil, receiptDisplayed: Bool? = nil,
        wantsReceipt: Bool? = nil
    ) {
        self.url = url
        self.replaceID = replaceID
        self.replyTo = replyTo
        self.replyFallback = replyFallback
        self.reactionTo = reactionTo
        self.reactions = reactions
        self.retractID = retractID
        self.encryption = encryption
        self.receiptFor = receiptFor
        self.receiptDisplayed = receiptDisplayed
        self.wantsReceipt = wantsReceipt
    }

    /// The namespaces of the elements read and written (the XEPs above).
    public enum Namespace {
        public static let oob = "jabber:x:oob"
        public static let correction = "urn:xmpp:message-correct:0"
        public static let reply = "urn:xmpp:reply:0"
        public static let fallback = "urn:xmpp:fallback:0"
        public static let reactions = "urn:xmpp:reactions:0"
        public static let retract = "urn:xmpp:message-retract:1"
        public static let retractV0 = "urn:xmpp:message-retract:0"
        public static let fasten = "urn:xmpp:fasten:0"
        public static let hints = "urn:xmpp:hints"
    }

    /// Nothing but text (a wish for a receipt is no content: see ``wantsReceipt``).
    public var isEmpty: Bool { self.withoutWantsReceipt == RichContent() }

    /// The content without ``wantsReceipt``.
    public var withoutWantsReceipt: RichContent {
        var content = self
        content.wantsReceipt = nil
        return content
    }

    /// Whether a message with this content may ask for a receipt and a displayed marker
    /// (``MessageReceipt/requests``): one with a body that is no receipt itself (XEP-0184
    /// §5.4: never ask for a receipt of a receipt), reaction or retraction (no message to
    /// see). Whether it does is the sender's to say (the bridge: `Delivery.asksReceipt`).
    public func mayAskReceipt(body: String?) -> Bool {
        body != nil && self.receiptFor == nil && self.reactionTo == nil && self.retractID == nil
    }

    /// An operation on an earlier message (correction, reaction, retraction), or a reply.
    public var references: String? { self.replaceID ?? self.reactionTo ?? self.retractID ?? self.replyTo }

    /// Longest id or reaction accepted from a peer; longer ones are ignored (never trapped on).
    static let maximumIDLength = 256

    /// What `message` carries, and its text without the reply fallback (the body when there
    /// is none). An extension with a missing or oversized id is ignored.
    public static func parse(_ message: Message) -> (content: RichContent, text: String?) {
        var content = RichContent()
        var replyRange: (start: Int, end: Int)?
        var replyFallbackWhole = false
        func id(_ element: XMLElement) -> String? {
            guard let id = element[attribute: "id"], !id.isEmpty, id.utf8.count <= Self.maximumIDLength else { return nil }
            return id
        }
        for element in message.extensions {
            switch (element.name, element.namespace) {
            case ("x", Namespace.oob):
                let url = element.firstChild(named: "url", namespace: Namespace.oob)?.text.trimmingWhitespace ?? ""
                if !url.isEmpty { content.url = url }
            case ("replace", Namespace.correction):
                content.replaceID = id(element)
            case ("reply", Namespace.reply):
                content.replyTo = id(element)
            case ("fallback", Namespace.fallback) where element[attribute: "for"] == Namespace.reply:
                if let body = element.firstChild(named: "body", namespace: Namespace.fallback),
                    let start = body[attribute: "start"].flatMap(Int.init), let end = body[attribute: "end"].flatMap(Int.init)
                {
                    replyRange = (start, end)
                } else {
                    replyFallbackWhole = true
                }
            case ("reactions", Namespace.reactions):
                guard let target = id(element) else { continue }
                content.reactionTo = target
                content.reactions = element.elements.filter { $0.name == "reaction" && $0.namespace == Namespace.reactions }
                    .map(\.text).filter { !$0.isEmpty && $0.utf8.count <= Self.maximumIDLength }
            case ("retract", Namespace.retract):
                content.retractID = id(element)
            case ("apply-to", Namespace.fasten) where element.firstChild(named: "retract", namespace: Namespace.retractV0) != nil:
                content.retractID = content.retractID ?? id(element)
            case ("request", MessageReceipt.receiptsNamespace), ("markable", MessageReceipt.markersNamespace):
                content.wantsReceipt = true
            default:
                if let name = EncryptionKind.name(of: element) { content.encryption = content.encryption ?? name }
            }
        }
        if content.encryption == nil, let body = message.body {
            // OTR has no element; an OMEMO-encrypted file is shared as an `aesgcm:` URL.
            if ["?OTR:", "?OTRv", "?OTR?", "?OTR Error:"].contains(where: body.hasPrefix) { content.encryption = "OTR" }
            if body.hasPrefix("aesgcm://") { content.encryption = "OMEMO" }
        }
        if content.url == nil, content.encryption == nil, let body = message.body, let url = Self.fileURL(in: body) { content.url = url }
        var text = message.body
        if content.replyTo != nil, let body = message.body {
            if replyFallbackWhole {
                content.replyFallback = body
                text = nil
            } else if let range = replyRange {
                let split = Self.remove(range, from: body)
                content.replyFallback = split.removed
                text = split.rest
            }
        }
        return (content, text)
    }

    /// The URL when `body` is nothing but the URL of a file (an upload shared without OOB):
    /// http(s), no spaces, and a last path segment ending in the extension of a media or
    /// document type people share from phones (``fileSuffixes``). Nil for any other text.
    static func fileURL(in body: String) -> String? {
        // Most bodies are not URLs: decided before any copy is made.
        guard body.utf8.count <= 4_096, Self.containsSchemeSeparator(body.utf8) else { return nil }
        let text = body.trimmingWhitespace
        guard text.hasPrefix("https://") || text.hasPrefix("http://"), !text.contains(where: \.isWhitespace) else { return nil }
        let afterScheme = text.drop { $0 != "/" }.dropFirst(2)
        guard let slash = afterScheme.firstIndex(of: "/") else { return nil }
        let path = afterScheme[slash...].prefix { $0 != "?" && $0 != "#" }
        guard let last = path.split(separator: "/").last, let dot = last.lastIndex(of: "."), last.index(after: dot) < last.endIndex else { return nil }
        let suffix = last[last.index(after: dot)...].lowercased()
        guard Self.fileSuffixes.contains(suffix) else { return nil }
        return text
    }

    /// Whether `utf8` contains "://" (a byte scan: `String.contains` of a string goes
    /// through Foundation on Linux, on every relayed message).
    static func containsSchemeSeparator(_ utf8: String.UTF8View) -> Bool {
        var slashesAfterColon = -1
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: ":"): slashesAfterColon = 0
            case UInt8(ascii: "/") where slashesAfterColon >= 0:
                slashesAfterColon += 1
                if slashesAfterColon == 2 { return true }
            default: slashesAfterColon = -1
            }
        }
        return false
    }

    /// Extensions of what upload services hold: pictures, video, audio, documents, archives.
    static let fileSuffixes: Set<String> = [
        "jpg", "jpeg", "png", "gif", "webp", "heic", "heif", "avif", "bmp", "svg", "mp4", "m4v", "mov", "webm", "mkv", "3gp", "mp3", "m4a", "aac",
        "ogg", "oga", "opus", "wav", "flac", "amr", "pdf", "txt", "log", "csv", "md", "json", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt",
        "ods", "odp", "rtf", "zip", "gz", "tgz", "xz", "bz2", "7z", "rar", "tar", "apk", "vcf", "ics", "gpx",
    ]

    /// The file name in `url`: its last path segment without query or fragment, percent-
    /// decoded, with path separators and control characters removed; nil when it has none.
    public static func fileName(of url: String) -> String? {
        guard let scheme = url.range(of: "://") else { return nil }
        let rest = url[scheme.upperBound...]
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let path = rest[slash...].prefix { $0 != "?" && $0 != "#" }
        guard let last = path.split(separator: "/").last else { return nil }
        let decoded = PercentEncoding.decode(String(last)) ?? String(last)
        let name = String(decoded.unicodeScalars.filter { $0 != "/" && $0 != "\\" && !($0.properties.generalCategory == .control) }.map(Character.init))
        return name.isEmpty || name == "." || name == ".." ? nil : String(name.prefix(255))
    }

    /// `text` without the Unicode scalars `range` marks (XEP-0426 counts code points);
    /// an invalid range removes nothing.
    static func remove(_ range: (start: Int, end: Int), from text: String) -> (removed: String?, rest: String) {
        let scalars = Array(text.unicodeScalars)
        guard range.start >= 0, range.end <= scalars.count, range.start < range.end else { return (nil, text) }
        var removed = String.UnicodeScalarView()
        removed.append(contentsOf: scalars[range.start..<range.end])
        var rest = String.UnicodeScalarView()
        rest.append(contentsOf: scalars[..<range.start])
        rest.append(contentsOf: scalars[range.end...])
        return (String(removed), String(rest))
    }

    /// The extension elements to send, and the body: `text` with the reply fallback put
    /// before it (marked, so clients with replies hide it). A file's body is its URL alone:
    /// Conversations shows a file only when body and OOB URL are equal.
    public func outgoing(text: String?) -> (body: String?, elements: [XMLElement]) {
        var elements: [XMLElement] = []
        var body = text
        func element(_ name: String, _ namespace: String, id: String) -> XMLElement {
            XMLElement(name: name, namespace: namespace, attributes: [XMLAttribute(name: "id", value: id)])
        }
        if let url {
            var oob = XMLElement(name: "x", namespace: Namespace.oob)
            var child = XMLElement(name: "url", namespace: Namespace.oob)
            child.append(text: url)
            oob.append(child)
            elements.append(oob)
            body = url
        }
        if let replaceID { elements.append(element("replace", Namespace.correction, id: replaceID)) }
        if let replyTo {
            elements.append(element("reply", Namespace.reply, id: replyTo))
            if let quote = self.replyFallback, !quote.isEmpty {
                body = quote + (body ?? "")
                var range = XMLElement(name: "body", namespace: Namespace.fallback)
                range[attribute: "start"] = "0"
                range[attribute: "end"] = "\(quote.unicodeScalars.count)"
                var fallback = XMLElement(name: "fallback", namespace: Namespace.fallback, attributes: [XMLAttribute(name: "for", value: Namespace.reply)])
                fallback.append(range)
                elements.append(fallback)
            }
        }
        if let reactionTo {
            var reactions = element("reactions", Namespace.reactions, id: reactionTo)
            for reaction in self.reactions ?? [] {
                var child = XMLElement(name: "reaction", namespace: Namespace.reactions)
                child.append(text: reaction)
                reactions.append(child)
            }
            elements.append(reactions)
            elements.append(XMLElement(name: "store", namespace: Namespace.hints))
        }
        if let retractID {
            elements.append(element("retract", Namespace.retract, id: retractID))
            var applyTo = element("apply-to", Namespace.fasten, id: retractID)
            applyTo.append(XMLElement(name: "retract", namespace: Namespace.retractV0))
            elements.append(applyTo)
            // The notice for clients without retraction is a fallback, hidden by those with it.
            elements.append(XMLElement(name: "fallback", namespace: Namespace.fallback, attributes: [XMLAttribute(name: "for", value: Namespace.retract)]))
            elements.append(XMLElement(name: "store", namespace: Namespace.hints))
        }
        if let receiptFor {
            let displayed = self.receiptDisplayed == true
            elements.append(
                element(displayed ? "displayed" : "received", displayed ? MessageReceipt.markersNamespace : MessageReceipt.receiptsNamespace, id: receiptFor)
            )
            elements.append(XMLElement(name: "store", namespace: Namespace.hints))
        }
        return (body, elements)
    }
}
