import CLibXML2
import NIOCore

/// Incremental decoder of an XMPP XML stream on the libxml2 SAX2 push parser
/// (RFC 6120 §4, §11).
///
/// Bytes go in as they arrive, in pieces of any size; out come ``XMLStreamEvent``s:
/// the stream header, each complete first-level element as a tree, the stream end.
/// The restricted XML of RFC 6120 §11.1 is enforced inside the SAX callbacks
/// (DOCTYPE/DTD, entity declarations and references other than the five predefined
/// ones, comments and processing instructions all end the stream with
/// `restricted-xml`; no entity is ever expanded). ``XMLStreamLimits`` bound stanza
/// size, depth and attribute count. Input is always read as UTF-8; an encoding
/// declaration is ignored.
///
/// Between stanzas the parser can give libxml2's context back (``trim()``): an idle
/// connection then holds no parser memory; the next bytes build a new context, primed with
/// the stream's start tag as first read.
///
/// This class is the only owner of the libxml2 parser context. It is not thread-safe:
/// use it from one event loop. libxml2 is not re-entrant, so ``reset()`` (needed after
/// STARTTLS and SASL success) must be called between feeds, never from an event handler
/// running inside ``feed(_:into:)``; the channel handler does so once the feed returns.
public final class XMLStreamParser {
    private static let sliceSize = 16 * 1024

    public let limits: XMLStreamLimits
    private var context: xmlParserCtxtPtr?
    private var builder: XMLTreeBuilder
    private var failure: XMLStreamError?
    private var isFeeding = false
    /// Bytes handed to the current libxml2 context.
    private var bytesFed = 0
    /// Parser offset where the current stanza may be said to begin (end of the previous one).
    private var stanzaBoundary = 0
    /// Whether what libxml2 holds unparsed after the last feed is whitespace at most.
    private var holdsOnlyWhitespace = true
    /// The stream's start tag as first read, to prime a new context with after ``trim()``,
    /// and what it declares: made at the first trim and kept until the stream restarts.
    private var startTag: (bytes: [UInt8], header: XMLTreeBuilder.StreamHeader)?
    /// False once the stream cannot be trimmed: its start tag cannot be written again, the
    /// parser failed, or it was released.
    public private(set) var isTrimmable = true

    /// Elements in `namespaceAlias.from` are read as `namespaceAlias.to`.
    private let namespaceAlias: (from: String, to: String)?

    public init(limits: XMLStreamLimits = XMLStreamLimits(), namespaceAlias: (from: String, to: String)? = nil) {
        self.limits = limits
        self.namespaceAlias = namespaceAlias
        self.builder = XMLTreeBuilder(limits: limits, namespaceAlias: namespaceAlias)
        self.context = self.makeContext()
    }

    deinit {
        if let context = self.context {
            xmlFreeParserCtxt(context)
        }
    }

    /// Whether the parser has failed; a failed parser only repeats its error.
    public var hasFailed: Bool { self.failure != nil }

    /// Bytes fed after the end of the last complete element (or stream header), whether or
    /// not libxml2 has consumed them. After `<proceed/>` or `<success/>` anything here
    /// arrived before the stream restart and must not be there (RFC 6120 §5.4.3.3).
    public var bytesAfterLastElement: Int {
        max(0, self.bytesFed - self.stanzaBoundary)
    }

    /// Discards all state and starts a new stream (RFC 6120 §4.3.3 stream restart).
    /// Must not be called while a feed is in progress.
    public func reset() {
        precondition(!self.isFeeding, "XMLStreamParser.reset() called from inside feed(_:into:)")
        if let context = self.context {
            xmlFreeParserCtxt(context)
        }
        self.builder = XMLTreeBuilder(limits: self.limits, namespaceAlias: self.namespaceAlias)
        self.failure = nil
        self.bytesFed = 0
        self.stanzaBoundary = 0
        self.holdsOnlyWhitespace = true
        self.startTag = nil
        self.isTrimmable = true
        self.context = self.makeContext()
    }

