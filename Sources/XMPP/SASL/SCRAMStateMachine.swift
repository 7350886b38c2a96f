import Foundation

/// The client side of SCRAM (RFC 5802 §3, §5, §7; SCRAM-SHA-256 per RFC 7677),
/// with optional `tls-exporter` channel binding (RFC 9266).
///
/// A pure value type: it neither performs I/O nor logs. The caller sends the
/// bytes it returns and feeds it the server's messages (all raw, not base64;
/// see ``SASLBase64``). The exchange:
///
/// 1. ``start()`` returns the client-first-message.
/// 2. ``challengeReceived(_:)`` with the server-first-message returns the
///    client-final-message (this runs PBKDF2, which costs CPU time in
///    proportion to the server's iteration count).
/// 3. The server-final-message (`v=` or `e=`) arrives either as the additional
///    data of `<success/>`, passed to ``successReceived(additionalData:)``, or
///    in a further `<challenge/>` (RFC 6120 §6.3.10), in which case
///    ``challengeReceived(_:)`` verifies it and returns an empty response, and a
///    `<success/>` without data follows.
///
/// The exchange succeeds only after the server signature has been verified:
/// SCRAM authenticates the server too (RFC 5802 §3), so `<success/>` without a
/// valid `v=` is an error. Any thrown error moves the machine to
/// ``State/failed(_:)``; errors are never thrown for conditions other than the
/// peer's messages or the caller's inputs, and nothing traps on peer input.
///
/// The password is never included in an error, ``description`` or mirror.
public struct SCRAMStateMachine: Sendable {
    /// Progress of the exchange. Carries no key material.
    public enum State: Hashable, Sendable {
        /// ``start()`` has not been called.
        case initial
        /// The client-first-message was produced; awaiting the server-first-message.
        case awaitingServerFirstMessage
        /// The client-final-message was produced; awaiting the server-final-message.
        case awaitingServerFinalMessage
        /// A valid server-final-message arrived in a challenge; awaiting `<success/>`.
        case serverVerified
        /// The server was authenticated and reported success.
        case succeeded
        /// The exchange failed; the machine accepts no further events.
        case failed(SASLError)
    }

    /// A condition worth reporting that does not prevent authentication.
    /// The machine records these instead of logging them.
    public enum Warning: Hashable, Sendable, CustomStringConvertible {
        /// The server's iteration count is below the recommended minimum of
        /// 4096 (RFC 5802 §5.1, RFC 7677 §4), weakening the stored credentials.
        case lowIterationCount(Int)

        public var description: String {
            switch self {
            case .lowIterationCount(let count):
                "SCRAM iteration count \(count) is below the recommended minimum of "
                    + "\(SCRAMStateMachine.minimumRecommendedIterationCount) (RFC 7677 §4)"
            }
        }
    }

    /// The iteration count below which a ``Warning/lowIterationCount(_:)`` is
    /// recorded (RFC 5802 §5.1, RFC 7677 §4).
    public static let minimumRecommendedIterationCount = 4096
    /// The default upper bound on the server's iteration count. PBKDF2 runs where the
    /// challenge is handled (the event loop), so a hostile server must not choose its cost
    /// freely; 100,000 rounds of SHA-256 take tens of milliseconds. Configurable.
    public static let defaultMaximumIterationCount = 100_000

    /// The hash function (SHA-1 for SCRAM-SHA-1, SHA-256 for SCRAM-SHA-256).
    public let algorithm: HashAlgorithm
    /// The channel-binding choice announced in the GS2 header.
    public let channelBinding: SCRAMChannelBinding
    /// Progress of the exchange.
    public private(set) var state: State = .initial
    /// Non-fatal findings, in the order they arose.
    public private(set) var warnings: [Warning] = []
    /// The server-first-message carried XEP-0474's `h`, and it matched.
    public private(set) var downgradeProtected = false

    /// `saslname` (RFC 5802 §5.1 `n`): the SASLprep'd username with `=` and `,` escaped.
    private let escapedUsername: [UInt8]
    /// The SASLprep'd password as UTF-8.
    private let preparedPassword: [UInt8]
    private let clientNonce: [UInt8]
    private let maximumIterationCount: Int
    /// Salted passwords derived before for this account (a reconnect skips PBKDF2).
    private let keyCache: SCRAMKeyCache?
    /// What the server-first-message's `h` must match (XEP-0474); nil: not checked.
    private let downgradeProtection: DowngradeProtection?
    private var clientFirstMessageBare: [UInt8] = []
    private var expectedServerSignature: [UInt8] = []

