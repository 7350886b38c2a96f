import Foundation
import Logging
import TestServers
import XMPP

/// When the integration tier runs: always under CI (a missing Prosody then fails the
/// run, it is never skipped), elsewhere only when Prosody is installed.
public enum IntegrationEnvironment {
    public static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"
    public static let enabled = isCI || ProsodyServer.missingPrerequisites().isEmpty
    /// The ejabberd tier (issue 13): under CI always (a missing ejabberd, or not being
    /// root, fails the run), elsewhere when ejabberd can be started here.
    public static let ejabberdEnabled = isCI || EjabberdServer.missingPrerequisites().isEmpty
    /// The PostgreSQL tier (issue 26): under CI always (a missing `postgresql` fails the
    /// run), elsewhere when its server is installed.
    public static let postgresEnabled = isCI || PostgresServer.missingPrerequisites().isEmpty
    /// The HTTP File Upload tier (XEP-0363): under CI always (a Prosody without
    /// `mod_http_file_share` then fails the run), elsewhere when the module is installed.
    public static let uploadEnabled = isCI || (enabled && ProsodyServer.hasModule("http_file_share"))

    public static func logger(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = ProcessInfo.processInfo.environment["TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        return logger
    }

    /// Client configuration for `user` on `server`, trusting its certificate.
    public static func configuration(
        _ user: String,
        on server: any TestXMPPServer,
        resource: String? = nil,
        tlsMode: TLSMode = .startTLS,
        trustFile: String? = nil
    ) throws -> XMPPClientConfiguration {
        let jid = try JID(localpart: user, domainpart: server.domain, resourcepart: resource)
        return XMPPClientConfiguration(
            jid: jid,
            tlsMode: tlsMode,
            tls: TLSConfiguration(additionalTrustRootsFile: trustFile ?? server.certificate?.certificateFile),
            host: "127.0.0.1",
            port: tlsMode == .directTLS ? server.directTLSPort : server.c2sPort,
            connectTimeout: .seconds(5),
            negotiationTimeout: .seconds(10)
        )
    }
}