    /// Whether a context is held: false after ``trim()`` until the next feed.
    public var holdsContext: Bool { self.context != nil }

    /// Gives libxml2's context and the names read back if the stream stands between two
    /// stanzas with nothing but whitespace unparsed; the next feed builds a new context and
    /// primes it with the stream's start tag (its prefix and namespace declarations), so
    /// what follows reads as before. Whitespace left unparsed is dropped: between stanzas it
    /// means nothing (RFC 6120 §4.6.1). Returns whether the context was given back.
    /// Must not be called while a feed is in progress.
    @discardableResult
    public func trim() -> Bool {
        guard !self.isFeeding, self.isTrimmable else { return false }
        guard self.failure == nil else {
            self.isTrimmable = false
            return false
        }
        guard let context = self.context, self.holdsOnlyWhitespace, self.builder.isBetweenStanzas,
            // Not inside anything libxml2 began and holds back (a CDATA section's content).
            context.pointee.instate == XML_PARSER_CONTENT
        else { return false }
        if self.startTag == nil {
            guard let header = self.builder.streamHeader, let bytes = header.startTag else {
                self.isTrimmable = false
                return false
            }
            self.startTag = (bytes, header)
        }
        xmlFreeParserCtxt(context)
        self.context = nil
        self.builder = XMLTreeBuilder(limits: self.limits, namespaceAlias: self.namespaceAlias)
        return true
    }

    /// Frees libxml2's context for good: the connection is gone. A later feed fails.
    public func release() {
        precondition(!self.isFeeding, "XMLStreamParser.release() called from inside feed(_:into:)")
        if let context = self.context { xmlFreeParserCtxt(context) }
        self.context = nil
        self.startTag = nil
        self.isTrimmable = false
        self.builder = XMLTreeBuilder(limits: self.limits, namespaceAlias: self.namespaceAlias)
    }

    /// A new context after ``trim()``, fed the stream's start tag; its events are not
    /// reported. Nil if libxml2 cannot make one; nil with `failure` set if the start tag
    /// does not read as it first did.
    private func rebuildContext(startTag: [UInt8], header: XMLTreeBuilder.StreamHeader) -> xmlParserCtxtPtr? {
        self.bytesFed = 0
        self.stanzaBoundary = 0
        guard let context = self.makeContext() else { return nil }
        self.context = context
        var opened: [XMLStreamEvent] = []
        let primed = startTag.withUnsafeBytes { self.parse($0, with: context, into: &opened) }
        guard case .success = primed, opened.count == 1, self.builder.isBetweenStanzas, self.builder.streamHeader == header else {
            self.failure = self.failure ?? XMLStreamError(.internalServerError, "the stream's start tag did not read again after a trim")
            return nil
        }
        return context
    }

    /// Parses `bytes` and appends every event they complete to `events`. Events completed
    /// before a violation are appended before the error is thrown.
    public func feed(_ bytes: ByteBuffer, into events: inout [XMLStreamEvent]) throws(XMLStreamError) {
        var result: Result<Void, XMLStreamError> = .success(())
        bytes.withUnsafeReadableBytes { raw in
            result = self.feed(raw, into: &events)
        }
        try result.get()
    }

    /// Parses raw bytes; see ``feed(_:into:)-(ByteBuffer,_)``.
    public func feed(_ raw: UnsafeRawBufferPointer, into events: inout [XMLStreamEvent]) -> Result<Void, XMLStreamError> {
        if let failure = self.failure { return .failure(failure) }
        if self.context == nil, let startTag = self.startTag {
            _ = self.rebuildContext(startTag: startTag.bytes, header: startTag.header)
            if let failure = self.failure { return .failure(failure) }
        }
        guard let context = self.context else {
            return .failure(XMLStreamError(.internalServerError, "libxml2 parser context could not be created"))
        }
        return self.parse(raw, with: context, into: &events)
    }