    /// Creates a client for one SCRAM exchange.
    ///
    /// - Parameters:
    ///   - algorithm: SHA-1 or SHA-256.
    ///   - username: the authentication identity; prepared with SASLprep
    ///     (RFC 4013, see `SASLPrep`) and escaped (`=`→`=3D`, `,`→`=2C`,
    ///     RFC 5802 §5.1).
    ///   - password: prepared with SASLprep before hashing (RFC 5802 §2.2 `Normalize`).
    ///   - clientNonce: a fresh random nonce of printable ASCII without `,`
    ///     (RFC 5802 §5.1 `r`, §7 `printable`); see ``makeClientNonce()``.
    ///     Injected so the exchange is deterministic under test.
    ///   - channelBinding: ``SCRAMChannelBinding/tlsExporter(data:)`` only for
    ///     a `-PLUS` mechanism.
    ///   - maximumIterationCount: the largest iteration count accepted from the
    ///     server; clamped to `1...Int32.max`.
    /// - Throws: ``SASLError/invalidUsername(_:)``, ``SASLError/invalidPassword``
    ///   or ``SASLError/invalidClientNonce``.
    public init(
        algorithm: HashAlgorithm,
        username: String,
        password: String,
        clientNonce: String,
        channelBinding: SCRAMChannelBinding = .none,
        maximumIterationCount: Int = SCRAMStateMachine.defaultMaximumIterationCount,
        keyCache: SCRAMKeyCache? = nil,
        downgradeProtection: DowngradeProtection? = nil
    ) throws(SASLError) {
        let preparedUsername: String
        do throws(SASLPrep.Violation) {
            preparedUsername = try SASLPrep.prepare(username)
        } catch {
            throw .invalidUsername(error.description)
        }
        let preparedPassword: String
        do throws(SASLPrep.Violation) {
            preparedPassword = try SASLPrep.prepare(password)
        } catch {
            throw .invalidPassword
        }
        let nonce = Array(clientNonce.utf8)
        guard !nonce.isEmpty, nonce.allSatisfy(Self.isPrintable) else {
            throw .invalidClientNonce
        }

        self.algorithm = algorithm
        self.channelBinding = channelBinding
        self.escapedUsername = Self.escape(preparedUsername)
        self.preparedPassword = Array(preparedPassword.utf8)
        self.clientNonce = nonce
        self.maximumIterationCount = min(max(maximumIterationCount, 1), Int(Int32.max))
        self.keyCache = keyCache
        self.downgradeProtection = downgradeProtection
    }

    /// A fresh client nonce: 24 random bytes (192 bits) as 32 base64 characters,
    /// which are all SCRAM-printable and contain no `,`.
    public static func makeClientNonce() throws(OpenSSLCryptoError) -> String {
        Data(try OpenSSLCrypto.randomBytes(count: 24)).base64EncodedString()
    }

    // MARK: - Events

    /// Produces the client-first-message (RFC 5802 §5.1, §7):
    /// `gs2-header "n=" saslname ",r=" c-nonce`.
    ///
    /// - Precondition: called once, in ``State/initial``.
    public mutating func start() -> [UInt8] {
        precondition(self.state == .initial, "SCRAMStateMachine.start() called twice")
        self.clientFirstMessageBare = Array("n=".utf8) + self.escapedUsername
            + Array(",r=".utf8) + self.clientNonce
        self.state = .awaitingServerFirstMessage
        return self.channelBinding.gs2Header + self.clientFirstMessageBare
    }

    /// Handles a `<challenge/>` payload.
    ///
    /// In ``State/awaitingServerFirstMessage`` this parses the
    /// server-first-message and returns the client-final-message. In
    /// ``State/awaitingServerFinalMessage`` it verifies a server-final-message
    /// sent as a challenge and returns the empty response (RFC 6120 §6.3.10).
    public mutating func challengeReceived(_ bytes: [UInt8]) throws(SASLError) -> [UInt8] {
        do throws(SASLError) {
            switch self.state {
            case .awaitingServerFirstMessage:
                let response = try self.clientFinalMessage(forServerFirst: bytes)
                self.state = .awaitingServerFinalMessage
                return response
            case .awaitingServerFinalMessage:
                try self.verifyServerFinal(bytes)
                self.state = .serverVerified
                return []
            case .initial:
                throw SASLError.unexpectedEvent("SCRAM challenge before the exchange started")
            case .serverVerified:
                throw SASLError.unexpectedEvent("SCRAM challenge after the server-final-message")
            case .succeeded:
                throw SASLError.unexpectedEvent("SCRAM challenge after success")
            case .failed:
                throw SASLError.unexpectedEvent("SCRAM challenge after failure")
            }
        } catch {
            self.fail(error)
            throw error
        }
    }

