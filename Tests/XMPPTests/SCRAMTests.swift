import Testing

@testable import XMPP

/// SCRAM client tests: RFC 5802 §5 and RFC 7677 §3 vectors, plus validation.
@Suite("SCRAM")
struct SCRAMTests {
    // RFC 5802 §5 (SCRAM-SHA-1).
    static let sha1ClientNonce = "fyko+d2lbbFgONRv9qkxdawL"
    static let sha1ServerFirst = "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"
    static let sha1ClientFinal =
        "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts="
    static let sha1ServerFinal = "v=rmF9pqV8S7suAoZWja4dJRkFsKQ="

    // RFC 7677 §3 (SCRAM-SHA-256).
    static let sha256ClientNonce = "rOprNGfwEbeRWgbNEkqO"
    static let sha256ServerFirst =
        "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    static let sha256ClientFinal =
        "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    static let sha256ServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    static func sha1Machine(
        username: String = "user",
        channelBinding: SCRAMChannelBinding = .none
    ) throws -> SCRAMStateMachine {
        try SCRAMStateMachine(
            algorithm: .sha1,
            username: username,
            password: "pencil",
            clientNonce: sha1ClientNonce,
            channelBinding: channelBinding
        )
    }

    /// Runs the SHA-1 machine up to the point where it expects a server-first-message.
    static func startedSHA1Machine() throws -> SCRAMStateMachine {
        var machine = try sha1Machine()
        _ = machine.start()
        return machine
    }

    // MARK: - RFC vectors

    @Test("RFC 5802 §5 SCRAM-SHA-1 exchange")
    func rfc5802Vector() throws {
        var machine = try Self.sha1Machine()
        #expect(Self.text(machine.start()) == "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL")
        #expect(machine.state == .awaitingServerFirstMessage)

        let clientFinal = try machine.challengeReceived(Self.bytes(Self.sha1ServerFirst))
        #expect(Self.text(clientFinal) == Self.sha1ClientFinal)
        #expect(machine.state == .awaitingServerFinalMessage)

        try machine.successReceived(additionalData: Self.bytes(Self.sha1ServerFinal))
        #expect(machine.state == .succeeded)
        #expect(machine.warnings.isEmpty)
    }

    @Test("RFC 7677 §3 SCRAM-SHA-256 exchange")
    func rfc7677Vector() throws {
        var machine = try SCRAMStateMachine(
            algorithm: .sha256,
            username: "user",
            password: "pencil",
            clientNonce: Self.sha256ClientNonce
        )
        #expect(Self.text(machine.start()) == "n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
        let clientFinal = try machine.challengeReceived(Self.bytes(Self.sha256ServerFirst))
        #expect(Self.text(clientFinal) == Self.sha256ClientFinal)
        try machine.successReceived(additionalData: Self.bytes(Self.sha256ServerFinal))
        #expect(machine.state == .succeeded)
    }

    @Test("server-final-message in a challenge, then empty success (RFC 6120 §6.3.10)")
    func serverFinalInChallenge() throws {
        var machine = try Self.startedSHA1Machine()
        _ = try machine.challengeReceived(Self.bytes(Self.sha1ServerFirst))
        let response = try machine.challengeReceived(Self.bytes(Self.sha1ServerFinal))
        #expect(response.isEmpty)
        #expect(machine.state == .serverVerified)
        try machine.successReceived(additionalData: [])
        #expect(machine.state == .succeeded)
    }

    // MARK: - Channel binding

    @Test("tls-exporter binding: GS2 header p=tls-exporter,, and c= covers header and data")
    func tlsExporterBinding() throws {
        // Expected values computed independently (Python hashlib) for the RFC 7677
        // inputs with channel-binding data 0x00…0x1F.
        let exporter = [UInt8](0..<32)
        var machine = try SCRAMStateMachine(
            algorithm: .sha256,
            username: "user",
            password: "pencil",
            clientNonce: Self.sha256ClientNonce,
            channelBinding: .tlsExporter(data: exporter)
        )
        #expect(Self.text(machine.start()) == "p=tls-exporter,,n=user,r=rOprNGfwEbeRWgbNEkqO")

        let clientFinal = Self.text(try machine.challengeReceived(Self.bytes(Self.sha256ServerFirst)))
        let expectedC = SASLBase64.encode(Self.bytes("p=tls-exporter,,") + exporter)
        #expect(clientFinal.hasPrefix("c=\(expectedC),"))
        #expect(
            clientFinal
                == "c=cD10bHMtZXhwb3J0ZXIsLAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f,"
                + "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                + "p=QC6CS20quADQRb3mT99YUH+n3VJxUvzuK0K0E1Vrs2M="
        )
        try machine.successReceived(additionalData: Self.bytes("v=2GiAgapEppLVlUXbxUDksL3VgYHzuqiK5tR4mhJGgvs="))
        #expect(machine.state == .succeeded)
    }

    @Test("client supports binding but server offered no -PLUS: GS2 flag y, c=eSws")
    func bindingNotSupportedByServer() throws {
        var machine = try Self.sha1Machine(channelBinding: .notSupportedByServer)
        #expect(Self.text(machine.start()) == "y,,n=user,r=fyko+d2lbbFgONRv9qkxdawL")
        let clientFinal = Self.text(try machine.challengeReceived(Self.bytes(Self.sha1ServerFirst)))
        #expect(
            clientFinal == "c=eSws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=BjZF5dV+EkD3YCb3pH3IP8riMGw="
        )
        try machine.successReceived(additionalData: Self.bytes("v=dsprQ5R2AGYt1kn4bQRwTAE0PTU="))
        #expect(machine.state == .succeeded)
    }

    // MARK: - Server authentication

    @Test("server nonce must extend the client nonce")
    func serverNonceMismatch() throws {
        for serverFirst in [
            "r=XXXX+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096",
            "r=fyko+d2lbbFgONRv9qkxdawL,s=QSXCR+Q6sek8bf92,i=4096",  // not longer
            "r=fyko+d2lbbFgONRv9,s=QSXCR+Q6sek8bf92,i=4096",  // truncated
        ] {
            var machine = try Self.startedSHA1Machine()
            #expect(throws: SASLError.serverNonceMismatch) {
                try machine.challengeReceived(Self.bytes(serverFirst))
            }
            #expect(machine.state == .failed(.serverNonceMismatch))
        }
    }

    @Test("wrong server signature: server not authenticated")
    func wrongServerSignature() throws {
        var machine = try Self.startedSHA1Machine()
        _ = try machine.challengeReceived(Self.bytes(Self.sha1ServerFirst))
        #expect(throws: SASLError.invalidServerSignature) {
            try machine.successReceived(additionalData: Self.bytes("v=AAAAAAAAAAAAAAAAAAAAAAAAAAA="))
        }
        #expect(machine.state == .failed(.invalidServerSignature))
    }

    @Test("server signature of the wrong algorithm length is rejected")
    func truncatedServerSignature() throws {
        var machine = try Self.startedSHA1Machine()
        _ = try machine.challengeReceived(Self.bytes(Self.sha1ServerFirst))
        #expect(throws: SASLError.invalidServerSignature) {
            try machine.successReceived(additionalData: Self.bytes("v=rmF9pqV8S7suAoZWja4d"))
        }
    }

    @Test("success without v= is refused")
    func successWithoutSignature() throws {
        var machine = try Self.startedSHA1Machine()
        _ = try machine.challengeReceived(Self.bytes(Self.sha1ServerFirst))
        #expect(throws: SASLError.missingServerSignature) {
            try machine.successReceived(additionalData: [])
        }

        var early = try Self.startedSHA1Machine()
        #expect(throws: SASLError.missingServerSignature) {
            try early.successReceived(additionalData: [])
        }
    }

    @Test("e= server error becomes a typed error, in success data or a challenge")
    func serverErrorAttribute() throws {
        var machine = try Self.startedSHA1Machine()
        _ = try machine.challengeReceived(Self.bytes(Self.sha1ServerFirst))
        #expect(throws: SASLError.serverError("invalid-proof")) {
            try machine.successReceived(additionalData: Self.bytes("e=invalid-proof"))
        }

        var viaChallenge = try Self.startedSHA1Machine()
        _ = try viaChallenge.challengeReceived(Self.bytes(Self.sha1ServerFirst))
        #expect(throws: SASLError.serverError("other-error")) {
            try viaChallenge.challengeReceived(Self.bytes("e=other-error"))
        }
        #expect(viaChallenge.state == .failed(.serverError("other-error")))
    }

    // MARK: - Validation of the server-first-message

    @Test("iteration count below 4096 is accepted with a warning")
    func lowIterationCountWarning() throws {
        var machine = try Self.startedSHA1Machine()
        let clientFinal = try machine.challengeReceived(
            Self.bytes("r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=1024")
        )
        #expect(Self.text(clientFinal).hasPrefix("c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p="))
        #expect(machine.warnings == [.lowIterationCount(1024)])
        #expect(machine.state == .awaitingServerFinalMessage)
    }

    @Test("unknown mandatory extension m= is an error")
    func mandatoryExtension() throws {
        var machine = try Self.startedSHA1Machine()
        #expect(throws: SASLError.unsupportedMandatoryExtension("foo")) {
            try machine.challengeReceived(
                Self.bytes("m=foo,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096")
            )
        }
    }

    @Test("optional extensions after i= are ignored")
    func optionalExtensionIgnored() throws {
        var machine = try Self.startedSHA1Machine()
        let serverFirst = Self.sha1ServerFirst + ",x=whatever"
        let clientFinal = try machine.challengeReceived(Self.bytes(serverFirst))
        // The proof differs from the RFC's because AuthMessage includes the extension.
        #expect(Self.text(clientFinal).hasPrefix("c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p="))
        #expect(Self.text(clientFinal) != Self.sha1ClientFinal)
    }

    @Test(
        "malformed server-first-messages are rejected",
        arguments: [
            "",
            "garbage",
            "s=QSXCR+Q6sek8bf92,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,i=4096",  // wrong order
            "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92",  // no i
            "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=0",
            "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=-1",
            "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=abc",
            "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=",
            "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=not*base64,i=4096",
            "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=,i=4096",
            "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096,",  // trailing comma
        ]
    )
    func malformedServerFirst(message: String) throws {
        var machine = try Self.startedSHA1Machine()
        do {
            _ = try machine.challengeReceived(Self.bytes(message))
            Issue.record("accepted malformed server-first-message \(message)")
        } catch {
            guard case .malformedChallenge = error else {
                Issue.record("unexpected error \(error)")
                return
            }
        }
        guard case .failed = machine.state else {
            Issue.record("machine not failed: \(machine.state)")
            return
        }
    }

    @Test("non-UTF-8 server-first-message is rejected")
    func invalidUTF8() throws {
        var machine = try Self.startedSHA1Machine()
        let message = Self.bytes(Self.sha1ServerFirst) + Self.bytes(",x=") + [0xFF, 0xFE]
        #expect(throws: SASLError.malformedChallenge("server-first-message is not valid UTF-8")) {
            try machine.challengeReceived(message)
        }
    }

    @Test("iteration count above the maximum (or overflowing Int) is refused before PBKDF2")
    func iterationCountTooHigh() throws {
        for count in ["10000001", "99999999999999999999999999999"] {
            var machine = try Self.startedSHA1Machine()
            #expect(throws: SASLError.iterationCountTooHigh(maximum: SCRAMStateMachine.defaultMaximumIterationCount)) {
                try machine.challengeReceived(
                    Self.bytes("r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=\(count)")
                )
            }
        }
    }

    @Test("events out of order are errors, not traps")
    func outOfOrderEvents() throws {
        var unstarted = try Self.sha1Machine()
        #expect(throws: SASLError.self) {
            try unstarted.challengeReceived(Self.bytes(Self.sha1ServerFirst))
        }

        var finished = try Self.startedSHA1Machine()
        _ = try finished.challengeReceived(Self.bytes(Self.sha1ServerFirst))
        try finished.successReceived(additionalData: Self.bytes(Self.sha1ServerFinal))
        #expect(throws: SASLError.self) {
            try finished.challengeReceived(Self.bytes(Self.sha1ServerFinal))
        }
        #expect(throws: SASLError.self) {
            try finished.successReceived(additionalData: Self.bytes(Self.sha1ServerFinal))
        }
    }

    // MARK: - Inputs

    @Test("username escaping: ',' becomes =2C and '=' becomes =3D")
    func usernameEscaping() throws {
        var machine = try Self.sha1Machine(username: "a,b=c")
        #expect(Self.text(machine.start()) == "n,,n=a=2Cb=3Dc,r=fyko+d2lbbFgONRv9qkxdawL")
        #expect(Self.text(SCRAMStateMachine.escape("=,")) == "=3D=2C")
    }

    @Test("SASLprep examples of RFC 4013 §3")
    func saslPrep() throws {
        #expect(try SASLPrep.prepare("I\u{00AD}X") == "IX")
        #expect(try SASLPrep.prepare("user") == "user")
        #expect(try SASLPrep.prepare("USER") == "USER")
        #expect(try SASLPrep.prepare("\u{00AA}") == "a")
        #expect(try SASLPrep.prepare("\u{2168}") == "IX")
        #expect(try SASLPrep.prepare("a\u{00A0}b") == "a b")
        #expect(throws: SASLPrep.Violation.prohibited("\u{0007}")) {
            try SASLPrep.prepare("\u{0007}")
        }
        #expect(throws: SASLPrep.Violation.empty) {
            try SASLPrep.prepare("\u{00AD}")
        }
    }

    @Test("unusable credentials and nonces are typed errors")
    func invalidInputs() {
        #expect(throws: SASLError.invalidUsername("contains prohibited character U+0007")) {
            try SCRAMStateMachine(algorithm: .sha1, username: "a\u{0007}", password: "p", clientNonce: "abc")
        }
        #expect(throws: SASLError.invalidPassword) {
            try SCRAMStateMachine(algorithm: .sha1, username: "user", password: "", clientNonce: "abc")
        }
        for nonce in ["", "a,b", "a b", "é"] {
            #expect(throws: SASLError.invalidClientNonce) {
                try SCRAMStateMachine(algorithm: .sha1, username: "user", password: "pencil", clientNonce: nonce)
            }
        }
    }

    @Test("the password appears in no description, mirror or error")
    func passwordNotRevealed() throws {
        let secret = "s3cr3t-Pa55word"
        var machine = try SCRAMStateMachine(
            algorithm: .sha1, username: "user", password: secret, clientNonce: Self.sha1ClientNonce
        )
        _ = machine.start()
        var dumped = ""
        dump(machine, to: &dumped)
        #expect(!dumped.contains(secret))
        #expect(!String(describing: machine).contains(secret))
        #expect(!String(reflecting: machine).contains(secret))

        #expect(throws: SASLError.invalidPassword) {
            try SCRAMStateMachine(algorithm: .sha1, username: "user", password: secret + "\u{0007}", clientNonce: "n")
        }
        #expect(!SASLError.invalidPassword.description.contains(secret))
    }

    @Test("generated client nonces are printable, comma-free and distinct")
    func generatedNonce() throws {
        let first = try SCRAMStateMachine.makeClientNonce()
        let second = try SCRAMStateMachine.makeClientNonce()
        #expect(first.utf8.count == 32)
        #expect(first != second)
        #expect(first.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: ",") })
    }

    // MARK: - Primitives

    @Test("OpenSSL digest and HMAC match known vectors")
    func primitives() {
        func hex(_ bytes: [UInt8]) -> String {
            bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
                .joined()
        }
        #expect(hex(OpenSSLCrypto.digest(.sha1, Self.bytes("abc"))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(
            hex(OpenSSLCrypto.digest(.sha256, [UInt8]()))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        )
        // RFC 4231 test case 2.
        #expect(
            hex(OpenSSLCrypto.hmac(.sha256, key: Self.bytes("Jefe"), data: Self.bytes("what do ya want for nothing?")))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        )
        // RFC 6070 test case 2.
        #expect(
            hex(OpenSSLCrypto.pbkdf2(.sha1, password: Self.bytes("password"), salt: Self.bytes("salt"), iterations: 2))
                == "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"
        )
        #expect(OpenSSLCrypto.hmac(.sha1, key: [UInt8](), data: [UInt8]()).count == HashAlgorithm.sha1.digestLength)
        #expect(OpenSSLCrypto.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!OpenSSLCrypto.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!OpenSSLCrypto.constantTimeEquals([1, 2], [1, 2, 3]))
    }
}
