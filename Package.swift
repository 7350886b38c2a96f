// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "xmpp-bridge",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "xmpp-bridge", targets: ["BridgeCommand"]),
        .library(name: "XMPP", targets: ["XMPP"]),
        .library(name: "TransportCore", targets: ["TransportCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // HTTP ingress and the metrics listener. No traits: swift-configuration is not
        // needed, and only the Hummingbird product is used (never HummingbirdTLS, so
        // swift-nio-ssl is resolved but not built or linked: TLS is a reverse proxy's job).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        // System libraries: found through pkg-config, never vendored.
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // PostgreSQL's client library (issue 26): system OpenSSL for TLS, multi-host
        // connection strings with target_session_attrs for database failover.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // libomemo-c (issue 41): Dino's maintained fork of libsignal-protocol-c, the ratchet
        // and key agreement under OMEMO 0.3. GPL-3.0, hence the project's licence.
        .systemLibrary(
            name: "CLibOMEMO",
            pkgConfig: "libomemo-c",
            providers: [.apt(["libomemo-c-dev"])]
        ),
        // The commit a build was made from, as its build command says (`--version`).
        .target(name: "CBuildInfo"),
        // Function wrappers for C macros Swift cannot import (OpenSSL, resolver).
        .target(
            name: "CXMPPShims",
            dependencies: ["COpenSSL"],
            linkerSettings: [.linkedLibrary("resolv")]
        ),
        // The id an archive or a room gives a message (XEP-0359): the one type the XMPP
        // library, the core and the state share for it, below them all.
        .target(name: "StanzaIdentity"),
        // What an OMEMO device keeps (issue 41): its keys, the trust in contacts' identities,
        // the device lists it follows, as plain values the device and the state share.
        .target(name: "OMEMOState"),
        .target(
            name: "XMPP",
            dependencies: [
                "StanzaIdentity",
                "CLibXML2",
                "COpenSSL",
                "CXMPPShims",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What every transport and the relay share: deliveries, events, the Transport
        // protocol. No XMPP, no HTTP: the architecture's bottom layer.
        .target(
            name: "TransportCore",
            dependencies: [
                "StanzaIdentity",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The local archive's contract (issue 25): what the bridge keeps of relayed messages
        // and how it is read (ArchiveQuery, ArchivePage, ArchiveReading), for the HTTP
        // ingress and the command line above it and the state and relay that keep it.
        .target(
            name: "LocalArchive",
            dependencies: ["TransportCore"]
        ),
        // One target per transport, each above the core (and the XMPP library where it
        // speaks XMPP), none importing another but through XMPPMapping.
        // The bridge's terms as stanzas, shared by the XMPP account and the gateway.
        .target(
            name: "XMPPMapping",
            dependencies: ["TransportCore", "XMPP"]
        ),
        // OMEMO (XEP-0384 v0.3) on libomemo-c, its crypto on the system OpenSSL: what an
        // account that is an OMEMO device needs beside the XMPP library.
        .target(
            name: "OMEMO",
            dependencies: ["CLibOMEMO", "COpenSSL", "OMEMOState", "XMPP"]
        ),
        // An XMPP account (XMPPTransport): sessions, rooms, roster, uploads.
        .target(
            name: "AccountTransport",
            dependencies: [
                "StanzaIdentity",
                "TransportCore",
                "XMPP",
                "XMPPMapping",
                "OMEMO",
                "OMEMOState",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The local transports: stdin/stdout, FIFOs, the Unix socket; line input.
        .target(
            name: "LocalTransport",
            dependencies: [
                "TransportCore",
                "XMPP",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The HTTP ingress (Hummingbird): webhooks, Alertmanager, Grafana, /messages.
        .target(
            name: "HTTPIngress",
            dependencies: [
                "LocalArchive",
                "TransportCore",
                "XMPP",
                "LocalTransport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The gateway: an XMPP component (XEP-0114) whose puppets stand for contacts.
        .target(
            name: "GatewayComponent",
            dependencies: [
                "TransportCore",
                "XMPP",
                "XMPPMapping",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The bridge's state (issue 26 and before): the store protocol, its records and
        // their codecs, the SQLite and PostgreSQL backends, the intake log and stream
        // ledgers. Below the relay: it knows deliveries, not how they are routed, and no XMPP.
        .target(
            name: "BridgeState",
            dependencies: [
                "StanzaIdentity",
                "OMEMOState",
                "LocalArchive",
                "TransportCore",
                "CLibPQ",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Routing (issue 3 and later): the pure Router that maps a source to its channels'
        // members, rich-content relaying, filters and formats. Above the state (it reads a
        // relay record), below the relay pipeline.
        .target(
            name: "BridgeRouting",
            dependencies: ["BridgeState", "TransportCore", "XMPP"]
        ),
        // The relay (issue 4 and later): the journal and intake, the pipeline, delivery
        // queues and workers, and what the pipeline does itself today (paging, several
        // instances' leases and hand-overs, the local archive's writer). Above routing.
        .target(
            name: "BridgeRelay",
            dependencies: [
                "StanzaIdentity",
                "LocalArchive",
                "BridgeState",
                "BridgeRouting",
                "TransportCore",
                "XMPP",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Features beside the relay, given what they need (TransportCapabilities by
        // transport name): presence relaying and mirrors, roster mirrors, and the gateways'
        // coordination of puppets and linked accounts.
        .target(
            name: "BridgeFeatures",
            dependencies: [
                "BridgeState",
                "BridgeRouting",
                "TransportCore",
                "XMPP",
                "AccountTransport",
                "GatewayComponent",
                "LocalTransport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The bridge's application below its command line: the runtime, configuration,
        // control, metrics and health.
        .target(
            name: "Bridge",
            dependencies: [
                "LocalArchive",
                "BridgeRouting",
                "BridgeRelay",
                "BridgeFeatures",
                "BridgeState",
                "XMPP",
                "AccountTransport",
                "OMEMO",
                "OMEMOState",
                "LocalTransport",
                "HTTPIngress",
                "GatewayComponent",
                "TransportCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The `xmpp-bridge` executable: the command line only (and the fuzzing entry).
        .executableTarget(
            name: "BridgeCommand",
            dependencies: [
                "CBuildInfo",
                "LocalArchive",
                "Bridge",
                "BridgeRelay",
                "BridgeState",
                "XMPP",
                "TransportCore",
                "LocalTransport",
                "ThrowawayProsody",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // A throwaway Prosody on loopback: what `xmpp-bridge demo` runs against (and the
        // tests' Prosody). Foundation only.
        .target(
            name: "ThrowawayProsody",
            path: "Sources/ThrowawayProsody"
        ),
        // The test harness: the other servers the tests start (ejabberd, Alertmanager,
        // PostgreSQL) and what the tests read from them. Never linked into the daemon.
        .target(
            name: "TestServers",
            dependencies: ["ThrowawayProsody"],
            path: "Sources/TestServers"
        ),
        // Benchmarks (run in release: see docs/performance.md).
        .target(
            name: "CXMLBaseline",
            dependencies: ["CLibXML2"],
            path: "Benchmarks/CXMLBaseline"
        ),
        .executableTarget(
            name: "xml-stream-benchmark",
            dependencies: [
                "XMPP",
                "CXMLBaseline",
                "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/XMLStreamBenchmark"
        ),
        .executableTarget(
            name: "omemo-benchmark",
            dependencies: ["OMEMO", "OMEMOState", "XMPP"],
            path: "Benchmarks/OMEMOBenchmark"
        ),
        .executableTarget(
            name: "send-benchmark",
            dependencies: [
                "XMPP",
                "ThrowawayProsody",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/SendBenchmark"
        ),
        // Test helpers shared by test targets (a manual clock, a log recorder).
        .target(
            name: "TestSupport",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            path: "Sources/TestSupport"
        ),
        .testTarget(
            name: "OMEMOTests",
            dependencies: ["OMEMO", "OMEMOState", "CLibOMEMO", "XMPP"]
        ),
        .testTarget(
            name: "XMPPTests",
            dependencies: [
                "StanzaIdentity",
                "XMPP",
                "TestSupport",
                "TestServers",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "BridgeTests",
            dependencies: [
                "StanzaIdentity",
                "LocalArchive",
                "Bridge",
                "BridgeRouting",
                "BridgeRelay",
                "BridgeFeatures",
                "BridgeState",
                "BridgeCommand",
                "TestSupport",
                "TestServers",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                "XMPP",
                "AccountTransport",
                "HTTPIngress",
                "GatewayComponent",
                "TransportCore",
                "OMEMOState",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .testTarget(
            name: "TransportsTests",
            dependencies: [
                "StanzaIdentity",
                "XMPPMapping",
                "AccountTransport",
                "LocalTransport",
                "HTTPIngress",
                "GatewayComponent",
                "TransportCore",
                "XMPP",
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // What the integration suites share: a logged-in test client (`TestSession`) and
        // when each tier runs (`IntegrationEnvironment`).
        .target(
            name: "IntegrationSupport",
            dependencies: [
                "XMPP",
                "TestServers",
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/IntegrationSupport"
        ),
        // The XMPP library against real servers (login, session, keepalive, upload).
        .testTarget(
            name: "XMPPIntegrationTests",
            dependencies: [
                "XMPP",
                "TestServers",
                "TestSupport",
                "IntegrationSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The state layer against real database servers (issue 26: PostgreSQL through libpq).
        .testTarget(
            name: "StateIntegrationTests",
            dependencies: [
                "StanzaIdentity",
                "LocalArchive",
                "Bridge",
                "BridgeRelay",
                "BridgeState",
                "OMEMOState",
                "XMPP",
                "TransportCore",
                "TestServers",
                "TestSupport",
                "IntegrationSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The `xmpp-bridge` binary end to end: daemons, commands and real servers.
        .testTarget(
            name: "BridgeDaemonTests",
            dependencies: [
                "StanzaIdentity",
                "LocalArchive",
                "XMPP",
                "HTTPIngress",
                "XMPPMapping",
                "OMEMO",
                "TransportCore",
                "TestServers",
                "TestSupport",
                "IntegrationSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