    /// Handles `<success/>` and its additional data, which for SCRAM is the
    /// server-final-message (RFC 6120 §6.3.10, RFC 5802 §5.1 `v`).
    ///
    /// Succeeds only once the server signature has been verified, here or in
    /// an earlier challenge. On error the caller must not treat the stream as
    /// authenticated and should close it.
    public mutating func successReceived(additionalData: [UInt8]) throws(SASLError) {
        do throws(SASLError) {
            switch self.state {
            case .awaitingServerFinalMessage:
                guard !additionalData.isEmpty else {
                    throw SASLError.missingServerSignature
                }
                try self.verifyServerFinal(additionalData)
                self.state = .succeeded
            case .serverVerified:
                if !additionalData.isEmpty {
                    try self.verifyServerFinal(additionalData)
                }
                self.state = .succeeded
            case .initial, .awaitingServerFirstMessage:
                throw SASLError.missingServerSignature
            case .succeeded:
                throw SASLError.unexpectedEvent("SCRAM success received twice")
            case .failed:
                throw SASLError.unexpectedEvent("SCRAM success after failure")
            }
        } catch {
            self.fail(error)
            throw error
        }
    }

    // MARK: - Message processing

    /// Parses the server-first-message (RFC 5802 §7):
    /// `[reserved-mext ","] nonce "," salt "," iteration-count ["," extensions]`,
    /// and computes the client-final-message (RFC 5802 §3).
    private mutating func clientFinalMessage(forServerFirst message: [UInt8]) throws(SASLError) -> [UInt8] {
        guard String(validating: message, as: UTF8.self) != nil else {
            throw .malformedChallenge("server-first-message is not valid UTF-8")
        }
        var attributes = try Self.attributes(of: message)[...]
        if let first = attributes.first {
            switch first.name {
            case UInt8(ascii: "m"):
                throw .unsupportedMandatoryExtension(SASLError.excerpt(bytes: first.value))
            case UInt8(ascii: "e"):
                // Not in the grammar, but some servers report errors this early.
                throw .serverError(SASLError.excerpt(bytes: first.value))
            default:
                break
            }
        }

        let nonce = try Self.take("r", from: &attributes)
        let saltText = try Self.take("s", from: &attributes)
        let iterationText = try Self.take("i", from: &attributes)
        // Remaining attributes are optional extensions (RFC 5802 §5.1), ignored but for
        // XEP-0474's `h`, checked before any proof is computed.
        if let protection = self.downgradeProtection {
            let hash = attributes.first(where: { $0.name == UInt8(ascii: "h") }).map { String(decoding: $0.value, as: UTF8.self) }
            try protection.verify(hash, algorithm: self.algorithm)
            self.downgradeProtected = hash != nil
        }

        guard nonce.allSatisfy(Self.isPrintable) else {
            throw .malformedChallenge("server nonce contains non-printable characters or ','")
        }
        guard nonce.count > self.clientNonce.count, nonce.starts(with: self.clientNonce) else {
            throw .serverNonceMismatch
        }

        guard let salt = Data(base64Encoded: Data(saltText)), !salt.isEmpty else {
            throw .malformedChallenge("salt is not valid non-empty base64")
        }
        guard salt.count <= Int(Int32.max) else {
            throw .malformedChallenge("salt is too long")
        }
        let iterations = try self.parseIterationCount(iterationText)
        if iterations < Self.minimumRecommendedIterationCount {
            self.warnings.append(.lowIterationCount(iterations))
        }

        let comma = [UInt8(ascii: ",")]
        let channelBindingText = Data(self.channelBinding.channelBindingInput).base64EncodedString()
        let clientFinalWithoutProof = Array("c=".utf8) + Array(channelBindingText.utf8)
            + Array(",r=".utf8) + nonce
        let authMessage = self.clientFirstMessageBare + comma + message + comma + clientFinalWithoutProof

        let algorithm = self.algorithm
        let password = self.preparedPassword
        let derive = { OpenSSLCrypto.pbkdf2(algorithm, password: password, salt: salt, iterations: iterations) }
        let saltedPassword =
            self.keyCache?.saltedPassword(algorithm: algorithm, password: password, salt: salt, iterations: iterations, derive: derive)
            ?? derive()
        let clientKey = OpenSSLCrypto.hmac(self.algorithm, key: saltedPassword, data: Array("Client Key".utf8))
        let storedKey = OpenSSLCrypto.digest(self.algorithm, clientKey)
        let clientSignature = OpenSSLCrypto.hmac(self.algorithm, key: storedKey, data: authMessage)
        let clientProof = zip(clientKey, clientSignature).map { $0 ^ $1 }
        let serverKey = OpenSSLCrypto.hmac(self.algorithm, key: saltedPassword, data: Array("Server Key".utf8))
        self.expectedServerSignature = OpenSSLCrypto.hmac(self.algorithm, key: serverKey, data: authMessage)

        let proofText = Data(clientProof).base64EncodedString()
        return clientFinalWithoutProof + Array(",p=".utf8) + Array(proofText.utf8)
    }

