/// The opening of a component's stream (XEP-0114 §3), without I/O: we send the stream
/// header to the component's domain; the server answers with its header, which carries
/// the stream id; we send `<handshake>` with the lowercase hex SHA-1 of the stream id and
/// the shared secret; an empty `<handshake/>` back means the server accepted us. From then
/// on every first-level element is a stanza for the component.
///
/// A stream error during the handshake is the server's refusal: `not-authorized` (wrong
/// secret), `conflict` (another connection holds the domain), `host-unknown` (no such
/// component declared).
public struct ComponentNegotiationStateMachine: Sendable {
    public enum State: Hashable, Sendable {
        case initial
        case awaitingStreamHeader
        case awaitingHandshake
        case ready
        case closing
        case failed(XMPPClientError)
    }

    public enum Action: Hashable, Sendable {
        case none
        /// Write our stream header.
        case sendStreamHeader
        /// Write this element.
        case send(XMLElement)
        /// The server accepted the handshake: the component is connected.
        case ready
        /// Pass a stanza on.
        case emit(XMLElement)
        /// Send this stream error, then close.
        case closeWithStreamError(StreamErrorCondition, XMPPClientError)
        /// Close the stream and the connection.
        case close(XMPPClientError)
        /// Write `</stream:stream>` (our side ends).
        case sendStreamClose
        /// Close the connection (both sides ended).
        case finish
    }

    public private(set) var state: State = .initial
    private let secret: String

    public init(secret: String) {
        self.secret = secret
    }

    /// The TCP connection is open.
    public mutating func connected() -> Action {
        guard case .initial = self.state else { return .none }
        self.state = .awaitingStreamHeader
        return .sendStreamHeader
    }

    /// The server's stream header arrived.
    public mutating func streamOpened(attributes: [XMLAttribute]) -> Action {
        guard case .awaitingStreamHeader = self.state else {
            return self.closeWithStreamError(.notAuthorized, .unexpectedElement("second stream header"))
        }
        guard let id = attributes.first(where: { $0.name == "id" })?.value, !id.isEmpty else {
            return self.closeWithStreamError(.invalidXML, .unexpectedElement("stream header without an id"))
        }
        self.state = .awaitingHandshake
        var handshake = XMLElement(name: "handshake", namespace: XMPPNamespace.client)
        handshake.append(text: Self.handshakeDigest(streamID: id, secret: self.secret))
        return .send(handshake)
    }

    /// A first-level element arrived.
    public mutating func elementReceived(_ element: XMLElement) -> Action {
        if element.name == "error", element.namespace == XMPPNamespace.stream {
            let error = StreamNegotiationStateMachine.streamError(from: element)
            return self.fail(error)
        }
        switch self.state {
        case .ready:
            return .emit(element)
        case .closing, .failed:
            return .none
        case .awaitingHandshake:
            guard element.name == "handshake", element.namespace == XMPPNamespace.client || element.namespace == XMPPNamespace.componentAccept else {
                return self.closeWithStreamError(.notAuthorized, .unexpectedElement(element.name))
            }
            self.state = .ready
            return .ready
        case .initial, .awaitingStreamHeader:
            return self.closeWithStreamError(.notAuthorized, .unexpectedElement(element.name))
        }
    }

    /// The server's XML broke the rules.
    public mutating func decodingFailed(_ error: XMLStreamError) -> Action {
        if case .failed = self.state { return .none }
        return self.closeWithStreamError(error.condition, .invalidServerXML(error))
    }

    /// We want to end the stream.
    public mutating func closeRequested() -> Action {
        switch self.state {
        case .closing, .failed:
            return .none
        case .initial, .awaitingStreamHeader, .awaitingHandshake, .ready:
            self.state = .closing
            return .sendStreamClose
        }
    }

    /// The server sent `</stream:stream>` or the connection closed.
    public mutating func streamClosed() -> Action {
        switch self.state {
        case .failed:
            return .none
        case .closing:
            return .finish
        case .initial, .awaitingStreamHeader, .awaitingHandshake, .ready:
            return self.fail(.closedByServer)
        }
    }

    /// The handshake did not complete in time.
    public mutating func timedOut() -> Action {
        switch self.state {
        case .ready, .closing, .failed:
            return .none
        case .initial, .awaitingStreamHeader, .awaitingHandshake:
            return self.closeWithStreamError(.connectionTimeout, .timedOut("component handshake"))
        }
    }

    /// Lowercase hex SHA-1 of the stream id followed by the secret (XEP-0114 §3).
    public static func handshakeDigest(streamID: String, secret: String) -> String {
        let digest = OpenSSLCrypto.digest(.sha1, Array((streamID + secret).utf8))
        let hex = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digest.count * 2)
        for byte in digest {
            bytes.append(hex[Int(byte >> 4)])
            bytes.append(hex[Int(byte & 0x0f)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func fail(_ error: XMPPClientError) -> Action {
        if case .failed = self.state { return .none }
        self.state = .failed(error)
        return .close(error)
    }

    private mutating func closeWithStreamError(_ condition: StreamErrorCondition, _ error: XMPPClientError) -> Action {
        self.state = .failed(error)
        return .closeWithStreamError(condition, error)
    }
}