    private func parse(_ raw: UnsafeRawBufferPointer, with context: xmlParserCtxtPtr, into events: inout [XMLStreamEvent]) -> Result<Void, XMLStreamError> {
        self.isFeeding = true
        // Callbacks append straight into the caller's array.
        swap(&self.builder.events, &events)
        defer {
            swap(&self.builder.events, &events)
            self.isFeeding = false
        }
        var offset = 0
        while offset < raw.count {
            let length = min(Self.sliceSize, raw.count - offset)
            let base = raw.baseAddress!.advanced(by: offset).assumingMemoryBound(to: CChar.self)
            let code = xmlParseChunk(context, base, Int32(length), 0)
            offset += length
            self.bytesFed += length
            if self.failure == nil, code != 0 {
                self.failure = self.libxml2Failure(code: code)
            }
            // Also bounds the stream header itself, before depth 1 is reached.
            if self.failure == nil, self.bytesFed - self.stanzaBoundary > self.limits.maxStanzaBytes
            {
                self.failure = XMLStreamError(
                    .policyViolation,
                    "stanza larger than \(self.limits.maxStanzaBytes) bytes"
                )
            }
            if let failure = self.failure {
                xmlStopParser(context)
                return .failure(failure)
            }
        }
        // libxml2 keeps back text it cannot yet end (whitespace after a stanza, waiting for
        // a `<`): a suffix of what was fed, looked at while it is still in `raw`; what it
        // kept from before `raw` it kept at the last feed too.
        let unparsed = self.bytesFed - Int(xmlByteConsumed(context))
        if unparsed <= 0 {
            self.holdsOnlyWhitespace = true
        } else if unparsed <= raw.count {
            self.holdsOnlyWhitespace = raw.suffix(unparsed).allSatisfy(XMLTreeBuilder.isWhitespace)
        } else {
            self.holdsOnlyWhitespace = self.holdsOnlyWhitespace && raw.allSatisfy(XMLTreeBuilder.isWhitespace)
        }
        return .success(())
    }

    // MARK: - Context

    /// Half the input buffer's first capacity, in bytes (libxml2's default: 4,000).
    static let initialBufferSize: Int32 = 512