    /// Checks a server-final-message (RFC 5802 §7):
    /// `(server-error / verifier) ["," extensions]`.
    private func verifyServerFinal(_ message: [UInt8]) throws(SASLError) {
        let attributes = try Self.attributes(of: message)
        guard let first = attributes.first else {
            throw .malformedChallenge("empty server-final-message")
        }
        switch first.name {
        case UInt8(ascii: "e"):
            throw .serverError(SASLError.excerpt(bytes: first.value))
        case UInt8(ascii: "v"):
            guard let signature = Data(base64Encoded: Data(first.value)) else {
                throw .malformedChallenge("server signature is not valid base64")
            }
            guard OpenSSLCrypto.constantTimeEquals(Array(signature), self.expectedServerSignature) else {
                throw .invalidServerSignature
            }
        default:
            throw .malformedChallenge("server-final-message has neither 'v' nor 'e'")
        }
    }

    /// Parses `iteration-count = "i=" posit-number` (RFC 5802 §7).
    private func parseIterationCount(_ text: [UInt8]) throws(SASLError) -> Int {
        guard let leading = text.first, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(leading),
              text.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw .malformedChallenge("iteration count is not a positive integer")
        }
        var count = 0
        for digit in text {
            count = count * 10 + Int(digit - UInt8(ascii: "0"))
            guard count <= self.maximumIterationCount else {
                throw .iterationCountTooHigh(maximum: self.maximumIterationCount)
            }
        }
        return count
    }

    /// Enters ``State/failed(_:)``, keeping the first error if already failed.
    private mutating func fail(_ error: SASLError) {
        if case .failed = self.state {
            return
        }
        self.state = .failed(error)
        self.expectedServerSignature = []
    }

    // MARK: - Syntax helpers

    private struct Attribute {
        var name: UInt8
        var value: [UInt8]
    }

    /// Splits a SCRAM message into `attr-val` pairs (RFC 5802 §7): a single
    /// ASCII letter, `=`, and a value without `,`.
    private static func attributes(of message: [UInt8]) throws(SASLError) -> [Attribute] {
        guard !message.isEmpty else {
            throw .malformedChallenge("empty SCRAM message")
        }
        var result: [Attribute] = []
        for part in message.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            guard part.count >= 2,
                  let name = part.first, Self.isASCIILetter(name),
                  part[part.startIndex + 1] == UInt8(ascii: "=") else {
                throw .malformedChallenge("invalid attribute '\(SASLError.excerpt(bytes: part, limit: 32))'")
            }
            result.append(Attribute(name: name, value: Array(part.dropFirst(2))))
        }
        return result
    }

    /// Removes the next attribute, which must be `name`, and returns its non-empty value.
    private static func take(
        _ name: Unicode.Scalar,
        from attributes: inout ArraySlice<Attribute>
    ) throws(SASLError) -> [UInt8] {
        guard let attribute = attributes.popFirst(), attribute.name == UInt8(ascii: name) else {
            throw .malformedChallenge("expected attribute '\(name)' in server-first-message")
        }
        guard !attribute.value.isEmpty else {
            throw .malformedChallenge("attribute '\(name)' is empty")
        }
        return attribute.value
    }

    /// RFC 5802 §7 `printable`: `%x21-2B / %x2D-7E` (ASCII graphic characters except `,`).
    private static func isPrintable(_ byte: UInt8) -> Bool {
        (0x21...0x7E).contains(byte) && byte != UInt8(ascii: ",")
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    /// `saslname` (RFC 5802 §5.1): `=` becomes `=3D` and `,` becomes `=2C`.
    static func escape(_ username: String) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(username.utf8.count)
        for byte in username.utf8 {
            switch byte {
            case UInt8(ascii: "="): result += Array("=3D".utf8)
            case UInt8(ascii: ","): result += Array("=2C".utf8)
            default: result.append(byte)
            }
        }
        return result
    }
}

extension SCRAMStateMachine: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A summary without credentials or key material.
    public var description: String {
        "SCRAMStateMachine(algorithm: \(self.algorithm), state: \(self.state), warnings: \(self.warnings))"
    }

    public var debugDescription: String { self.description }

    /// Reflects only non-secret properties, so `dump()` cannot reveal the password.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["algorithm": self.algorithm, "state": self.state, "warnings": self.warnings],
            displayStyle: .struct
        )
    }
}
