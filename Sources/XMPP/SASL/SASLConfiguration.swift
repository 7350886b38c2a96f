/// Which SASL mechanisms a client may use and under which conditions
/// (RFC 6120 §6.3.3, §13.8).
public struct SASLConfiguration: Hashable, Sendable {
    /// Mechanisms the client may use; by default all of ``SASLMechanism``.
    /// PLAIN is additionally restricted to TLS-protected streams unless
    /// ``allowPlainWithoutTLS`` is set.
    public var allowedMechanisms: Set<SASLMechanism>
    /// Permits PLAIN on an unencrypted stream, sending the password in the
    /// clear (RFC 4616 §6). Off by default; only for tests and trusted links.
    public var allowPlainWithoutTLS: Bool
    /// The highest SCRAM iteration count accepted from a server
    /// (RFC 5802 §5.1 `i`), bounding the PBKDF2 work a server can demand.
    public var maximumIterationCount: Int

    public init(
        allowedMechanisms: Set<SASLMechanism> = Set(SASLMechanism.allCases),
        allowPlainWithoutTLS: Bool = false,
        maximumIterationCount: Int = SCRAMStateMachine.defaultMaximumIterationCount
    ) {
        self.allowedMechanisms = allowedMechanisms
        self.allowPlainWithoutTLS = allowPlainWithoutTLS
        self.maximumIterationCount = maximumIterationCount
    }
}
