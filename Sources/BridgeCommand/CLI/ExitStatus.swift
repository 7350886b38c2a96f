import Bridge
import ArgumentParser
import XMPP

/// Exit codes, one per failure class, so scripts can tell them apart.
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    case configuration = 2
    case connect = 3
    case tls = 4
    case authentication = 5
    case invalidRecipient = 6
    case protocolError = 7
    case notDelivered = 8
    /// The bridge is starting (its state database is locked, its socket not up yet).
    case temporarilyUnavailable = 75

    static let helpText = """
        Exit status:
          0  success
          2  configuration or usage error
          3  DNS or connection failure
          4  TLS failure (certificate, handshake, STARTTLS not offered)
          5  authentication failure (or registration refused)
          6  invalid recipient (not a JID, or the server says it does not exist)
          7  protocol error (stream error, binding refused, invalid server XML)
          8  not taken: some message could not be sent, or the server refused it
         64  bad command-line usage
         75  the bridge is starting: try again (status, route, queue)
        """

    init(_ error: XMPPClientError) {
        switch error {
        case .configuration: self = .configuration
        case .resolutionFailed, .connectFailed, .closedByServer, .streamClosedByServer, .timedOut: self = .connect
        case .tlsNotOffered, .startTLSRefused, .tls: self = .tls
        case .authenticationFailed, .registrationFailed: self = .authentication
        case .bindFailed, .streamError, .invalidServerXML, .unexpectedElement: self = .protocolError
        }
    }

    var exitCode: ExitCode { ExitCode(self.rawValue) }
}
