import Foundation

/// The client side of XMPP SASL negotiation (RFC 6120 §6.3–§6.4): selects
/// the strongest acceptable mechanism and drives its exchange.
///
/// A pure value type: no I/O, no logging, no base64. The caller:
///
/// 1. calls ``start(offeredMechanisms:tlsActive:channelBindingData:)`` with the
///    `<mechanisms/>` of the stream features and sends the resulting `<auth/>`;
/// 2. feeds each server element to ``challengeReceived(_:)``,
///    ``successReceived(additionalData:)`` or
///    ``failureReceived(condition:text:)`` (payloads already base64-decoded,
///    see ``SASLBase64``) and performs the returned ``Action``.
///
/// Selection (RFC 6120 §6.3.3): mechanisms are tried strongest first
/// (``SASLMechanism/strength``) among those both offered and allowed by the
/// ``SASLConfiguration``; a `-PLUS` mechanism needs TLS and `tls-exporter`
/// channel-binding data (RFC 9266), and PLAIN needs TLS unless
/// ``SASLConfiguration/allowPlainWithoutTLS`` is set (RFC 4616 §6).
///
/// On ``Action/failed(_:)`` authentication is over. If the error arose while
/// the exchange was still open (a bad challenge), the caller should send
/// `<abort/>` (RFC 6120 §6.4.4) or close the stream; if it arose on
/// `<success/>` (the server could not prove its identity), the caller must
/// close the stream and not treat it as authenticated.
///
/// The password is never included in an action, error, ``description`` or mirror.
public struct SASLStateMachine: Sendable {
    /// Progress of the negotiation.
    public enum State: Hashable, Sendable {
        /// Not started.
        case idle
        /// `<auth/>` was sent with this mechanism; the exchange is in progress.
        case authenticating(SASLMechanism)
        /// The server accepted the credentials (and, for SCRAM, proved its own).
        case succeeded(SASLMechanism)
        /// Negotiation failed; further events leave it failed.
        case failed(SASLError)
    }

    /// What the caller must do next.
    public enum Action: Hashable, Sendable {
        /// Send `<auth mechanism='mechanism'>` with the base64 of
        /// `initialResponse`, or empty if `nil` (RFC 6120 §6.4.2).
        case sendAuth(mechanism: String, initialResponse: [UInt8]?)
        /// Send `<response/>` with the base64 of the bytes (`=` if empty).
        case sendResponse([UInt8])
        /// Authentication succeeded: restart the stream (RFC 6120 §6.4.6).
        case succeeded
        /// Authentication failed for this reason.
        case failed(SASLError)
    }

    /// The mechanism policy in force.
    public let configuration: SASLConfiguration
    /// Non-fatal findings of the exchange (such as a low SCRAM iteration
    /// count), for the caller to log.
    public private(set) var warnings: [SCRAMStateMachine.Warning] = []

    private let username: String
    private let password: String
    private let clientNonce: String
    private let keyCache: SCRAMKeyCache?
    private var phase: Phase = .idle
    /// The binding announced in the GS2 header, once a SCRAM exchange started.
    public private(set) var channelBinding: SCRAMChannelBinding?
    /// The server proved with XEP-0474's `h` that nothing was stripped from its offers.
    public private(set) var downgradeProtected = false

    private enum Phase: Sendable {
        case idle
        case plain
        case scram(SASLMechanism, SCRAMStateMachine)
        case succeeded(SASLMechanism)
        case failed(SASLError)
    }

    /// Creates a negotiation for one authentication attempt.
    ///
    /// - Parameters:
    ///   - username: the authentication identity (for XMPP, the account's
    ///     localpart); prepared with SASLprep (RFC 4013).
    ///   - password: prepared with SASLprep (RFC 4013).
    ///   - clientNonce: a fresh SCRAM client nonce, used only if a SCRAM
    ///     mechanism is selected; see ``SCRAMStateMachine/makeClientNonce()``.
    ///   - configuration: which mechanisms may be used.
    ///
    /// Unusable credentials are reported by `start` as ``Action/failed(_:)``.
    public init(
        username: String,
        password: String,
        clientNonce: String,
        configuration: SASLConfiguration = SASLConfiguration(),
        keyCache: SCRAMKeyCache? = nil
    ) {
        self.username = username
        self.password = password
        self.clientNonce = clientNonce
        self.configuration = configuration
        self.keyCache = keyCache
    }

    /// Progress of the negotiation.
    public var state: State {
        switch self.phase {
        case .idle: .idle
        case .plain: .authenticating(.plain)
        case .scram(let mechanism, _): .authenticating(mechanism)
        case .succeeded(let mechanism): .succeeded(mechanism)
        case .failed(let error): .failed(error)
        }
    }

    /// The mechanism chosen by `start`, if any.
    public var selectedMechanism: SASLMechanism? {
        switch self.phase {
        case .idle, .failed: nil
        case .plain: .plain
        case .scram(let mechanism, _), .succeeded(let mechanism): mechanism
        }
    }

    // MARK: - Selection