    private func makeContext() -> xmlParserCtxtPtr? {
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        // The hot callbacks borrow the parser without retaining it: it outlives every feed.
        handler.startElementNs = { ctx, localname, prefix, uri, nsCount, namespaces, attrCount, _, attributes in
            XMLStreamParser.with(ctx) { parser in
                parser.handle(
                    parser.builder.startElement(
                        localname: localname, prefix: prefix, uri: uri,
                        namespaceCount: Int(nsCount), namespaces: namespaces,
                        attributeCount: Int(attrCount), attributes: attributes
                    )
                )
            }
        }
        handler.endElementNs = { ctx, _, _, _ in
            XMLStreamParser.with(ctx) { parser in
                parser.handle(parser.builder.endElement())
            }
        }
        handler.characters = { ctx, chars, length in
            guard let chars, length > 0 else { return }
            XMLStreamParser.with(ctx) { parser in
                parser.handle(parser.builder.characters(UnsafeBufferPointer(start: chars, count: Int(length))))
            }
        }
        handler.cdataBlock = { ctx, chars, length in
            guard let chars, length > 0 else { return }
            XMLStreamParser.with(ctx) { parser in
                parser.handle(parser.builder.characters(UnsafeBufferPointer(start: chars, count: Int(length))))
            }
        }
        handler.comment = { ctx, _ in
            XMLStreamParser.from(ctx)?.restricted("comment")
        }
        handler.processingInstruction = { ctx, _, _ in
            XMLStreamParser.from(ctx)?.restricted("processing instruction")
        }
        handler.internalSubset = { ctx, _, _, _ in
            XMLStreamParser.from(ctx)?.restricted("DOCTYPE")
        }
        handler.externalSubset = { ctx, _, _, _ in
            XMLStreamParser.from(ctx)?.restricted("external DTD subset")
        }
        handler.entityDecl = { ctx, _, _, _, _, _ in
            XMLStreamParser.from(ctx)?.restricted("entity declaration")
        }
        handler.getEntity = { ctx, _ in
            XMLStreamParser.from(ctx)?.restricted("entity reference")
            return nil
        }
        handler.getParameterEntity = { ctx, _ in
            XMLStreamParser.from(ctx)?.restricted("parameter entity reference")
            return nil
        }
        handler.reference = { ctx, _ in
            XMLStreamParser.from(ctx)?.restricted("entity reference")
        }
        handler.serror = { ctx, error in
            guard let parser = XMLStreamParser.from(ctx), let error else { return }
            parser.libxml2Error(error.pointee)
        }
        let userData = Unmanaged.passUnretained(self).toOpaque()
        // The input buffer starts at twice libxml2's default buffer size (a per-thread
        // setting, 4,000 bytes): 8 KB per connection held for life, most of an idle
        // account's parser. It grows as chunks need, so it starts small; the thread's
        // setting is put back at once.
        let defaultSize = __xmlDefaultBufferSize()
        let savedSize = defaultSize?.pointee
        defaultSize?.pointee = Self.initialBufferSize
        let created = xmlCreatePushParserCtxt(&handler, userData, nil, 0, nil)
        if let savedSize { defaultSize?.pointee = savedSize }
        guard let context = created else {
            return nil
        }
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_IGNORE_ENC.rawValue | XML_PARSE_NOCDATA.rawValue)
        xmlCtxtUseOptions(context, options)
        context.pointee.replaceEntities = 0
        return context
    }

    /// Runs `body` with the parser behind `ctx` unless it has already failed.
    private static func with(_ ctx: UnsafeMutableRawPointer?, _ body: (XMLStreamParser) -> Void) {
        guard let ctx else { return }
        Unmanaged<XMLStreamParser>.fromOpaque(ctx)._withUnsafeGuaranteedRef { parser in
            if parser.failure == nil { body(parser) }
        }
    }

    private static func from(_ ctx: UnsafeMutableRawPointer?) -> XMLStreamParser? {
        guard let ctx else { return nil }
        return Unmanaged<XMLStreamParser>.fromOpaque(ctx).takeUnretainedValue()
    }

    // MARK: - SAX events

    private func fail(_ error: XMLStreamError) {
        guard self.failure == nil else { return }
        self.failure = error
        if let context = self.context {
            xmlStopParser(context)
        }
    }

    private func restricted(_ what: String) {
        self.fail(XMLStreamError(.restrictedXML, "\(what) is not allowed in an XMPP stream"))
    }

    private func libxml2Error(_ error: xmlError) {
        guard error.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
        let message = error.message.map { String(cString: $0) } ?? "code \(error.code)"
        let condition: StreamErrorCondition =
            error.code == Int32(XML_ERR_UNSUPPORTED_ENCODING.rawValue) ? .unsupportedEncoding : .notWellFormed
        self.fail(XMLStreamError(condition, "line \(error.line): \(message.trimmingTrailingNewlines)"))
    }

    private func libxml2Failure(code: Int32) -> XMLStreamError {
        XMLStreamError(.notWellFormed, "libxml2 error \(code)")
    }

    /// Acts on what the tree builder reported: a violation stops libxml2; a completed
    /// stanza is measured against the size limit before it is emitted; either moves the
    /// start of the size window.
    private func handle(_ outcome: XMLTreeBuilder.Outcome) {
        switch outcome {
        case .proceed:
            return
        case .failed(let error):
            self.fail(error)
        case .boundary:
            guard let context = self.context else { return }
            self.stanzaBoundary = Int(xmlByteConsumed(context))
        case .completed(let element):
            guard let context = self.context else { return }
            let position = Int(xmlByteConsumed(context))
            if position - self.stanzaBoundary > self.limits.maxStanzaBytes {
                return self.fail(XMLStreamError(.policyViolation, "stanza larger than \(self.limits.maxStanzaBytes) bytes"))
            }
            self.stanzaBoundary = position
            self.builder.events.append(.element(element))
        }
    }
}

extension String {
    fileprivate var trimmingTrailingNewlines: String {
        var result = self
        while result.last == "\n" || result.last == "\r" { result.removeLast() }
        return result
    }
}
