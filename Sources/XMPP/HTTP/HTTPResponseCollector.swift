import NIOCore
import NIOHTTP1

/// Gathers one HTTP response from the decoder's parts (RFC 9112 §6) within a body limit:
/// a declared `Content-Length` over the limit fails at the head, before any body is read;
/// a body without one fails as soon as what arrived passes the limit. With
/// `requiresDelimitedBody` a 2xx body must be delimited by `Content-Length` or chunked
/// coding: one that ends only with the connection (RFC 9112 §6.3 item 8) could have been
/// cut short by anyone able to close the TCP connection.
///
/// Pure: fed parts, answers with the response once it is complete.
struct HTTPResponseCollector {
    private enum State {
        case waitingForHead
        case readingBody(HTTPResponseHead, ByteBuffer)
        case complete
    }

    let maximumBodyBytes: Int
    let requiresDelimitedBody: Bool
    private var state = State.waitingForHead

    init(maximumBodyBytes: Int, requiresDelimitedBody: Bool = false) {
        self.maximumBodyBytes = maximumBodyBytes
        self.requiresDelimitedBody = requiresDelimitedBody
    }

    /// Takes the next part; returns the response when `part` completes it.
    mutating func received(_ part: HTTPClientResponsePart) throws(HTTPSClientError) -> HTTPSClient.Response? {
        switch (self.state, part) {
        case (.waitingForHead, .head(let head)):
            // Informational answers (1xx, RFC 9110 §15.2) precede the final one.
            guard head.status.code >= 200 else { return nil }
            let lengths = head.headers["content-length"]
            if let declared = lengths.first {
                guard lengths.count == 1, let length = Int(declared), length >= 0 else {
                    throw .malformedResponse("invalid Content-Length")
                }
                guard length <= self.maximumBodyBytes else { throw .responseTooLarge(limit: self.maximumBodyBytes) }
            }
            self.state = .readingBody(head, ByteBuffer())
            return nil
        case (.readingBody(let head, var body), .body(var part)):
            guard part.readableBytes <= self.maximumBodyBytes - body.readableBytes else {
                throw .responseTooLarge(limit: self.maximumBodyBytes)
            }
            self.state = .complete  // no copy-on-write of `body` while appending
            body.writeBuffer(&part)
            self.state = .readingBody(head, body)
            return nil
        case (.readingBody(let head, let body), .end):
            self.state = .complete
            if self.requiresDelimitedBody, (200..<300).contains(head.status.code), head.headers["content-length"].isEmpty,
                !head.headers["transfer-encoding"].contains(where: { $0.lowercased().contains("chunked") })
            {
                throw .malformedResponse("a body delimited only by the end of the connection")
            }
            return HTTPSClient.Response(
                status: Int(head.status.code), reason: Self.printable(head.status.reasonPhrase), headers: head.headers, body: body
            )
        case (.waitingForHead, .body), (.waitingForHead, .end):
            throw .malformedResponse("body before the status line")
        case (.readingBody, .head):
            throw .malformedResponse("a second response head")
        case (.complete, _):
            throw .malformedResponse("data after the response")
        }
    }

    /// Whether a complete response was read.
    var isComplete: Bool {
        if case .complete = self.state { return true }
        return false
    }

    /// The reason phrase as we show it: printable ASCII only, at most 64 characters.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }.prefix(64)))
    }
}