    /// Picks the strongest mechanism that is offered, allowed by
    /// `configuration`, and usable on this stream (RFC 6120 §6.3.3).
    ///
    /// - Parameters:
    ///   - offered: the mechanism names from `<mechanisms/>`, in any order.
    ///   - tlsActive: whether the stream is TLS-protected.
    ///   - channelBindingAvailable: whether `tls-exporter` data (RFC 9266) is
    ///     available for a `-PLUS` mechanism.
    /// - Throws: ``SASLError/plainWithoutTLS`` if only PLAIN was usable and TLS
    ///   is off; otherwise ``SASLError/noAcceptableMechanism(offered:)``.
    public static func selectMechanism(
        offered: [String],
        tlsActive: Bool,
        channelBindingAvailable: Bool,
        configuration: SASLConfiguration
    ) throws(SASLError) -> SASLMechanism {
        let offeredNames = Set(offered.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
        var plainRefusedWithoutTLS = false
        for mechanism in SASLMechanism.strongestFirst
        where offeredNames.contains(mechanism.rawValue) && configuration.allowedMechanisms.contains(mechanism) {
            switch mechanism {
            case .scramSHA256Plus, .scramSHA1Plus:
                guard tlsActive, channelBindingAvailable else { continue }
            case .scramSHA256, .scramSHA1:
                break
            case .plain:
                guard tlsActive || configuration.allowPlainWithoutTLS else {
                    plainRefusedWithoutTLS = true
                    continue
                }
            }
            return mechanism
        }
        if plainRefusedWithoutTLS {
            throw .plainWithoutTLS
        }
        throw .noAcceptableMechanism(offered: offered)
    }

    // MARK: - Events

    /// Selects a mechanism and produces the `<auth/>` to send, with `tls-exporter` data
    /// only and no XEP-0440 announcement (a server of RFC 6120's SASL before XEP-0440).
    public mutating func start(
        offeredMechanisms: [String],
        tlsActive: Bool,
        channelBindingData: [UInt8]?
    ) -> Action {
        self.start(
            offeredMechanisms: offeredMechanisms, tlsActive: tlsActive, channelBinding: ChannelBindingData(exporter: channelBindingData),
            announcedTypes: nil, profile: .sasl1
        )
    }

    /// Selects a mechanism and produces the `<auth/>` (or SASL2 `<authenticate>`) to send.
    ///
    /// - Parameters:
    ///   - offeredMechanisms: the mechanism names of the profile in use.
    ///   - tlsActive: whether the stream is TLS-protected.
    ///   - channelBinding: what the TLS connection can bind with; ignored without TLS.
    ///   - announcedTypes: XEP-0440's channel-binding types; nil when not announced.
    ///   - profile: RFC 6120's SASL or XEP-0388's SASL2 (XEP-0440 §3 differs for them).
    ///
    /// The binding is chosen by ``ChannelBindingChoice``; a SCRAM exchange checks the
    /// server's downgrade-protection hash (XEP-0474) over exactly these lists.
    public mutating func start(
        offeredMechanisms: [String],
        tlsActive: Bool,
        channelBinding: ChannelBindingData,
        announcedTypes: [String]?,
        profile: ChannelBindingChoice.Profile
    ) -> Action {
        guard case .idle = self.phase else {
            return self.fail(.unexpectedEvent("SASL negotiation started twice"))
        }
        let data = tlsActive ? channelBinding : .none
        let names = offeredMechanisms.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let plusAllowed = self.configuration.allowedMechanisms.contains(where: \.usesChannelBinding)
        var choice: ChannelBindingChoice
        do throws(SASLError) {
            choice = try ChannelBindingChoice.choose(
                offeredPlus: names.contains(where: Self.isPlusMechanismName), announcedTypes: announcedTypes,
                available: plusAllowed ? data.available : [], profile: profile
            )
        } catch {
            return self.fail(error)
        }
        let usablePlus = names.contains { SASLMechanism(rawValue: $0).map { $0.usesChannelBinding && self.configuration.allowedMechanisms.contains($0) } ?? false }
        if case .bind = choice, !usablePlus {
            // The server binds only with -PLUS mechanisms we do not have.
            choice = .none(requiresDowngradeProtection: false)
        }
        var bindingType: ChannelBindingChoice.ChannelBindingType?
        if case .bind(let type) = choice { bindingType = type }

        let mechanism: SASLMechanism
        do throws(SASLError) {
            mechanism = try Self.selectMechanism(
                offered: names,
                tlsActive: tlsActive,
                channelBindingAvailable: bindingType != nil,
                configuration: self.configuration
            )
        } catch {
            return self.fail(error)
        }
        let protection = DowngradeProtection(
            mechanisms: names, channelBindingTypes: announcedTypes, required: choice == .none(requiresDowngradeProtection: true)
        )

        let algorithm: HashAlgorithm
        switch mechanism {
        case .plain:
            // PLAIN has no server-first-message to carry the proof a downgrade needs.
            guard !protection.required else { return self.fail(.downgradeProtectionMissing) }
            return self.startPLAIN()
        case .scramSHA256Plus, .scramSHA256:
            algorithm = .sha256
        case .scramSHA1Plus, .scramSHA1:
            algorithm = .sha1
        }

        let binding: SCRAMChannelBinding
        if mechanism.usesChannelBinding, let bindingType, let bytes = data.data(for: bindingType) {
            binding = SCRAMChannelBinding(bindingType, data: bytes)
        } else if choice == .notSupportedByServer {
            // We could bind, but the server offered no -PLUS mechanism: say so with 'y' so
            // a server that does support binding detects a downgrade (RFC 5802 §6).
            binding = .notSupportedByServer
        } else {
            binding = .none
        }

        do throws(SASLError) {
            var scram = try SCRAMStateMachine(
                algorithm: algorithm,
                username: self.username,
                password: self.password,
                clientNonce: self.clientNonce,
                channelBinding: binding,
                maximumIterationCount: self.configuration.maximumIterationCount,
                keyCache: self.keyCache,
                downgradeProtection: protection
            )
            let clientFirst = scram.start()
            self.phase = .scram(mechanism, scram)
            self.channelBinding = binding
            return .sendAuth(mechanism: mechanism.rawValue, initialResponse: clientFirst)
        } catch {
            return self.fail(error)
        }
    }

    /// Handles `<challenge/>` with its decoded payload (RFC 6120 §6.4.3).
    public mutating func challengeReceived(_ bytes: [UInt8]) -> Action {
        switch self.phase {
        case .scram(let mechanism, var scram):
            do throws(SASLError) {
                let response = try scram.challengeReceived(bytes)
                self.warnings = scram.warnings
                self.downgradeProtected = scram.downgradeProtected
                self.phase = .scram(mechanism, scram)
                return .sendResponse(response)
            } catch {
                self.warnings = scram.warnings
                return self.fail(error)
            }
        case .plain:
            return self.fail(.unexpectedEvent("challenge during PLAIN, which has no challenges (RFC 4616)"))
        case .idle:
            return self.fail(.unexpectedEvent("challenge before <auth/>"))
        case .succeeded:
            return self.fail(.unexpectedEvent("challenge after success"))
        case .failed(let error):
            return .failed(error)
        }
    }

    /// Handles `<success/>` with its decoded additional data (RFC 6120 §6.4.6).
    ///
    /// For SCRAM the additional data must carry the valid server signature
    /// unless a challenge already did.
    public mutating func successReceived(additionalData: [UInt8]) -> Action {
        switch self.phase {
        case .scram(let mechanism, var scram):
            do throws(SASLError) {
                try scram.successReceived(additionalData: additionalData)
                self.phase = .succeeded(mechanism)
                return .succeeded
            } catch {
                return self.fail(error)
            }
        case .plain:
            // RFC 4616 defines no additional data; anything present is ignored.
            self.phase = .succeeded(.plain)
            return .succeeded
        case .idle:
            return self.fail(.unexpectedEvent("success before <auth/>"))
        case .succeeded:
            return self.fail(.unexpectedEvent("success received twice"))
        case .failed(let error):
            return .failed(error)
        }
    }

    /// Handles `<failure/>` (RFC 6120 §6.4.5). A parser that finds no known
    /// condition should pass ``SASLFailureCondition/notAuthorized``.
    public mutating func failureReceived(condition: SASLFailureCondition, text: String?) -> Action {
        switch self.phase {
        case .idle, .plain, .scram:
            return self.fail(.failure(condition: condition, text: text))
        case .succeeded:
            return self.fail(.unexpectedEvent("failure after success"))
        case .failed(let error):
            return .failed(error)
        }
    }

    // MARK: - Private

    /// RFC 4616 §2: `message = [authzid] UTF8NUL authcid UTF8NUL passwd`, with
    /// no authorization identity.
    private mutating func startPLAIN() -> Action {
        let authcid: String
        do throws(SASLPrep.Violation) {
            authcid = try SASLPrep.prepare(self.username)
        } catch {
            return self.fail(.invalidUsername(error.description))
        }
        let passwd: String
        do throws(SASLPrep.Violation) {
            passwd = try SASLPrep.prepare(self.password)
        } catch {
            return self.fail(.invalidPassword)
        }
        self.phase = .plain
        let message = [0] + Array(authcid.utf8) + [0] + Array(passwd.utf8)
        return .sendAuth(mechanism: SASLMechanism.plain.rawValue, initialResponse: message)
    }

    private mutating func fail(_ error: SASLError) -> Action {
        self.phase = .failed(error)
        return .failed(error)
    }

    private static func isPlusMechanismName(_ name: String) -> Bool {
        name.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("-PLUS")
    }
}

extension SASLStateMachine: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A summary without credentials.
    public var description: String {
        "SASLStateMachine(state: \(self.state), warnings: \(self.warnings))"
    }

    public var debugDescription: String { self.description }

    /// Reflects only non-secret properties, so `dump()` cannot reveal the password.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["configuration": self.configuration, "state": self.state, "warnings": self.warnings],
            displayStyle: .struct
        )
    }
}
